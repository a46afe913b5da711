/**
 * Makes a follow-up ("and in 2019?") standalone before retrieval: with an LLM, by asking it to
 * rewrite the question from the thread's history; without one, by carrying the previous
 * question's key terms into a question that looks like a follow-up.
 */
import type { ChatMessage, LlmProvider } from './llm';
import { contentWords, questionTerms } from './text';

/** Opens like a continuation ("and in 2019?", "what about shoes?"). */
const CONTINUATION = /^(and|but|also|what about|how about|and what|or|then|so)\b/i;
/** Refers back to something named earlier in the thread. */
const REFERENCE = /\b(it|its|they|them|their|this|that|those|these|he|she|his|her|him)\b/i;

/**
 * True when the question needs its thread: it opens as a continuation, refers back with a
 * pronoun, or names no subject of its own (nothing but its interrogative frame and numbers:
 * "how long?", "in 2019?"). A question that names its subject ("How long do refunds take?") is
 * answered as asked, however short.
 */
export function looksLikeFollowUp(question: string): boolean {
  const q = question.trim();
  return CONTINUATION.test(q) || REFERENCE.test(q) || !questionTerms(q).some((w) => /\D/.test(w));
}

/** Without an LLM: the previous question's content words that the follow-up lacks, appended. */
export function carryKeyTerms(question: string, previousQuestion: string): string {
  const have = new Set(contentWords(question));
  const prevWords = previousQuestion.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  // A follow-up that names its own number or year ("and in 2019?") replaces the previous one.
  const hasNumber = /\d/.test(question);
  const carried = [
    ...new Set(
      prevWords.filter(
        (w) =>
          contentWords(w).length > 0 &&
          !have.has(contentWords(w)[0]!) &&
          !(hasNumber && /\d/.test(w)),
      ),
    ),
  ];
  return carried.length > 0 ? `${question.trim()} (${carried.join(' ')})` : question;
}

/**
 * How long the LLM may take to rewrite a follow-up before its key terms are carried instead: the
 * answer's own call follows, and both must fit in API Gateway's 29 s of a buffered route with
 * the deployment's 20 s answer deadline (docs/decisions/0156).
 */
const STANDALONE_TIMEOUT_MS = 5_000;

export async function makeStandalone(
  question: string,
  history: readonly ChatMessage[],
  llm: LlmProvider | null,
  timeoutMs = STANDALONE_TIMEOUT_MS,
): Promise<string> {
  const previous = [...history].reverse().find((m) => m.role === 'user');
  if (!previous || !looksLikeFollowUp(question)) return question;
  if (llm) {
    try {
      const transcript = history
        .slice(-6)
        .map((m) => `${m.role}: ${m.content}`)
        .join('\n');
      const out = await llm.generate({
        system:
          'Rewrite the last user question so that it can be understood without the conversation. ' +
          'Keep its meaning and language. Reply with the rewritten question only.',
        messages: [
          { role: 'user', content: `Conversation:\n${transcript}\n\nLast question: ${question}` },
        ],
        maxTokens: 128,
        temperature: 0,
        signal: AbortSignal.timeout(timeoutMs),
      });
      const rewritten = out.text.trim().split('\n')[0]?.trim() ?? '';
      if (rewritten.length > 0 && rewritten.length <= 1000) return rewritten;
    } catch {
      // Failed or too slow: fall back to carrying key terms.
    }
  }
  return carryKeyTerms(question, previous.content);
}
