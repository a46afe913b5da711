/** POST /search: the request and response contract (also the source of the OpenAPI document). */
import * as z from 'zod';
import { searchFiltersSchema, filterDepth } from '../core/retrieval/filters';

export const searchRequestSchema = z
  .object({
    query_text: z.string().trim().min(1).max(500),
    top_k: z.number().int().min(1).max(50).default(8),
    mode: z.enum(['hybrid', 'vector', 'keyword']).default('hybrid'),
    filters: searchFiltersSchema.default({}),
    min_score: z.number().min(0).max(1).optional(),
  })
  .strict()
  .refine((r) => !r.filters.metadata || filterDepth(r.filters.metadata) <= 5, {
    message: 'metadata filters nest at most 5 levels deep',
    path: ['filters', 'metadata'],
  });
export type SearchRequestBody = z.infer<typeof searchRequestSchema>;

export const searchResultSchema = z.object({
  chunk_id: z.string(),
  source_id: z.string(),
  score: z.number(),
  snippet: z.string(),
  source_type: z.string(),
  source_title: z.string().nullable(),
  source_uri: z.string(),
  meta: z.record(z.string(), z.unknown()),
  rank: z.number().int(),
  start_offset: z.number().int(),
  end_offset: z.number().int(),
});

export const searchResponseSchema = z.object({
  status: z.literal('success'),
  query_text: z.string(),
  results: z.array(searchResultSchema),
  total_found: z.number().int(),
  processing_time_ms: z.number(),
});
export type SearchResponseBody = z.infer<typeof searchResponseSchema>;
