/**
 * The `rag-answer` Lambda: POST /api/rag/answer (JSON, or Server-Sent Events with `stream: true`), and the
 * owner-scoped thread and feedback routes. Thin: validation, identity, one use case each.
 */
import type { AnswerResult, Answering } from '../core/answer/answer';
import type { ConversationStore, ThreadRecord } from '../core/answer/conversations';
import { createHarness } from '../core/answer/harness';
import { NotFoundError } from '../core/errors';
import {
  createHttpHandler,
  parseJsonBody,
  parseQuery,
  type HttpHandlerDeps,
} from '../http/http-handler';
import { SSE_HEADERS, sseEvent } from '../http/request-lifecycle';
import type { Admission } from '../core/limits/limiter';
import {
  answerRequestSchema,
  feedbackComment,
  feedbackRequestSchema,
  listThreadsQuerySchema,
  type AnswerRequestBody,
  type AnswerResponseBody,
} from './schema';
import * as z from '../core/zod';
import { chargeAnswer } from './charge';
import { CHAT_ROUTE, makeChatHandler } from './chat';
import { makeHarnessHandler } from './harness';

export { chargeAnswer };

/**
 * What `debug` shows a caller: the steps, the retrieved chunks (already in the caller's scope)
 * and the standalone query for anyone; the rendered prompt, which carries the tenant's system
 * prompt, for tenant admins only.
 */
export function debugFor(
  debug: AnswerResult['debug'],
  viewer: { readonly isAdmin: boolean },
): AnswerResult['debug'] {
  if (!debug || viewer.isAdmin) return debug;
  return { ...debug, prompt: null };
}

/** The API's JSON shape of an answer, as `viewer` may see it. */
function toResponseBody(
  r: AnswerResult,
  viewer: { readonly isAdmin: boolean },
): AnswerResponseBody {
  const debug = debugFor(r.debug, viewer);
  return {
    status: r.status,
    query_text: r.queryText,
    thread_id: r.threadId,
    message_id: r.messageId,
    profile: r.profile,
    answer: {
      text: r.answer.text,
      // Seed 001's pipeline always gates (toAnswerRequest: no greeting skip, retrieval failure
      // is an error), so the gate's level is set; a missing one reads as the refusal it would be.
      confidence: r.answer.confidence ?? 'low',
      model: r.answer.model,
      generated_at: r.answer.generatedAt,
    },
    citations: r.citations.map((c) => ({ ...c, meta: { ...c.meta }, sentences: [...c.sentences] })),
    context_used: {
      chunks_retrieved: r.contextUsed.chunksRetrieved,
      unique_sources: r.contextUsed.uniqueSources,
      avg_relevance: r.contextUsed.avgRelevance,
    },
    confidence_thresholds: { ...r.thresholds },
    usage: r.usage
      ? { input_tokens: r.usage.inputTokens, output_tokens: r.usage.outputTokens }
      : null,
    flags: r.flags,
    processing_time_ms: r.processingTimeMs,
    ...(debug ? { debug } : {}),
  };
}

function toAnswerRequest(body: AnswerRequestBody) {
  return {
    queryText: body.query_text,
    ...(body.thread_id ? { threadId: body.thread_id } : {}),
    ...(body.profile ? { profile: body.profile } : {}),
    ...(body.top_k ? { topK: body.top_k } : {}),
    filters: body.filters,
    useMemory: body.use_memory,
    memory: { limit: body.memory.limit, tokenBudget: body.memory.token_budget },
    maxTokens: body.options.max_tokens,
    temperature: body.options.temperature,
    debug: body.debug,
    // Seed 001's pipeline: every question is retrieved and gated, and a retrieval that fails is
    // an error (500, retryable) rather than an answer without context.
    greetings: false,
    onRetrievalFailure: 'fail' as const,
  };
}

/**
 * Seed 001's statuses when the LLM failed after retries: 503 when the provider throttled, 500
 * otherwise. The body is the error model and, beside it, the answer made of the retrieved
 * sources, so nothing retrieved is lost. Null when the LLM did not fail.
 */
function llmFailureResponse(
  r: AnswerResult,
  body: AnswerResponseBody,
): { status: number; body: unknown } | null {
  if (!r.llmFailure) return null;
  const throttled = r.llmFailure.throttled;
  return {
    status: throttled ? 503 : 500,
    body: {
      error: {
        code: throttled ? 'llm_throttled' : 'generation_failed',
        message: throttled
          ? 'The language model is throttling requests; the retrieved sources are included. Retry shortly.'
          : 'The language model failed; the retrieved sources are included.',
        retryable: true,
      },
      ...body,
    },
  };
}

/**
 * Whether a POST /api/rag/answer request asks for Server-Sent Events (`"stream": true` in its
 * body). A body that does not parse asks for nothing: the buffered handler reports it.
 */
export function asksForStream(event: { body?: string | null; isBase64Encoded?: boolean }): boolean {
  let raw: unknown;
  try {
    raw = parseJsonBody(event);
  } catch {
    return false;
  }
  return typeof raw === 'object' && raw !== null && (raw as { stream?: unknown }).stream === true;
}

