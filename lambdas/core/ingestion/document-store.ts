/**
 * The ingestion pipeline's view of the index: what it reads to decide whether work is needed,
 * and the atomic writes it makes. Implemented in `adapters/postgres/document-repository.ts`.
 */

export type DocumentStatus = 'queued' | 'processing' | 'indexed' | 'failed' | 'deleted';
export type Visibility = 'user' | 'tenant' | 'global';

/** Attributes of a document, from the object key and its metadata sidecar. */
export interface DocumentAttributes {
  readonly tenantId: string;
  readonly sourceUri: string;
  readonly title: string | null;
  readonly sourceType: string;
  readonly language: string;
  readonly ownerUserId: string | null;
  readonly visibility: Visibility;
  /** Custom attributes (filterable); never contains the reserved attributes above. */
  readonly metadata: Readonly<Record<string, unknown>>;
  readonly sourceUpdatedAt: Date | null;
}

/** What the store knows of a document already. */
export interface StoredDocument {
  readonly id: string;
  readonly status: DocumentStatus;
  readonly contentHash: string | null;
  readonly embeddingModel: string | null;
  /** The version of the ingestion code that indexed it (version.ts); 0 before versions. */
  readonly ingestionVersion: number;
  readonly attributesHash: string | null;
  readonly sourceUpdatedAt: Date | null;
  readonly chunkCount: number;
  readonly failureReason: string | null;
  /**
   * Announced through the documents API (POST /api/documents, POST /api/upload), under a key of
   * its own that no other upload reuses.
   */
  readonly reserved: boolean;
}

/** What the start-up reconciliation compares with the bucket (one row per source object). */
export interface SourceState {
  readonly tenantId: string;
  readonly sourceUri: string;
  readonly status: DocumentStatus;
  readonly failureReason: string | null;
  readonly sourceUpdatedAt: Date | null;
  readonly updatedAt: Date;
  /** The version of the ingestion code that indexed it (version.ts); 0 before versions. */
  readonly ingestionVersion: number;
  /** Attempts to index it again for a newer version since it was last indexed. */
  readonly reindexAttempts: number;
  /** Announced through POST /api/documents (a `queued` row may be waiting for its file). */
  readonly reserved: boolean;
}

/** A `processing` document whose lease ran out, claimed by one sweep. */
interface ExpiredLease {
  readonly tenantId: string;
  readonly sourceUri: string;
  /** How often its lease has run out since it was last indexed, this time included. */
  readonly expiries: number;
}

/**
 * How long a `processing` document may go without its lease being renewed (at the start of
 * processing and with each progress report) before it counts as abandoned: longer than the
 * ingest function's timeout, shorter than an operator's patience.
 */
export const DEFAULT_PROCESSING_LEASE_SECONDS = 900;

/** Progress of a document being processed. */
interface IngestionProgress {
  readonly stage: 'embedding';
  readonly chunks_total: number;
  readonly chunks_embedded: number;
}

/** A chunk ready to be written, with its vector. */
export interface ChunkRecord {
  readonly index: number;
  readonly text: string;
  readonly start: number;
  readonly end: number;
  readonly tokenCount: number;
  readonly embedding: readonly number[];
  readonly metadata: Readonly<Record<string, unknown>>;
}

/**
 * Whether the object a write comes from is still the bucket's current version: neither deleted
 * nor replaced since it was read. The store asks while it holds the document's row, so that a
 * deletion or a newer version recorded meanwhile is never overwritten by a slower worker, even
 * when both versions carry the same second as their date.
 */
export type StillCurrent = () => Promise<boolean>;

