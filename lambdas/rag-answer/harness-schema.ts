/** POST /api/admin/harness: request and response contracts (also the OpenAPI document's). */
import * as z from '../core/zod';
import { answerRequestSchema, citationSchema } from './schema';

/** The answer request's retrieval and prompt fields: what the preparation depends on. */
export const harnessRequestSchema = z.pick(answerRequestSchema, {
  query_text: true,
  profile: true,
  top_k: true,
  filters: true,
  options: true,
});

const sourceTypesSchema = z.object({
  mode: z.enum(['permissive', 'strict']),
  /** The tenant's allowlist; null: every type. */
  allowed: z.nullable(z.array(z.string())),
  /** The types retrieval was limited to (the allowlist narrowed by the profile); null: all. */
  effective: z.nullable(z.array(z.string())),
  /** Requested types the permissive policy left out. */
  dropped: z.array(z.string()),
});

const harnessChunkSchema = z.object({
  rank: z.int(),
  chunk_id: z.string(),
  document_id: z.string(),
  source_type: z.string(),
  source_title: z.nullable(z.string()),
  source_uri: z.string(),
  /** Cosine similarity to the query, in [0, 1]. */
  score: z.number(),
  /** The fused score the ranking used. */
  fused_score: z.number(),
  keyword_score: z.number(),
  keyword_coverage: z.number(),
  rerank_score: z.optional(z.number()),
  start_offset: z.int(),
  end_offset: z.int(),
  text: z.string(),
});

export const harnessResponseSchema = z.object({
  tenant_id: z.string(),
  query_text: z.string(),
  standalone_query: z.string(),
  profile: z.string(),
  source_types: z.nullable(sourceTypesSchema),
  retrieval_failed: z.boolean(),
  chunks: z.array(harnessChunkSchema),
  context_blocks: z.array(
    z.object({
      index: z.int(),
      source_id: z.string(),
      source_type: z.string(),
      source_title: z.nullable(z.string()),
      source_uri: z.string(),
      /** Best cosine among the source's chunks. */
      score: z.number(),
      tokens: z.int(),
      passages: z.array(
        z.object({
          start: z.int(),
          end: z.int(),
          chunk_ids: z.array(z.string()),
          text: z.string(),
        }),
      ),
    }),
  ),
  evidence: z.array(
    z.object({
      /** The `[n]` the prompt numbers the source with and an answer cites it by. */
      marker: z.string(),
      chunk_ids: z.array(z.string()),
      citation: citationSchema,
    }),
  ),
  confidence: z.object({
    level: z.nullable(z.enum(['high', 'medium', 'low'])),
    avg_relevance: z.number(),
    evidence_chunks: z.int(),
    /** The question's names that no source of the top 5 mentions: any makes the level `low`. */
    unmatched_names: z.array(z.string()),
  }),
  /** What the answer route does next: `generate`, `extract`, `insufficient_context`, ... */
  next_step: z.enum([
    'conversational',
    'generate_without_context',
    'insufficient_context',
    'extract',
    'generate',
  ]),
  prompt: z.object({
    system: z.string(),
    messages: z.array(z.object({ role: z.enum(['user', 'assistant']), content: z.string() })),
    /** System prompt and messages as one text: the preview. */
    rendered: z.string(),
  }),
});
export type HarnessResponseBody = z.infer<typeof harnessResponseSchema>;