/**
 * POST /api/rag/answer. With `stream: true` and no streaming transport (a buffered Lambda response),
 * the whole event stream is returned in one `text/event-stream` body; the local server and the
 * function URL stream the same events as they are produced (see `streamAnswer`).
 */
export function makeAnswerHandler(deps: HttpHandlerDeps & { answering: Answering }) {
  return createHttpHandler(
    deps,
    { route: 'answer', schema: answerRequestSchema },
    async ({ body, identity, admission }) => {
      if (!body.stream) {
        const result = await deps.answering.answer(identity, toAnswerRequest(body));
        chargeAnswer(result, admission);
        const response = toResponseBody(result, identity);
        return llmFailureResponse(result, response) ?? { body: response };
      }
      let events = '';
      await streamAnswer(
        deps.answering,
        identity,
        body,
        (chunk) => (events += chunk),
        undefined,
        admission,
      );
      return { body: events, raw: true, headers: { ...SSE_HEADERS } };
    },
  );
}

/** Streams POST /api/rag/answer as Server-Sent Events through `write`; errors become an `error` event. */
export async function streamAnswer(
  answering: Answering,
  identity: { tenantId: string; userId: string; isAdmin: boolean },
  body: AnswerRequestBody,
  write: (chunk: string) => void,
  signal?: AbortSignal,
  admission?: Pick<Admission, 'recordUsage' | 'waiveQuota'>,
): Promise<void> {
  const result = await answering.answer(identity, toAnswerRequest(body), {
    onDelta: (text) => write(sseEvent('delta', { text })),
    ...(signal ? { signal } : {}),
  });
  chargeAnswer(result, admission);
  write(sseEvent('done', toResponseBody(result, identity)));
}

const noBody = z.looseObject({});

/** A thread's fields as the thread routes show them. */
const threadFields = (t: ThreadRecord) => ({
  thread_id: t.id,
  title: t.title,
  status: t.status,
  created_at: t.createdAt.toISOString(),
  updated_at: t.updatedAt.toISOString(),
  message_count: t.messageCount,
  last_message_at: t.lastMessageAt.toISOString(),
});

function makeThreadHandlers(deps: HttpHandlerDeps & { conversations: ConversationStore }) {
  const { conversations } = deps;
  return {
    'threads.list': createHttpHandler(
      deps,
      { route: 'threads.list', schema: noBody },
      async ({ identity, query }) => {
        const q = parseQuery(listThreadsQuerySchema, query);
        const threads = await conversations.listThreads(identity, {
          limit: q.limit,
          includeArchived: q.include_archived === 'true',
        });
        return { body: { threads: threads.map(threadFields) } };
      },
    ),
    'threads.get': createHttpHandler(
      deps,
      { route: 'threads.get', schema: noBody },
      async ({ identity, pathParameters }) => {
        const id = pathParameters.id ?? '';
        const thread = await conversations.getThread(identity, id);
        if (!thread) throw new NotFoundError('No such thread');
        const messages = await conversations.messages(identity, id);
        return {
          body: {
            ...threadFields(thread),
            messages: messages.map((m) => ({
              message_id: m.id,
              role: m.role,
              content: m.content,
              created_at: m.createdAt.toISOString(),
              ...(m.role === 'assistant'
                ? {
                    profile: m.profile,
                    confidence: m.confidence,
                    avg_relevance: m.avgRelevance,
                    citations: m.citations,
                    model: m.modelId,
                    usage:
                      m.inputTokens === null
                        ? null
                        : { input_tokens: m.inputTokens, output_tokens: m.outputTokens },
                    latency_ms: m.latencyMs,
                    flags: m.flags,
                    feedback: m.feedback,
                  }
                : {}),
            })),
          },
        };
      },
    ),
    /** Soft deletion: the thread and its messages are gone from every read (decision 0142). */
    'threads.delete': createHttpHandler(
      deps,
      { route: 'threads.delete', schema: noBody },
      async ({ identity, pathParameters }) => {
        const deletedAt = await conversations.deleteThread(identity, pathParameters.id ?? '');
        if (!deletedAt) throw new NotFoundError('No such thread');
        return {
          status: 200,
          body: {
            thread_id: pathParameters.id,
            deleted: true,
            deleted_at: deletedAt.toISOString(),
          },
        };
      },
    ),
    feedback: createHttpHandler(
      deps,
      { route: 'feedback', schema: feedbackRequestSchema },
      async ({ identity, pathParameters, body }) => {
        const comment = feedbackComment(body);
        const ok = await conversations.setFeedback(
          identity,
          pathParameters.id ?? '',
          body.rating,
          comment,
        );
        if (!ok) throw new NotFoundError('No such message');
        return {
          body: {
            message_id: pathParameters.id,
            rating: body.rating,
            comment,
            feedback_text: comment,
          },
        };
      },
    ),
  };
}

/** Every route of the `rag-answer` function, by name (bound to paths by bindRoutes). */
export function answerRouteHandlers(
  deps: HttpHandlerDeps & { answering: Answering; conversations: ConversationStore },
) {
  return {
    answer: makeAnswerHandler(deps),
    [CHAT_ROUTE]: makeChatHandler(deps),
    ...makeThreadHandlers(deps),
    'admin.harness': makeHarnessHandler({
      ...deps,
      harness: createHarness({ answering: deps.answering }),
    }),
  };
}