export interface DocumentStore {
  find(tenantId: string, sourceUri: string): Promise<StoredDocument | null>;
  /**
   * Marks the document as being processed (creating its row if needed) and takes its lease;
   * returns its id.
   */
  markProcessing(attrs: DocumentAttributes): Promise<string>;
  /**
   * Replaces the document's chunks in one transaction, so a reader never sees a half-indexed
   * document, and marks it indexed. Skips the write (returns false) when the stored copy is
   * newer than `attrs.sourceUpdatedAt`, or when `stillCurrent` answers false, so a slow, stale
   * worker cannot overwrite fresh content or bring back a deleted document. Writes nothing
   * either, and names it in `duplicateOf`, when another document of the same scope holding the
   * same content was indexed meanwhile ({@link findDuplicate}, asked again while writes of the
   * same content wait for each other), so that copies indexed at once are indexed once.
   */
  replaceChunks(
    attrs: DocumentAttributes,
    content: {
      contentHash: string;
      attributesHash: string;
      embeddingModel: string;
      ingestionVersion: number;
    },
    chunks: readonly ChunkRecord[],
    stillCurrent?: StillCurrent,
  ): Promise<{ documentId: string; written: boolean; duplicateOf?: DuplicateOf }>;
  /**
   * Counts an attempt to index an indexed document again for a new ingestion version (`step` 1,
   * which also moves it to the back of the sweep's order), or takes back one that ended in a
   * failure the process survived (-1). Kept in `lease_expiries`, reset when it is indexed; the
   * document stays indexed and served meanwhile.
   */
  countReindexAttempt(tenantId: string, sourceUri: string, step: 1 | -1): Promise<void>;
  /** Updates attributes only (the sidecar changed, the content did not): no re-embedding. */
  updateAttributes(attrs: DocumentAttributes, attributesHash: string): Promise<void>;
  /**
   * Records that the object was written again with the same content and attributes: its
   * document's source date moves forward to `sourceUpdatedAt` (never back), so that
   * reconciliation does not take the object for changed at every start.
   */
  recordSourceDate(tenantId: string, sourceUri: string, sourceUpdatedAt: Date): Promise<void>;
  /**
   * Records a failure with its reason; removes stale chunks so search never serves them. Like
   * {@link replaceChunks}, writes nothing when `stillCurrent` answers false.
   */
  markFailed(
    attrs: DocumentAttributes,
    reason: string,
    stillCurrent?: StillCurrent,
  ): Promise<string>;
  /**
   * How far a processing document has got (shown by GET /api/documents/{id}; cleared by any write
   * above); renews its lease.
   */
  reportProgress?(documentId: string, progress: IngestionProgress): Promise<void>;
  /** The object is gone: removes the chunks, keeps a `deleted` row. */
  markDeleted(tenantId: string, sourceUri: string): Promise<boolean>;
  /**
   * The earliest indexed document of another object with the same content (`contentHash`) in the
   * same scope (tenant, visibility and owner as `attrs`), or null: what a copy would duplicate.
   */
  findDuplicate(attrs: DocumentAttributes, contentHash: string): Promise<DuplicateOf | null>;
}

/** The document a copy duplicates, as named to the user. */
export interface DuplicateOf {
  readonly id: string;
  readonly title: string | null;
  readonly sourceUri: string;
}

/** What recovering stranded documents needs besides the pipeline's own writes. */
export interface RecoveryStore {
  find(tenantId: string, sourceUri: string): Promise<StoredDocument | null>;
  markFailed(attrs: DocumentAttributes, reason: string): Promise<string>;
  /** Every document whose source URI starts with the prefix (the objects of one bucket). */
  listSources(sourceUriPrefix: string): Promise<SourceState[]>;
  /**
   * Claims up to `limit` `processing` documents whose lease was last renewed before
   * `renewedBefore`: renews their lease (so a concurrent sweep skips them) and counts the expiry.
   */
  claimExpiredLeases(renewedBefore: Date, limit: number): Promise<ExpiredLease[]>;
  /**
   * Up to `limit` indexed documents of any tenant that a version of the ingestion code older
   * than `version` indexed, least recently updated first, leaving those with `maxAttempts`
   * re-indexing attempts counted ({@link countReindexAttempt}) that no worker finished.
   */
  listOutdated(
    version: number,
    maxAttempts: number,
    limit: number,
  ): Promise<{ readonly tenantId: string; readonly sourceUri: string }[]>;
  /**
   * Fails a document that is not finished (`queued`, `processing` or `failed`) with the reason,
   * removing its chunks; returns its id, or null when it has no such row.
   */
  failUnfinished(tenantId: string, sourceUri: string, reason: string): Promise<string | null>;
}
