/**
 * POST /api/admin/harness (tenant admins only, their own tenant): the answer's preparation for a
 * question, as JSON, without calling the LLM (core/answer/harness.ts). Thin: validation, identity,
 * one use case.
 */
import type { PreparedAnswer } from '../core/answer/answer';
import type { Harness } from '../core/answer/harness';
import { createHttpHandler, type HttpHandlerDeps } from '../http/http-handler';
import { harnessRequestSchema, type HarnessResponseBody } from './harness-schema';

const round = (x: number) => Math.round(x * 10000) / 10000;

/** The API's JSON shape of a preparation. */
function toHarnessBody(tenantId: string, p: PreparedAnswer): HarnessResponseBody {
  return {
    tenant_id: tenantId,
    query_text: p.question,
    standalone_query: p.standaloneQuery,
    profile: p.profile.profile,
    source_types: p.sourceTypes
      ? {
          mode: p.sourceTypes.mode,
          allowed: p.sourceTypes.allowed ? [...p.sourceTypes.allowed] : null,
          effective: p.sourceTypes.effective ? [...p.sourceTypes.effective] : null,
          dropped: [...p.sourceTypes.dropped],
        }
      : null,
    retrieval_failed: p.retrievalFailed,
    chunks: p.hits.map((h, i) => ({
      rank: i + 1,
      chunk_id: h.chunkId,
      document_id: h.documentId,
      source_type: h.sourceType,
      source_title: h.title,
      source_uri: h.sourceUri,
      score: round(h.score),
      fused_score: round(h.fusedScore),
      keyword_score: round(h.keywordScore),
      keyword_coverage: round(h.keywordCoverage),
      ...(h.rerankScore === undefined ? {} : { rerank_score: round(h.rerankScore) }),
      start_offset: h.startOffset,
      end_offset: h.endOffset,
      text: h.text,
    })),
    context_blocks: p.blocks.map((b) => ({
      index: b.index,
      source_id: b.documentId,
      source_type: b.sourceType,
      source_title: b.title,
      source_uri: b.sourceUri,
      score: round(b.score),
      tokens: b.tokens,
      passages: b.passages.map((x) => ({
        start: x.start,
        end: x.end,
        chunk_ids: [...x.chunkIds],
        text: x.text,
      })),
    })),
    evidence: p.evidence.map((e) => ({
      marker: e.marker,
      chunk_ids: [...e.chunkIds],
      citation: { ...e.citation, meta: { ...e.citation.meta }, sentences: [] },
    })),
    confidence: {
      level: p.confidence,
      avg_relevance: round(p.gate.avgRelevance),
      evidence_chunks: p.gate.evidenceChunks,
      unmatched_names: [...p.gate.unmatchedNames],
    },
    next_step: p.next,
    prompt: {
      system: p.prompt.system,
      messages: p.prompt.messages.map((m) => ({ role: m.role, content: m.content })),
      rendered: p.prompt.rendered,
    },
  };
}

export function makeHarnessHandler(deps: HttpHandlerDeps & { harness: Harness }) {
  return createHttpHandler(
    deps,
    { route: 'admin.harness', schema: harnessRequestSchema },
    async ({ body, identity }) => {
      const prepared = await deps.harness.run(identity, {
        queryText: body.query_text,
        ...(body.profile ? { profile: body.profile } : {}),
        ...(body.top_k ? { topK: body.top_k } : {}),
        filters: body.filters,
        maxTokens: body.options.max_tokens,
        temperature: body.options.temperature,
      });
      return { body: toHarnessBody(identity.tenantId, prepared) };
    },
  );
}
