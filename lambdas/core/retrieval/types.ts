/** Retrieval's vocabulary: who searches, what they ask for, what comes back, and the store port. */
import type { MetadataEquals, SearchFilters } from './filters';
import type { SourceTypeMode } from './source-types';
import type { Reader } from '../visibility';

export type SearchMode = 'hybrid' | 'vector' | 'keyword';

/** The caller's scope: the reader every document read takes (core/visibility.ts). */
export type SearchScope = Reader;

/**
 * When the vector arm leads a hybrid query: its best candidate stands out (a cosine margin over
 * the runner-up) while the keyword arm's best match holds little of the question (an idf-weighted
 * share of its terms). Min-max normalisation scores a lone match on one common word as a perfect
 * keyword hit; this keeps such a match from outranking a clear semantic one. Per embedding model,
 * since margins depend on the model (docs/decisions/0106-dense-lead.md).
 */
interface DenseLead {
  /** The vector arm's best cosine exceeds its second best by at least this. */
  readonly minMargin: number;
  /** The keyword arm's best match covers less than this share of the question's idf. */
  readonly maxKeywordCoverage: number;
  /** The dense weight when both hold. */
  readonly denseWeight: number;
}

/** Fusion of the two arms: min-max normalised scores, `denseWeight` on the vector arm. */
export interface FusionSettings {
  readonly denseWeight: number;
  /** Candidates each arm contributes before fusion. */
  readonly candidates: number;
  /** Unset: `denseWeight` for every query. */
  readonly denseLead?: DenseLead;
}

export interface SearchQuery {
  readonly text: string;
  readonly embedding: readonly number[];
  readonly topK: number;
  readonly mode: SearchMode;
  readonly filters: SearchFilters;
  readonly minScore: number;
  readonly maxChunksPerSource: number;
  /** Source types the tenant's policy (narrowed by a profile) allows (null: all). */
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
  /** The reranker's relevance, when the rerank stage reordered the hits. */
  readonly rerankScore?: number;
  readonly sourceType: string;
  readonly title: string | null;
  readonly sourceUri: string;
  readonly language: string;
  readonly metadata: Readonly<Record<string, unknown>>;
  readonly startOffset: number;
  readonly endOffset: number;
  /**
   * The user the chunk's document belongs to: its owner (a private document, or one a sidecar
   * names an owner for), else the user who uploaded it through the API; null for documents no
   * user owns. Read by the owner-first ordering (owner-first.ts).
   */
  readonly ownerUserId?: string | null;
}

interface TenantPolicy {
  readonly allowedSourceTypes: readonly string[] | null;
  /** What a request for a type outside `allowedSourceTypes` gets (./source-types.ts). */
  readonly sourceTypeMode: SourceTypeMode;
  readonly minScore: number | null;
  readonly maxChunksPerSource: number | null;
}

/**
 * The size and make-up of a caller's scope (their tenant and the publishing tenants), which the
 * store plans its search with: which vector scan, whether the keyword arm may check documents
 * late, BM25's collection statistics. Read with the policy, a moment before the search runs.
 */
export interface ScopeStatistics {
  /** Chunks in the scope's tenants. */
  readonly chunks: number;
  /** Chunks in the whole store, every tenant. */
  readonly tableChunks: number;
  /** Mean chunk length in the scope, in lexemes (BM25's average document length). */
  readonly meanLength: number;
  /**
   * Chunks in the scope of documents that not every caller in it sees (private documents,
   * documents not indexed, a publishing tenant's unpublished ones); null when there are too many
   * such documents to count cheaply.
   */
  readonly restrictedChunks: number | null;
  /**
   * The metadata values with a filter index of their own, which a filter `equals` on one of them
   * is served by, with the chunks each one's index holds (an estimate); none when absent.
   */
  readonly filterIndexes?: readonly (MetadataEquals & { readonly chunks?: number })[];
}

/** What a search reads before it runs, in one round trip. */
export interface SearchPreparation {
  readonly policy: TenantPolicy;
  readonly statistics: ScopeStatistics;
}

export interface SearchStore {
  /** The tenant's policy and the scope's statistics. */
  prepare(scope: SearchScope): Promise<SearchPreparation>;
  /** The search, planned with statistics from `prepare` (they may be a moment old). */
  search(scope: SearchScope, query: SearchQuery, statistics: ScopeStatistics): Promise<SearchHit[]>;
}
