/** Retrieval's vocabulary: who searches, what they ask for, what comes back, and the store port. */
import type { SearchFilters } from './filters';

export type SearchMode = 'hybrid' | 'vector' | 'keyword';

/** The caller's scope. Every read takes one; there is no unscoped query. */
export interface SearchScope {
  readonly tenantId: string;
  readonly userId: string;
  /** Tenants whose `global` documents everybody may read. */
  readonly globalTenants: readonly string[];
}

/** Fusion of the two arms: min-max normalised scores, `denseWeight` on the vector arm. */
export interface FusionSettings {
  readonly denseWeight: number;
  /** Candidates each arm contributes before fusion. */
  readonly candidates: number;
}

export interface SearchQuery {
  readonly text: string;
  readonly embedding: readonly number[];
  readonly topK: number;
  readonly mode: SearchMode;
  readonly filters: SearchFilters;
  readonly minScore: number;
  readonly maxChunksPerSource: number;
  /** Source types the tenant's policy allows (null: all). */
  readonly allowedSourceTypes: readonly string[] | null;
  readonly fusion: FusionSettings;
}

export interface SearchHit {
  readonly chunkId: string;
  readonly documentId: string;
  readonly chunkIndex: number;
  readonly text: string;
  /** Cosine similarity of the chunk to the query, clamped to [0, 1], whatever the mode. */
  readonly score: number;
  /** BM25 score of the keyword arm (0 when the chunk did not match a query term). */
  readonly keywordScore: number;
  /** Share of the question's terms (weighted by idf) that occur in the chunk, 0 to 1. */
  readonly keywordCoverage: number;
  /** The fused score the ranking used. */
  readonly fusedScore: number;
  readonly sourceType: string;
  readonly title: string | null;
  readonly sourceUri: string;
  readonly language: string;
  readonly metadata: Readonly<Record<string, unknown>>;
  readonly startOffset: number;
  readonly endOffset: number;
}

export interface TenantPolicy {
  readonly allowedSourceTypes: readonly string[] | null;
  readonly minScore: number | null;
  readonly maxChunksPerSource: number | null;
}

export interface SearchStore {
  search(scope: SearchScope, query: SearchQuery): Promise<SearchHit[]>;
  policy(tenantId: string): Promise<TenantPolicy>;
}
