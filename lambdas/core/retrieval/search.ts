/**
 * The search use case: embed the question, apply the tenant's policy, run hybrid retrieval in
 * the caller's scope. Shared by POST /api/rag/search, POST /api/rag/answer and the eval command.
 */
import { classifyStoreError, errorCode, ForbiddenError, UnavailableError } from '../errors';
import type { Embedder, Log, MetricsSink } from '../ports';
import { DEFAULT_PUBLISHING_TENANTS } from '../visibility';
import { noMetrics, silentLog } from '../ports';
import type { SearchFilters } from './filters';
import {
  DEFAULT_RERANK_SETTINGS,
  rerankHits,
  type Reranker,
  type RerankOutcome,
  type RerankSettings,
} from './rerank';
import { ownerFirst } from './owner-first';
import { applySourceTypePolicy, type AppliedSourceTypes } from './source-types';
import type { FusionSettings, SearchHit, SearchMode, SearchScope, SearchStore } from './types';

/** How one embedding model's vectors are fused with BM25 (the candidate count is per request). */
type ModelFusion = Omit<FusionSettings, 'candidates'>;

export interface SearchSettings {
  /**
   * Fusion per embedding model id, tuned on training data (docs/retrieval.md, "Choosing and
   * evaluating an embedding model").
   */
  readonly fusionByModel: Readonly<Record<string, ModelFusion>>;
  readonly defaultDenseWeight: number;
  /** Candidates per arm before fusion (at least top_k). */
  readonly candidates: number;
  readonly defaultMinScore: number;
  readonly defaultMaxChunksPerSource: number;
  /** The publishing tenants (core/visibility.ts). */
  readonly globalTenants: readonly string[];
  /** The rerank stage, when a reranker is configured. */
  readonly rerank: RerankSettings;
}

export const DEFAULT_SEARCH_SETTINGS: SearchSettings = {
  fusionByModel: {
    // The weight is the best of a sweep on the SciFact train split, with SQuAD held out
    // (docs/decisions/0105-min-max-fusion-weight-per-model.md). The dense lead is what lets
    // hybrid match the vector arm on paraphrased questions without moving SciFact
    // (docs/decisions/0106-dense-lead.md).
    'local/use-lite-512': {
      denseWeight: 0.15,
      denseLead: { minMargin: 0.05, maxKeywordCoverage: 0.35, denseWeight: 0.8 },
    },
  },
  defaultDenseWeight: 0.5,
  // 50 per arm (or 4 top_k): within 0.001 of 100's nDCG@10 at top_k 10, and faster
  // (docs/decisions/0111-candidates-per-arm.md).
  candidates: 50,
  defaultMinScore: 0,
  defaultMaxChunksPerSource: 3,
  globalTenants: DEFAULT_PUBLISHING_TENANTS,
  rerank: DEFAULT_RERANK_SETTINGS,
};

export interface SearchRequest {
  readonly queryText: string;
  readonly topK: number;
  readonly mode: SearchMode;
  readonly filters: SearchFilters;
  readonly minScore?: number;
  /** Overrides the policy's per-source cap (the answer pipeline and eval use this). */
  readonly maxChunksPerSource?: number;
  /**
   * Source types a profile limits retrieval to, within the tenant's policy; unlike
   * `filters.source_type` (the caller's), never refused by a strict policy.
   */
  readonly narrowSourceTypes?: readonly string[];
  /**
   * Candidates ranked before the final `topK` are kept (at least `topK`): the pool the ordering
   * policies below choose from. Default: `topK`.
   */
  readonly candidates?: number;
  /** The caller's own documents first among the candidates (owner-first.ts). */
  readonly ownerFirst?: boolean;
}

export interface SearchResult {
  readonly hits: SearchHit[];
  readonly embedMs: number;
  readonly retrieveMs: number;
  /** What the rerank stage did; absent when no reranker is configured. */
  readonly rerank?: RerankOutcome;
  /** The tenant's source-type policy as this search applied it. */
  readonly sourceTypes?: AppliedSourceTypes;
}

export interface Search {
  search(
    identity: { tenantId: string; userId: string },
    request: SearchRequest,
  ): Promise<SearchResult>;
  /** Same, with a precomputed query vector (answer pipeline, memory). */
  searchWithEmbedding(
    identity: { tenantId: string; userId: string },
    request: SearchRequest,
    embedding: readonly number[],
  ): Promise<SearchResult>;
  /**
   * Refuses, before anything is written, filters that retrieval would refuse: another tenant's
   * `org_id`, a source type outside the tenant's strict policy (each a 403). A store that cannot be
   * reached is left to the retrieval, where the route's failure policy applies.
   */
  admit(identity: { tenantId: string; userId: string }, filters: SearchFilters): Promise<void>;
  readonly settings: SearchSettings;
  readonly embedder: Embedder;
}

/** 403 when the filters name a tenant (`org_id`) other than the caller's. */
function assertOwnTenant(identity: { tenantId: string }, filters: SearchFilters): void {
  if (filters.org_id !== undefined && filters.org_id !== identity.tenantId) {
    throw new ForbiddenError(`filters.org_id: you do not belong to tenant "${filters.org_id}"`);
  }
}

