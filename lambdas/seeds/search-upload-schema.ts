/**
 * The contract of seed 004 (`GET /api/search?q=...[&rag=true]` and `POST /api/upload`), field
 * for field as the seed writes it: its `results`, `message` and `rag` object (`final_answer`,
 * `model`, `token_usage`, `retrieved_chunks`, `final_prompt`, `agent_steps`, `debug_logs`,
 * `rateLimit`). Also the source of the OpenAPI document for these routes.
 */
import * as z from '../core/zod';
import { documentDetailSchema } from '../documents/schema';

/** The longest `q` accepted, as `query_text` on POST /search. */
const MAX_QUERY_CHARS = 500;

/** `?q=` (required, 1 to 500 characters after trimming) and `?rag=true|false`; nothing else. */
export const seedSearchQuerySchema = z.strictObject({
  q: z.string().check(z.trim(), z.minLength(1), z.maxLength(MAX_QUERY_CHARS)),
  rag: z.optional(z.enum(['true', 'false'])),
});
export type SeedSearchQuery = z.infer<typeof seedSearchQuerySchema>;

/** One chunk, in the seed's `RetrievedChunk` shape. */
const retrievedChunkSchema = z.object({
  doc_id: z.string(),
  /** The file name of the document's object (the last segment of its key). */
  filename: z.string(),
  chunk_id: z.string(),
  text: z.string(),
  /** The chunk's cosine similarity to the query, in [0, 1]. */
  similarity: z.number(),
  start_offset: z.int(),
  end_offset: z.int(),
});

/** A result of the results-only search: a retrieved chunk with the seed's excerpt and match count. */
const seedSearchResultSchema = z.extend(retrievedChunkSchema, {
  /** The first 200 characters of the chunk. */
  excerpt: z.string(),
  /** Case-insensitive occurrences of `q` in the chunk's text. */
  matches: z.int(),
});

const agentStepSchema = z.object({
  type: z.enum(['thought', 'action', 'tool_result']),
  text: z.string(),
  tool: z.optional(z.string()),
  tool_input: z.optional(z.string()),
  tool_output: z.optional(z.string()),
});

const ragObjectSchema = z.object({
  query: z.string(),
  final_answer: z.string(),
  /** The model that wrote the answer: an LLM's id, `extractive`, or `none` (no model wrote it). */
  model: z.string(),
  /** The LLM's token counts; zeros when no LLM was called. */
  token_usage: z.object({
    prompt_tokens: z.int(),
    completion_tokens: z.int(),
    total_tokens: z.int(),
  }),
  retrieved_chunks: z.array(retrievedChunkSchema),
  /** The rendered prompt for a tenant admin; an empty string for anyone else. */
  final_prompt: z.string(),
  agent_steps: z.array(agentStepSchema),
  debug_logs: z.array(z.string()),
  /**
   * The caller's monthly answer quota after this request: `limit` and `remaining` are `null`
   * for an unlimited plan (and `remaining` when the limits store could not be read).
   */
  rateLimit: z.nullable(
    z.object({
      limit: z.nullable(z.int()),
      remaining: z.nullable(z.int()),
      resetDate: z.string(),
    }),
  ),
});
export type RagObject = z.infer<typeof ragObjectSchema>;

export const seedSearchResponseSchema = z.object({
  /** Ranked results; empty with `rag=true`, whose chunks are `rag.retrieved_chunks`. */
  results: z.array(seedSearchResultSchema),
  /** Present when there are no results: `No results found for '<q>'`. */
  message: z.optional(z.string()),
  rag: z.optional(ragObjectSchema),
});
export type SeedSearchResponse = z.infer<typeof seedSearchResponseSchema>;

/** The form field the file comes in (`curl -F "file=@test.txt"`). */
export const UPLOAD_FIELD = 'file';

export const seedUploadResponseSchema = z.object({
  /** The file name as the client sent it. */
  filename: z.string(),
  /** The document, queued for indexing (GET /api/documents/{id} follows it to `indexed`). */
  document: documentDetailSchema,
});
export type SeedUploadResponse = z.infer<typeof seedUploadResponseSchema>;
