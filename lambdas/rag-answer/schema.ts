/** POST /answer and the thread and feedback routes: request and response contracts. */
import * as z from 'zod';
import { filterDepth, searchFiltersSchema } from '../core/retrieval/filters';

export const answerRequestSchema = z
  .object({
    query_text: z.string().trim().min(1).max(4000),
    thread_id: z.uuid().optional(),
    profile: z
      .string()
      .regex(/^[a-z][a-z0-9_-]{0,31}$/)
      .optional(),
    top_k: z.number().int().min(1).max(50).optional(),
    filters: searchFiltersSchema.default({}),
    use_memory: z.boolean().default(false),
    memory: z
      .object({
        // Out-of-range values are clamped, not rejected: they are tuning hints.
        limit: z
          .number()
          .int()
          .transform((n) => Math.min(10, Math.max(1, n)))
          .default(5),
        token_budget: z
          .number()
          .int()
          .transform((n) => Math.min(4000, Math.max(100, n)))
          .default(1000),
      })
      .strict()
      .default({ limit: 5, token_budget: 1000 }),
    options: z
      .object({
        max_tokens: z.number().int().min(256).max(2048).default(1024),
        temperature: z.number().min(0).max(1).default(0.2),
      })
      .strict()
      .default({ max_tokens: 1024, temperature: 0.2 }),
    stream: z.boolean().default(false),
    debug: z.boolean().default(false),
  })
  .strict()
  .refine((r) => !r.filters.metadata || filterDepth(r.filters.metadata) <= 5, {
    message: 'metadata filters nest at most 5 levels deep',
    path: ['filters', 'metadata'],
  });
export type AnswerRequestBody = z.infer<typeof answerRequestSchema>;

export const citationSchema = z.object({
  source_id: z.string(),
  source_type: z.string(),
  source_title: z.string().nullable(),
  source_uri: z.string(),
  snippet: z.string(),
  relevance_score: z.number(),
  meta: z.record(z.string(), z.unknown()),
  sentences: z.array(z.object({ start: z.number().int(), end: z.number().int() })).optional(),
});

export const answerResponseSchema = z.object({
  status: z.enum(['success', 'insufficient_context']),
  query_text: z.string(),
  thread_id: z.string(),
  message_id: z.string(),
  profile: z.string(),
  answer: z.object({
    text: z.string(),
    confidence: z.enum(['high', 'medium', 'low']).nullable(),
    model: z.string(),
    generated_at: z.string(),
  }),
  citations: z.array(citationSchema),
  context_used: z.object({
    chunks_retrieved: z.number().int(),
    unique_sources: z.number().int(),
    avg_relevance: z.number(),
  }),
  usage: z.object({ input_tokens: z.number().int(), output_tokens: z.number().int() }).nullable(),
  flags: z.object({
    used_rag: z.boolean(),
    fallback_to_generic: z.boolean(),
    insufficient_context: z.boolean(),
    conversational: z.boolean(),
    retrieval_failed: z.boolean(),
  }),
  processing_time_ms: z.number(),
  debug: z.unknown().optional(),
});
export type AnswerResponseBody = z.infer<typeof answerResponseSchema>;

export const feedbackRequestSchema = z
  .object({
    rating: z.enum(['positive', 'negative', 'neutral']),
    comment: z.string().max(2000).optional(),
  })
  .strict();

export const listThreadsQuerySchema = z
  .object({
    limit: z.coerce.number().int().min(1).max(100).default(20),
    include_archived: z.enum(['true', 'false']).default('false'),
  })
  .strict();