export function createSearch(deps: {
  store: SearchStore;
  embedder: Embedder;
  /** Optional rerank stage after fusion. */
  reranker?: Reranker | null;
  settings?: Partial<SearchSettings>;
  log?: Log;
  metrics?: MetricsSink;
}): Search {
  const settings: SearchSettings = { ...DEFAULT_SEARCH_SETTINGS, ...deps.settings };
  const log = deps.log ?? silentLog;
  const metrics = deps.metrics ?? noMetrics;
  const reranker = deps.reranker ?? null;
  // Per call: after a model switch the embedder's model changes (core/embedding/live-embedder.ts).
  const modelFusion = (): ModelFusion =>
    settings.fusionByModel[deps.embedder.modelId] ?? { denseWeight: settings.defaultDenseWeight };

  const scopeOf = (identity: { tenantId: string; userId: string }): SearchScope => ({
    tenantId: identity.tenantId,
    userId: identity.userId,
    globalTenants: settings.globalTenants,
  });

  async function searchWithEmbedding(
    identity: { tenantId: string; userId: string },
    request: SearchRequest,
    embedding: readonly number[],
    embedMs = 0,
  ): Promise<SearchResult> {
    assertOwnTenant(identity, request.filters);
    const scope = scopeOf(identity);
    const t0 = performance.now();
    // The pool the ordering policy chooses the final top_k from.
    const poolK = Math.max(request.topK, request.candidates ?? request.topK);
    const finish = (hits: SearchHit[]): SearchHit[] =>
      (request.ownerFirst ? ownerFirst(hits, identity.userId) : hits).slice(0, request.topK);
    try {
      const { policy, statistics } = await deps.store.prepare(scope);
      const sourceTypes = applySourceTypePolicy(
        { mode: policy.sourceTypeMode, allowedSourceTypes: policy.allowedSourceTypes },
        request.filters.source_type,
        request.narrowSourceTypes,
      );
      // With a reranker the store returns more fused hits, for it to choose the pool from.
      const storeTopK = reranker ? Math.max(poolK, settings.rerank.candidates) : poolK;
      const fusion: FusionSettings = {
        ...modelFusion(),
        candidates: Math.max(settings.candidates, request.topK * 4, storeTopK),
      };
      const hits = await deps.store.search(
        scope,
        {
          text: request.queryText,
          embedding,
          topK: storeTopK,
          mode: request.mode,
          filters: request.filters,
          minScore: Math.max(request.minScore ?? settings.defaultMinScore, policy.minScore ?? 0),
          maxChunksPerSource:
            request.maxChunksPerSource ??
            policy.maxChunksPerSource ??
            settings.defaultMaxChunksPerSource,
          allowedSourceTypes: sourceTypes.effective,
          fusion,
        },
        statistics,
      );
      const retrieveMs = performance.now() - t0;
      metrics.timing('RetrievalLatency', retrieveMs);
      if (!reranker) return { hits: finish(hits), embedMs, retrieveMs, sourceTypes };
      const reranked = await rerankHits(reranker, request.queryText, hits, poolK, settings.rerank, {
        log,
        metrics,
      });
      return {
        hits: finish(reranked.hits),
        embedMs,
        retrieveMs,
        rerank: reranked.outcome,
        sourceTypes,
      };
    } catch (err) {
      // The request's own values (a 4xx) are not an outage; a statement the server refused for
      // another reason is a bug (500); a store that cannot be reached is a retryable 503.
      const classified = classifyStoreError(err);
      if (classified && classified.status < 500) throw classified;
      log.error('retrieval failed', { err });
      metrics.count('RetrievalErrors');
      if (!classified && errorCode(err) !== undefined) throw err;
      throw new UnavailableError('The search index is unavailable; try again shortly.', err);
    }
  }

  return {
    settings,
    embedder: deps.embedder,
    searchWithEmbedding: (identity, request, embedding) =>
      searchWithEmbedding(identity, request, embedding),
    async admit(identity, filters) {
      assertOwnTenant(identity, filters);
      if (!filters.source_type?.length) return;
      const policy = await deps.store.prepare(scopeOf(identity)).then(
        (p) => p.policy,
        () => null,
      );
      if (policy) {
        applySourceTypePolicy(
          { mode: policy.sourceTypeMode, allowedSourceTypes: policy.allowedSourceTypes },
          filters.source_type,
        );
      }
    },
    async search(identity, request) {
      assertOwnTenant(identity, request.filters);
      const t0 = performance.now();
      let embedding: number[];
      try {
        [embedding = []] = await deps.embedder.embed([request.queryText], 'query');
      } catch (err) {
        log.error('query embedding failed', { err });
        metrics.count('EmbeddingErrors');
        throw new UnavailableError('The embedding model is unavailable; try again shortly.', err);
      }
      return searchWithEmbedding(identity, request, embedding, performance.now() - t0);
    },
  };
}
