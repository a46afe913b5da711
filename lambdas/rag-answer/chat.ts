/**
 * Seed 003's chat route, POST /api/chat/conversations/{conversationId}/messages with
 * `{ "content" }`, as a thin adapter over the Answering use case: the conversation is a thread,
 * memory of the caller's similar past messages is on (5 messages, 2,000 tokens), and the answer
 * streams as the seed's events, `data: {"type":"chunk","text":...}` then
 * `data: {"type":"complete","messageId":...}`. Greetings, degradation when retrieval fails and
 * the owner check are the use case's own (lambdas/core/answer/answer.ts).
 */
import { createHash } from 'node:crypto';
import type { AnswerRequest, Answering } from '../core/answer/answer';
import type { Owner } from '../core/answer/conversations';
import { ValidationError, type ErrorBody } from '../core/errors';
import type { Admission } from '../core/limits/limiter';
import { createHttpHandler, type HttpHandlerDeps } from '../http/http-handler';
import type { Identity } from '../http/identity';
import {
  runStreamedRequest,
  SSE_HEADERS,
  type EventStream,
  type RequestEvent,
} from '../http/request-lifecycle';
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
const CHAT_MEMORY: AnswerRequest['memory'] = { limit: 5, tokenBudget: 2000 };

/** One event as the seed writes it: a `data:` line and no `event:` name. */
function chatEvent(event: ChatEvent): string {
  return `data: ${JSON.stringify(event)}\n\n`;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** A version 5 UUID: the kind {@link ownConversationThread} derives. */
const UUID_V5 = /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

/**
 * The caller's thread for a conversation id of the client's own: a name-based UUID (RFC 9562
 * version 5) of the tenant, the user and the id, so the same id always reaches the same thread
 * and two users' `abc-123` never meet.
 */
function ownConversationThread(owner: Owner, conversationId: string): string {
  const hash = createHash('sha1')
    .update(`groundwork-conversation\n${owner.tenantId}\n${owner.userId}\n${conversationId}`)
    .digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50; // version 5
  hash[8] = (hash[8]! & 0x3f) | 0x80; // RFC 9562 variant
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * The thread of the conversation the path names, as the answer request's `threadId` and
 * `missingThread`. A conversation id names a thread of the caller's own: the caller's thread with
 * that id continues; a UUID no thread has yet starts one with that id; anything else reaches the
 * caller's thread {@link ownConversationThread}, derived from the id. So a UUID another owner has
 * reaches the caller's derived thread rather than a 404, and an id every client uses (the nil
 * UUID) works for each of them. A version 5 UUID is never created under its own id, since anyone
 * can derive another user's thread id and would otherwise take it first
 * (docs/decisions/0155-conversation-ids-cannot-be-claimed.md). 422 naming the parameter for
 * anything that is not a conversation id.
 */
function conversationThreadOf(
  pathParameters: Readonly<Record<string, string | undefined>>,
  owner: Owner,
): Pick<AnswerRequest, 'threadId' | 'missingThread'> {
  const parsed = conversationIdSchema.safeParse(pathParameters.conversationId);
  if (!parsed.success) {
    throw new ValidationError(
      'conversationId: a UUID, or 1 to 128 letters, digits, ".", "_", ":" or "-"',
    );
  }
  const id = UUID.test(parsed.data) ? parsed.data.toLowerCase() : null;
  if (id === null) {
    const own = ownConversationThread(owner, parsed.data);
    return { threadId: own, missingThread: { createAs: [own] } };
  }
  const own = ownConversationThread(owner, id);
  return { threadId: id, missingThread: { createAs: UUID_V5.test(id) ? [own] : [id, own] } };
}

/**
 * The chat message as an answer request: the conversation's thread (created on first use),
 * memory on, greetings answered without retrieval, retrieval failures degraded.
 */
function toChatAnswerRequest(
  thread: Pick<AnswerRequest, 'threadId' | 'missingThread'>,
  body: ChatMessageRequestBody,
): AnswerRequest {
  return {
    queryText: body.content,
    ...thread,
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

/**
 * Writes the seed's events for one chat message: a `chunk` per piece of answer text, then
 * `complete` with the stored answer's id.
 */
async function chatEvents(
  answering: Answering,
  identity: Owner & { readonly isAdmin: boolean },
  thread: Pick<AnswerRequest, 'threadId' | 'missingThread'>,
  body: ChatMessageRequestBody,
  write: (chunk: string) => void,
  admission: Pick<Admission, 'recordUsage' | 'waiveQuota'> | undefined,
  signal?: AbortSignal,
): Promise<void> {
  const result = await answering.answer(identity, toChatAnswerRequest(thread, body), {
    onDelta: (text) => {
      if (text !== '') write(chatEvent({ type: 'chunk', text }));
    },
    ...(signal ? { signal } : {}),
  });
  chargeAnswer(result, admission);
  write(chatEvent({ type: 'complete', messageId: result.messageId }));
}

/** The seed-shaped event for an error after the first event (the status line is already sent). */
const chatErrorEvent = ({ error }: ErrorBody): string => chatEvent({ type: 'error', error });

/**
 * The route as a buffered Lambda result (a transport that buffers responses): every event in one
 * `text/event-stream` body; an error is the error model with its status.
 */
export function makeChatHandler(deps: HttpHandlerDeps & { answering: Answering }) {
  return createHttpHandler(
    deps,
    { route: CHAT_ROUTE, schema: chatMessageRequestSchema },
    async ({ body, identity, pathParameters, admission }) => {
      const thread = conversationThreadOf(pathParameters, identity);
      let events = '';
      await chatEvents(
        deps.answering,
        identity,
        thread,
        body,
        (chunk) => (events += chunk),
        admission,
      );
      return { body: events, raw: true, headers: { ...SSE_HEADERS } };
    },
  );
}

/**
 * The route on a streaming transport (the local server, the response-streaming Lambda): each
 * event as it is produced, through the same request lifecycle. `identify` is the transport's
 * own check of the caller, where it has one.
 */
export function streamChat<E extends RequestEvent>(
  deps: HttpHandlerDeps & { answering: Answering },
  event: E,
  stream: EventStream,
  options: { readonly identify?: (event: E) => Identity; readonly signal?: AbortSignal } = {},
): Promise<number> {
  return runStreamedRequest(
    deps,
    {
      route: CHAT_ROUTE,
      schema: chatMessageRequestSchema,
      errorEvent: chatErrorEvent,
      ...(options.identify ? { identify: options.identify } : {}),
    },
    event,
    stream,
    ({ body, identity, pathParameters, admission }, write) =>
      chatEvents(
        deps.answering,
        identity,
        conversationThreadOf(pathParameters, identity),
        body,
        write,
        admission,
        options.signal,
      ),
  );
}
