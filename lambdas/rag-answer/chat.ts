/**
 * Seed 003's chat route, POST /api/chat/conversations/{conversationId}/messages with
 * `{ "content" }`, as a thin adapter over the Answering use case: the conversation is a thread,
 * memory of the caller's similar past messages is on (5 messages, 2,000 tokens), and the answer
 * streams as the seed's events, `data: {"type":"chunk","text":...}` then
 * `data: {"type":"complete","messageId":...}`. Greetings, degradation when retrieval fails and
 * the owner check are the use case's own (lambdas/core/answer/answer.ts).
 */
import type { AnswerRequest, Answering } from '../core/answer/answer';
import { ValidationError } from '../core/errors';
import {
  createHttpHandler,
  createStreamingHandler,
  type EventStreamResponse,
  type HttpHandlerDeps,
  type HttpRequest,
} from '../http/http-handler';
import { admissionOf } from '../http/limits-middleware';
import {
  chatMessageRequestSchema,
  conversationIdSchema,
  type ChatEvent,
  type ChatMessageRequestBody,
} from './chat-schema';
import { chargeAnswer } from './charge';
import { DEFAULT_GENERATION_OPTIONS } from './schema';

/** The route's name in metrics and in the limiter (it draws on the answers quota). */
export const CHAT_ROUTE = 'chat-messages';

/** The seed's memory settings for this route: 5 similar past messages, 2,000 tokens at most. */
export const CHAT_MEMORY: AnswerRequest['memory'] = { limit: 5, tokenBudget: 2000 };

/** One event as the seed writes it: a `data:` line and no `event:` name. */
export function chatEvent(event: ChatEvent): string {
  return `data: ${JSON.stringify(event)}\n\n`;
}

/** The conversation id from the path: a thread id, so a UUID (422 naming the parameter otherwise). */
export function conversationIdOf(pathParameters: Readonly<Record<string, string | undefined>>) {
  const parsed = conversationIdSchema.safeParse(pathParameters.conversationId);
  if (!parsed.success) throw new ValidationError('conversationId: must be a UUID');
  return parsed.data;
}

/**
 * The chat message as an answer request: the conversation's thread (created on first use),
 * memory on, greetings answered without retrieval, retrieval failures degraded.
 */
export function toChatAnswerRequest(
  conversationId: string,
  body: ChatMessageRequestBody,
): AnswerRequest {
  return {
    queryText: body.content,
    threadId: conversationId,
    createMissingThread: true,
    filters: {},
    useMemory: true,
    memory: CHAT_MEMORY,
    // The seed's `shouldUseRAG` and its graceful degradation.
    greetings: true,
    onRetrievalFailure: 'degrade',
    maxTokens: DEFAULT_GENERATION_OPTIONS.max_tokens,
    temperature: DEFAULT_GENERATION_OPTIONS.temperature,
    debug: false,
  };
}

function chatRoute(
  answering: Answering,
): (req: HttpRequest<ChatMessageRequestBody>) => Promise<EventStreamResponse> {
  return async ({ body, identity, event, pathParameters }) => {
    const conversationId = conversationIdOf(pathParameters);
    return {
      events: async (emit, signal) => {
        const result = await answering.answer(identity, toChatAnswerRequest(conversationId, body), {
          onDelta: (text) => {
            if (text !== '') emit(chatEvent({ type: 'chunk', text }));
          },
          ...(signal ? { signal } : {}),
        });
        chargeAnswer(result, admissionOf(event));
        emit(chatEvent({ type: 'complete', messageId: result.messageId }));
      },
      errorEvent: ({ error }) => chatEvent({ type: 'error', error }),
    };
  };
}

/** The route as a buffered Lambda result: every event in one `text/event-stream` body. */
export function makeChatHandler(deps: HttpHandlerDeps & { answering: Answering }) {
  return createHttpHandler(
    deps,
    { route: CHAT_ROUTE, schema: chatMessageRequestSchema },
    chatRoute(deps.answering),
  );
}

/** The route through a streaming transport: each event as it is produced. */
export function makeChatStreamHandler(deps: HttpHandlerDeps & { answering: Answering }) {
  return createStreamingHandler(
    deps,
    { route: CHAT_ROUTE, schema: chatMessageRequestSchema },
    chatRoute(deps.answering),
  );
}
