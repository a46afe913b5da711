/** Decides whether a message needs retrieval at all: greetings and very short messages do not. */

const GREETINGS = [
  'hi',
  'hello',
  'hey',
  'hiya',
  'yo',
  'good morning',
  'good afternoon',
  'good evening',
  'thanks',
  'thank you',
  'thx',
  'ty',
  'cheers',
  'bye',
  'goodbye',
  'ok',
  'okay',
  'great',
  'cool',
  'nice',
  'how are you',
  "what's up",
];

/** Messages shorter than this (after trimming) are answered conversationally. */
const MIN_RETRIEVAL_LENGTH = 10;

export function isConversational(message: string): boolean {
  const text = message
    .trim()
    .toLowerCase()
    .replace(/[!.?,;:]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (message.trim().length < MIN_RETRIEVAL_LENGTH) return true;
  return GREETINGS.some((g) => text === g || text === `${g} there` || text === `${g} groundwork`);
}

/** The reply to a conversational message (no retrieval, no LLM needed). */
export function conversationalReply(message: string): string {
  const text = message.trim().toLowerCase();
  if (/^(thanks|thank you|thx|ty|cheers)/.test(text))
    return "You're welcome. Ask me anything about your documents.";
  if (/^(bye|goodbye)/.test(text)) return 'Goodbye!';
  return 'Hello! Ask me a question about your documents and I will answer from them, with citations.';
}
