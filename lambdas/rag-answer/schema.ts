/** POST /api/rag/answer and the thread and feedback routes: request and response contracts. */
import * as z from '../core/zod';
import { queryInteger } from '../http/query-params';
import { searchFiltersSchema } from '../core/retrieval/filters';

/** An integer moved into [min, max] rather than rejected when out of range. */
const clampedInt = (min: number, max: number) =>
  z.pipe(
    z.int(),
    z.transform((n: number) => Math.min(max, Math.max(min, n))),
  );

const memorySchema = z.strictObject({
  // Out-of-range values are clamped, not rejected: they are tuning hints.
  limit: z._default(clampedInt(1, 10), 5),
  token_budget: z._default(clampedInt(100, 4000), 1000),
});

/** Generation options when the caller gives none (POST /answer's `options`, and the chat route). */
export const DEFAULT_GENERATION_OPTIONS = { max_tokens: 1024, temperature: 0.2 } as const;

const optionsSchema = z.strictObject({
  max_tokens: z._default(
    z.int().check(z.gte(256), z.lte(2048)),
    DEFAULT_GENERATION_OPTIONS.max_tokens,
  ),
  temperature: z._default(
    z.number().check(z.gte(0), z.lte(1)),
    DEFAULT_GENERATION_OPTIONS.temperature,
  ),
});

export const answerRequestSchema = z.strictObject({
  query_text: z.string().check(z.trim(), z.minLength(1), z.maxLength(500)),
  thread_id: z.optional(z.uuid()),
  profile: z.optional(z.string().check(z.regex(/^[a-z][a-z0-9_-]{0,31}$/))),
  top_k: z._default(z.int().check(z.gte(1), z.lte(50)), 8),
  filters: z._default(searchFiltersSchema, {}),
  use_memory: z._default(z.boolean(), false),
  memory: z._default(memorySchema, { limit: 5, token_budget: 1000 }),
  options: z._default(optionsSchema, { ...DEFAULT_GENERATION_OPTIONS }),
  stream: z._default(z.boolean(), false),
  debug: z._default(z.boolean(), false),
});
export type AnswerRequestBody = z.infer<typeof answerRequestSchema>;

export const citationSchema = z.object({
  source_id: z.string(),
  source_type: z.string(),
  source_title: z.nullable(z.string()),
  source_uri: z.string(),
  snippet: z.string(),
  relevance_score: z.number(),
  meta: z.record(z.string(), z.unknown()),
  sentences: z.optional(z.array(z.object({ start: z.int(), end: z.int() }))),
  markers: z.optional(z.array(z.int())),
});

export const answerResponseSchema = z.object({
  status: z.enum(['success', 'insufficient_context']),
  query_text: z.string(),
  thread_id: z.string(),
  message_id: z.string(),
  profile: z.string(),
  answer: z.object({
    text: z.string(),
    confidence: z.enum(['high', 'medium', 'low']),
    model: z.nullable(z.string()),
    generated_at: z.string(),
  }),
  citations: z.array(citationSchema),
  context_used: z.object({
    chunks_retrieved: z.int(),
    unique_sources: z.int(),
    avg_relevance: z.number(),
  }),
  /** The confidence gate's thresholds in force (docs/confidence.md). */
  confidence_thresholds: z.object({ high: z.number(), medium: z.number() }),
  usage: z.nullable(z.object({ input_tokens: z.int(), output_tokens: z.int() })),
  flags: z.object({
    used_rag: z.boolean(),
    fallback_to_generic: z.boolean(),
    insufficient_context: z.boolean(),
    conversational: z.boolean(),
    retrieval_failed: z.boolean(),
  }),
  processing_time_ms: z.number(),
  debug: z.optional(z.unknown()),
});
export type AnswerResponseBody = z.infer<typeof answerResponseSchema>;

const feedbackText = z.string().check(z.maxLength(2000));

/**
 * A rating with an optional free-text comment. `feedback_text` (seed 000's name) is the same
 * comment under another name, stored in the one column; when both are sent, `comment` wins.
 */
export const feedbackRequestSchema = z.strictObject({
  rating: z.enum(['positive', 'negative', 'neutral']),
  comment: z.optional(feedbackText),
  feedback_text: z.optional(feedbackText),
});
export type FeedbackRequestBody = z.infer<typeof feedbackRequestSchema>;

/** The comment a feedback request carries: `comment`, else `feedback_text`, else none. */
export const feedbackComment = (body: FeedbackRequestBody): string | null =>
  body.comment ?? body.feedback_text ?? null;

export const listThreadsQuerySchema = z.strictObject({
  limit: z._default(queryInteger(1, 100), 20),
  include_archived: z._default(z.enum(['true', 'false']), 'false'),
});

/** A thread as the thread routes show it. */
const threadSummarySchema = z.object({
  thread_id: z.string(),
  title: z.string(),
  status: z.enum(['active', 'archived']),
  created_at: z.string(),
  updated_at: z.string(),
  /** Messages appended to the thread, questions and answers. */
  message_count: z.int(),
  /** When the latest message was appended (the creation time until then). */
  last_message_at: z.string(),
});

export const listThreadsResponseSchema = z.object({ threads: z.array(threadSummarySchema) });

/** A message of a thread; answers also carry how they were made and their feedback. */
const threadMessageSchema = z.object({
  message_id: z.string(),
  role: z.enum(['user', 'assistant']),
  content: z.string(),
  created_at: z.string(),
  // Assistant messages only:
  profile: z.optional(z.nullable(z.string())),
  confidence: z.optional(z.nullable(z.enum(['high', 'medium', 'low']))),
  avg_relevance: z.optional(z.nullable(z.number())),
  citations: z.optional(z.array(citationSchema)),
  model: z.optional(z.nullable(z.string())),
  usage: z.optional(
    z.nullable(z.object({ input_tokens: z.int(), output_tokens: z.nullable(z.int()) })),
  ),
  latency_ms: z.optional(z.nullable(z.number())),
  flags: z.optional(z.record(z.string(), z.boolean())),
  feedback: z.optional(
    z.nullable(z.object({ rating: z.string(), comment: z.nullable(z.string()) })),
  ),
});

export const threadResponseSchema = z.extend(threadSummarySchema, {
  messages: z.array(threadMessageSchema),
});

/** DELETE on a thread: a soft deletion (docs/decisions/0142-thread-counters-and-soft-deletion.md). */
export const deleteThreadResponseSchema = z.object({
  thread_id: z.string(),
  deleted: z.literal(true),
  deleted_at: z.string(),
});

export const messageFeedbackResponseSchema = z.object({
  message_id: z.string(),
  rating: z.enum(['positive', 'negative', 'neutral']),
  /** The stored comment, under both names. */
  comment: z.nullable(z.string()),
  feedback_text: z.nullable(z.string()),
});
