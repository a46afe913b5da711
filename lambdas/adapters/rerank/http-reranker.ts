/**
 * Reranker on a Cohere-style `POST {baseUrl}/rerank` endpoint, the shape Cohere, Jina, vLLM,
 * LiteLLM and Infinity serve: `{ model, query, documents, top_n }` in, `{ results: [{ index,
 * relevance_score }] }` out. No retries: the rerank stage has a short timeout and falls back to
 * the fused order on any failure.
 */
import * as z from '../../core/zod';
import { ConfigError, UnavailableError } from '../../core/errors';
import type { Reranker } from '../../core/retrieval/rerank';
import { bearerHeader, type BearerKey } from '../secrets/bearer-key';

/** Options of {@link createHttpReranker}. */
export interface HttpRerankerOptions {
  /** Base URL up to the API version, e.g. `http://127.0.0.1:8000/v1`; `/rerank` is appended. */
  readonly baseUrl: string;
  /** The server's model name, e.g. `bge-reranker-v2-m3` or `rerank-v3.5`. */
  readonly model: string;
  /** Sent as `Authorization: Bearer <apiKey>` when set; a function reads it on first use. */
  readonly apiKey?: BearerKey;
}

/** The reply of `POST /rerank`; other fields (`id`, `meta`, `usage`, `document`) are not needed. */
const rerankResponseSchema = z.object({
  results: z.array(
    z.object({ index: z.int().check(z.nonnegative()), relevance_score: z.number() }),
  ),
});

/**
 * Creates a Reranker on a Cohere-style `/rerank` endpoint; `modelId` is `rerank/${model}`.
 * @throws ConfigError for an invalid base URL.
 */
export function createHttpReranker(options: HttpRerankerOptions): Reranker {
  let url: URL;
  try {
    url = new URL(`${options.baseUrl.replace(/\/+$/, '')}/rerank`);
  } catch {
    throw new ConfigError(`Rerank baseUrl is not a URL: ${JSON.stringify(options.baseUrl)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`Rerank baseUrl must be http or https, got ${url.protocol}`);
  }
  const label = `${options.model} at ${url.href}`;
  const authorization = bearerHeader(options.apiKey);
  return {
    modelId: `rerank/${options.model}`,
    async rerank(query, documents, { topN, signal }) {
      const response = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          ...(await authorization()),
        },
        body: JSON.stringify({ model: options.model, query, documents, top_n: topN }),
        signal,
      });
      const raw = await response.text();
      if (!response.ok) {
        throw new UnavailableError(
          `Reranker ${label} answered HTTP ${response.status}: ${raw.slice(0, 300)}`,
        );
      }
      let json: unknown;
      try {
        json = JSON.parse(raw);
      } catch (err) {
        throw new UnavailableError(`Reranker ${label} returned a reply that is not JSON`, err);
      }
      const parsed = rerankResponseSchema.safeParse(json);
      if (!parsed.success) {
        throw new UnavailableError(
          `Reranker ${label} returned a malformed reply: ${z.prettifyError(parsed.error)}`,
        );
      }
      return parsed.data.results.map((r) => ({ index: r.index, relevance: r.relevance_score }));
    },
  };
}
