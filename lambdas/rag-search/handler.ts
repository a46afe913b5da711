/**
 * The `rag-search` Lambda: POST /api/rag/search (seed 001), ranked chunks with snippets and
 * citations. `score` is the score the ranking used (the reranker's relevance when it reordered
 * the hits, else the fused hybrid score), in [0, 1] and descending; `similarity` is the chunk's
 * cosine similarity to the query.
 */
import type { Search } from '../core/retrieval/search';
import { createHttpHandler, type HttpHandlerDeps } from '../http/http-handler';
import { searchRequestSchema, type SearchResponseBody } from './schema';

const SNIPPET_LENGTH = 200;

function makeHandler(deps: HttpHandlerDeps & { search: Search }) {
  return createHttpHandler(
    deps,
    { route: 'search', schema: searchRequestSchema },
    async ({ body, identity }) => {
      const started = performance.now();
      const clamp = (n: number) => Math.min(1, Math.max(0, n));
      const { hits, rerank } = await deps.search.search(identity, {
        queryText: body.query_text,
        topK: body.top_k,
        mode: body.mode,
        filters: body.filters,
        ...(body.min_score === undefined ? {} : { minScore: body.min_score }),
      });
      const response: SearchResponseBody = {
        status: 'success',
        query_text: body.query_text,
        results: hits
          .map((h) => ({ h, score: clamp(h.rerankScore ?? h.fusedScore) }))
          // Stable: the ranking's order, unless a reranker scored only some of the hits.
          .sort((a, b) => b.score - a.score)
          .map(({ h, score }, i) => ({
            chunk_id: h.chunkId,
            source_id: h.documentId,
            score: Math.round(score * 10000) / 10000,
            similarity: Math.round(h.score * 10000) / 10000,
            snippet: h.text.slice(0, SNIPPET_LENGTH),
            source_type: h.sourceType,
            source_title: h.title,
            source_uri: h.sourceUri,
            meta: { ...h.metadata },
            rank: i + 1,
            start_offset: h.startOffset,
            end_offset: h.endOffset,
          })),
        total_found: hits.length,
        processing_time_ms: Math.round(performance.now() - started),
        ...(rerank ? { rerank: { ...rerank } } : {}),
      };
      return { body: response };
    },
  );
}

/** Every route of the `rag-search` function, by name (bound to paths by bindRoutes). */
export function searchRouteHandlers(deps: HttpHandlerDeps & { search: Search }) {
  return { search: makeHandler(deps) };
}
