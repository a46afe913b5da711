/** The `rag-search` Lambda: POST /search, ranked chunks with snippets and citations. */
import type { Search } from '../core/retrieval/search';
import { createHttpHandler, type HttpHandlerDeps } from '../http/http-handler';
import { searchRequestSchema, type SearchResponseBody } from './schema';

export const SNIPPET_LENGTH = 200;

export function makeHandler(deps: HttpHandlerDeps & { search: Search }) {
  return createHttpHandler(
    deps,
    { route: 'search', schema: searchRequestSchema },
    async ({ body, identity }) => {
      const started = performance.now();
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
        results: hits.map((h, i) => ({
          chunk_id: h.chunkId,
          source_id: h.documentId,
          score: Math.round(h.score * 10000) / 10000,
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
