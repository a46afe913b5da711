/** POST /api/rag/search: the request and response contract (also the source of the OpenAPI document). */
import * as z from '../core/zod';
import { searchFiltersSchema } from '../core/retrieval/filters';

export const searchRequestSchema = z.strictObject({
  query_text: z.string().check(z.trim(), z.minLength(1), z.maxLength(500)),
  top_k: z._default(z.int().check(z.gte(1), z.lte(50)), 8),
  mode: z._default(z.enum(['hybrid', 'vector', 'keyword']), 'hybrid'),
  filters: z._default(searchFiltersSchema, {}),
  min_score: z.optional(z.number().check(z.gte(0), z.lte(1))),
});

const searchResultSchema = z.object({
  chunk_id: z.string(),
  source_id: z.string(),
  /** The score the ranking used, 0 to 1, descending. */
  score: z.number(),
  /** Cosine similarity of the chunk to the query, 0 to 1. */
  similarity: z.number(),
  snippet: z.string(),
  source_type: z.string(),
  source_title: z.nullable(z.string()),
  source_uri: z.string(),
  meta: z.record(z.string(), z.unknown()),
  rank: z.int(),
  start_offset: z.int(),
  end_offset: z.int(),
});

export const searchResponseSchema = z.object({
  status: z.literal('success'),
  query_text: z.string(),
  results: z.array(searchResultSchema),
  total_found: z.int(),
  processing_time_ms: z.number(),
  /**
   * The rerank stage, when one is configured: `applied`, or `failed` / `timed_out` when the
   * results are in fused order because the reranker did not answer in time.
   */
  rerank: z.optional(
    z.object({
      model: z.string(),
      status: z.enum(['applied', 'failed', 'timed_out']),
      candidates: z.int(),
      ms: z.number(),
    }),
  ),
});
export type SearchResponseBody = z.infer<typeof searchResponseSchema>;
