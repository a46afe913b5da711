/**
 * The ingestion use case: make the index match the bucket for one key.
 *
 * Both `ObjectCreated` and `ObjectRemoved` events call `syncObject`, which looks at the object
 * as it is now (not as the event describes it): if it exists its latest content is indexed, if
 * not its chunks are removed. Duplicate and out-of-order events therefore converge on exactly
 * one copy of the latest content. Unchanged content (same hash, same settings, same embedding
 * model) costs zero embedding calls and zero writes.
 */
import { createHash } from 'node:crypto';
import type { Clock, Embedder, Log, MetricsSink, TenantScope, TokenCounter } from '../ports';
import { noMetrics, silentLog, systemClock, unscoped } from '../ports';
import { chunkText } from './chunker';
import type {
  DocumentAttributes,
  DocumentStore,
  DuplicateOf,
  StillCurrent,
} from './document-store';
import {
  DEFAULT_KEY_LAYOUT,
  isSidecarKey,
  parseKey,
  parseSidecar,
  resolveAttributes,
  SIDECAR_SUFFIX,
  UNASSIGNED_TENANT,
  type KeyLayout,
} from './object-attributes';
import type { ObjectInfo, ObjectStore } from './object-store';
import { DocumentRejectedError, type ChunkingOptions, type DocumentParser } from './types';
import { toStorableText } from '../text/storable';
import { INGESTION_VERSION } from './version';
import {
  chunkEmbeddingInput,
  embedChunkInputs,
  type ChunkEmbeddingSettings,
  type OnEmbedded,
} from './chunk-embedding';

/** A copy of a document already indexed in the same scope, refused with what to do about it. */
function duplicateOf(original: DuplicateOf): DocumentRejectedError {
  return new DocumentRejectedError(
    'duplicate',
    `The same content is already indexed as "${original.title ?? original.sourceUri}" ` +
      `(document ${original.id}), so this copy is not indexed again. Delete that document ` +
      'and retry this one to keep this copy instead.',
  );
}

export interface IngestionSettings extends ChunkEmbeddingSettings {
  readonly chunking: ChunkingOptions;
  /** Objects larger than this fail with a reason instead of being downloaded. */
  readonly maxObjectBytes: number;
  readonly keyLayout: KeyLayout;
}

/**
 * How the reason of a transient failure starts (the database or the embedding model was down):
 * the message is retried, and recovery (recovery.ts) treats the document as unfinished.
 */
export const TRANSIENT_FAILURE_PREFIX = 'Temporary failure, will be retried: ';

export const DEFAULT_INGESTION_SETTINGS: IngestionSettings = {
  chunking: { targetTokens: 512, overlapTokens: 128 },
  maxObjectBytes: 50 * 1024 * 1024,
  keyLayout: DEFAULT_KEY_LAYOUT,
  embedWithTitle: true,
  embedBatchSize: 64,
  embedWindowTokens: null,
};

export type SyncOutcome =
  | { readonly action: 'indexed'; readonly documentId: string; readonly chunks: number }
  | { readonly action: 'unchanged'; readonly documentId: string }
  | { readonly action: 'attributes_updated'; readonly documentId: string }
  | { readonly action: 'deleted'; readonly existed: boolean }
  | { readonly action: 'failed'; readonly documentId: string; readonly reason: string }
  | { readonly action: 'stale'; readonly documentId: string }
  | { readonly action: 'ignored'; readonly reason: string };

/** Where the time of one sync went, for the ingestion benchmark. */
export interface StageTimings {
  fetchMs: number;
  parseMs: number;
  chunkMs: number;
  embedMs: number;
  writeMs: number;
  embedCalls: number;
}

export interface IngestionDeps {
  readonly store: DocumentStore;
  readonly objects: ObjectStore;
  readonly parser: DocumentParser;
  readonly embedder: Embedder;
  readonly tokens: TokenCounter;
  readonly settings?: Partial<IngestionSettings>;
  readonly clock?: Clock;
  readonly log?: Log;
  readonly metrics?: MetricsSink;
  /** Accumulates where the time of every sync went (the ingestion benchmark reads it). */
  readonly timings?: StageTimings;
  /**
   * Walls the store's statements to the tenant the object's key names (row-level security).
   * @default unscoped
   */
  readonly tenantScope?: TenantScope;
}

export interface Ingestion {
  /** Brings the index in line with the object at `bucket/key` (created, changed or removed). */
  syncObject(bucket: string, key: string, timings?: StageTimings): Promise<SyncOutcome>;
}

export function newStageTimings(): StageTimings {
  return { fetchMs: 0, parseMs: 0, chunkMs: 0, embedMs: 0, writeMs: 0, embedCalls: 0 };
}

/**
 * Whether two reads of an object saw the same version: the same entity tag where the store gives
 * one (it changes with every write), and the same date and size.
 */
function sameVersion(a: ObjectInfo, b: ObjectInfo): boolean {
  return (
    a.etag === b.etag && a.lastModified.getTime() === b.lastModified.getTime() && a.size === b.size
  );
}

function sha256(...parts: (string | Uint8Array)[]): string {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest('hex');
}

/** Stable JSON: keys sorted, so equal attributes hash equally. */
function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value && typeof value === 'object' && !(value instanceof Date)) {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) =>
      a < b ? -1 : 1,
    );
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value instanceof Date ? value.toISOString() : value) ?? 'null';
}

/** Creates the ingestion use case from its ports. */
export function createIngestion(deps: IngestionDeps): Ingestion {
  const settings: IngestionSettings = { ...DEFAULT_INGESTION_SETTINGS, ...deps.settings };
  const log = deps.log ?? silentLog;
  const metrics = deps.metrics ?? noMetrics;
  const clock = deps.clock ?? systemClock;
  const { store, objects, parser, tokens } = deps;
  // The content hash covers the bytes and the chunking settings: changing either re-indexes.
  const pipelineKey = `chunk:${settings.chunking.targetTokens}/${settings.chunking.overlapTokens};title:${settings.embedWithTitle};window:${settings.embedWindowTokens ?? 0}`;

  const elapsed = (start: number) => performance.now() - start;

  /**
   * Reports embedding progress on the document's row, at most once per second, so a long
   * document shows movement and a short one costs no extra writes. A failed report is ignored.
   */
  function progressReporter(documentId: string, chunksTotal: number): OnEmbedded | undefined {
    const report = store.reportProgress?.bind(store);
    if (!report || !documentId) return undefined;
    let last = performance.now();
    return async (fraction) => {
      if (performance.now() - last < 1000) return;
      last = performance.now();
      await report(documentId, {
        stage: 'embedding',
        chunks_total: chunksTotal,
        chunks_embedded: Math.floor(fraction * chunksTotal),
      }).catch((err: unknown) => log.warn('could not record progress', { err }));
    };
  }

  /** Records a rejected document under its tenant (or the reserved unassigned tenant). */
  async function recordFailure(
    bucket: string,
    key: string,
    err: DocumentRejectedError,
    lastModified: Date | null,
    fallback?: DocumentAttributes,
    stillCurrent?: StillCurrent,
  ): Promise<SyncOutcome> {
    let tenantId = UNASSIGNED_TENANT;
    let userId: string | null = null;
    try {
      ({ tenantId, userId } = parseKey(key, settings.keyLayout));
    } catch {
      // no tenant: recorded under the reserved id, never in a real tenant's scope
    }
    const minimal: DocumentAttributes = {
      tenantId,
      sourceUri: `s3://${bucket}/${key}`,
      title: key.split('/').pop() ?? key,
      sourceType: 'doc',
      language: 'en',
      // A file under users/<id>/ stays private to that user, failed or not.
      ownerUserId: userId,
      visibility: userId ? 'user' : 'tenant',
      metadata: {},
      sourceUpdatedAt: lastModified,
    };
    let documentId: string;
    try {
      documentId = await store.markFailed(fallback ?? minimal, err.message, stillCurrent);
    } catch (recordErr) {
      // Attributes the store refuses must not cost the document its row: it is recorded with
      // what the key alone says.
      if (!fallback) throw recordErr;
      log.warn('recording the failure with its attributes failed', { key, recordErr });
      documentId = await store.markFailed(minimal, err.message, stillCurrent);
    }
    log.warn('document rejected', { key, reasonCode: err.reasonCode, reason: err.message });
    metrics.count('DocumentsFailed');
    return { action: 'failed', documentId, reason: err.message };
  }

  async function syncObject(
    bucket: string,
    rawKey: string,
    timings: StageTimings = deps.timings ?? newStageTimings(),
  ): Promise<SyncOutcome> {
    // A sidecar change re-syncs the object it describes.
    const key = isSidecarKey(rawKey) ? rawKey.slice(0, -SIDECAR_SUFFIX.length) : rawKey;
    if (key.endsWith('/')) return { action: 'ignored', reason: 'folder placeholder' };
    const sourceUri = `s3://${bucket}/${key}`;

    let t0 = performance.now();
    const info = await objects.head(bucket, key);
    timings.fetchMs += elapsed(t0);

    if (!info) {
      // A sidecar written ahead of its object (POST /api/documents does this): nothing to do until
      // the object arrives; its own removal event handles a deletion.
      if (rawKey !== key) return { action: 'ignored', reason: 'metadata without its object' };
      let tenantId: string;
      try {
        tenantId = parseKey(key, settings.keyLayout).tenantId;
      } catch {
        tenantId = UNASSIGNED_TENANT;
      }
      t0 = performance.now();
      const existed = await store.markDeleted(tenantId, sourceUri);
      timings.writeMs += elapsed(t0);
      if (existed) metrics.count('DocumentsDeleted');
      log.info('object removed', { key, existed });
      return { action: 'deleted', existed };
    }

    if (info.size > settings.maxObjectBytes) {
      return recordFailure(
        bucket,
        key,
        new DocumentRejectedError(
          'too_large',
          `The file is ${(info.size / 1048576).toFixed(1)} MB; the limit is ${(settings.maxObjectBytes / 1048576).toFixed(0)} MB. Split it into smaller files.`,
        ),
        info.lastModified,
      );
    }

    let attrs: DocumentAttributes | undefined;
    /** Indexing the same content again for a new ingestion version: a failure keeps the old. */
    let reindexing = false;
    let stillCurrent: StillCurrent | undefined;
    try {
      t0 = performance.now();
      const [object, sidecarObject] = await Promise.all([
        objects.get(bucket, key),
        objects.get(bucket, key + SIDECAR_SUFFIX),
      ]);
      timings.fetchMs += elapsed(t0);
      if (!object) return syncObject(bucket, key, timings); // removed meanwhile
      const read = object.info;
      stillCurrent = async () => {
        const current = await objects.head(bucket, key);
        return current !== null && sameVersion(current, read);
      };

      const sidecar = parseSidecar(sidecarObject?.bytes ?? null);
      const baseAttrs = resolveAttributes({
        bucket,
        key,
        sidecar,
        lastModified: object.info.lastModified,
        layout: settings.keyLayout,
      });
      const contentHash = sha256(pipelineKey, '\0', object.bytes);
      const attributesHash = sha256(stableJson({ ...baseAttrs, sourceUpdatedAt: null, sidecar }));

      const existing = await store.find(baseAttrs.tenantId, sourceUri);
      if (existing?.sourceUpdatedAt && existing.sourceUpdatedAt > object.info.lastModified) {
        return { action: 'stale', documentId: existing.id };
      }
      // An upload the documents API announced has a key no other upload reuses: a file that
      // arrives there after the document was removed (a PUT to its presigned URL that was slower
      // than the removal, or made after it) is not indexed, so a removal always holds.
      if (existing?.status === 'deleted' && existing.reserved) {
        log.info('object of a removed upload not indexed', { key });
        return { action: 'ignored', reason: 'upload removed' };
      }
      // One model for the whole document, even if a model switch completes meanwhile (the
      // store refuses the write then, and the retry embeds with the new model).
      const embedder = (await deps.embedder.current?.()) ?? deps.embedder;
      const sameContent =
        existing?.status === 'indexed' &&
        existing.contentHash === contentHash &&
        existing.embeddingModel === embedder.modelId;
      // Unchanged when the same bytes were indexed by this model and this version of the
      // ingestion code: after an upgrade that changes what parsing or chunking make of a file,
      // the same bytes are indexed again (version.ts).
      const contentUnchanged = sameContent && existing.ingestionVersion === INGESTION_VERSION;
      reindexing = sameContent && !contentUnchanged;

      if (contentUnchanged && existing.attributesHash === attributesHash) {
        metrics.count('DocumentsUnchanged');
        // The same file written again (a folder uploaded twice) is newer all the same.
        if (!existing.sourceUpdatedAt || existing.sourceUpdatedAt < object.info.lastModified) {
          await store.recordSourceDate(baseAttrs.tenantId, sourceUri, object.info.lastModified);
        }
        return { action: 'unchanged', documentId: existing.id };
      }

      // New content is marked processing before it is parsed, so that a file whose parsing
      // brings the process down (a decompression bomb) counts as abandoned at the next start or
      // sweep and ends failed (recovery.ts) instead of being parsed again for ever.
      let processingId = '';
      if (reindexing) {
        // The same content indexed again for a new ingestion version stays served by its old
        // chunks until the new ones replace them. The attempt is counted until it ends, so that a
        // file the new code cannot get through (the process dies on it) is not tried for ever
        // (recovery.ts).
        t0 = performance.now();
        await store.countReindexAttempt(baseAttrs.tenantId, sourceUri, 1);
        timings.writeMs += elapsed(t0);
      } else if (!contentUnchanged) {
        t0 = performance.now();
        processingId = await store.markProcessing(baseAttrs);
        timings.writeMs += elapsed(t0);
      }

      t0 = performance.now();
      const parsed = await parser.parse(object.bytes, {
        key,
        contentType: object.info.contentType,
      });
      timings.parseMs += elapsed(t0);
      attrs = resolveAttributes({
        bucket,
        key,
        sidecar,
        parsedTitle: parsed.title ?? null,
        lastModified: object.info.lastModified,
        layout: settings.keyLayout,
      });

      if (contentUnchanged) {
        t0 = performance.now();
        await store.updateAttributes(attrs, attributesHash);
        timings.writeMs += elapsed(t0);
        return { action: 'attributes_updated', documentId: existing.id };
      }

      // A copy of a document already indexed in the same scope is recorded, not indexed twice:
      // it would only repeat every hit. Deleting the original and retrying the copy indexes it.
      const original = await store.findDuplicate(attrs, contentHash);
      if (original) throw duplicateOf(original);

      t0 = performance.now();
      // Text PostgreSQL cannot store (a stray NUL, a lone surrogate) is dropped, not fatal.
      const chunks = chunkText(toStorableText(parsed.text), settings.chunking, tokens);
      timings.chunkMs += elapsed(t0);
      if (chunks.length === 0) {
        throw new DocumentRejectedError('empty_document', 'The file contains no text to index.');
      }

      const title = attrs.title;
      const inputs = chunks.map((c) => chunkEmbeddingInput(settings, title, c.text));
      const vectors = await embedChunkInputs(
        { embedder, tokens },
        settings,
        inputs,
        timings,
        progressReporter(processingId, chunks.length),
      );

      t0 = performance.now();
      const result = await store.replaceChunks(
        attrs,
        {
          contentHash,
          attributesHash,
          embeddingModel: embedder.modelId,
          ingestionVersion: INGESTION_VERSION,
        },
        chunks.map((c, i) => ({ ...c, embedding: vectors[i] ?? [], metadata: {} })),
        stillCurrent,
      );
      timings.writeMs += elapsed(t0);
      // A copy indexed while this one was embedded (copies uploaded at once).
      if (result.duplicateOf) throw duplicateOf(result.duplicateOf);
      if (!result.written) return { action: 'stale', documentId: result.documentId };

      metrics.count('DocumentsIndexed');
      metrics.count('ChunksIndexed', chunks.length);
      log.info('document indexed', {
        key,
        documentId: result.documentId,
        chunks: chunks.length,
        at: clock.now().toISOString(),
      });
      return { action: 'indexed', documentId: result.documentId, chunks: chunks.length };
    } catch (err) {
      if (err instanceof DocumentRejectedError)
        return recordFailure(bucket, key, err, info.lastModified, attrs, stillCurrent);
      // Transient (database, embedding model): record why, then let the caller retry the event.
      // A document being indexed again for a new version keeps its old chunks and version, and
      // is tried again at the next start or sweep: an attempt that ended this way does not count.
      if (attrs && reindexing) {
        await store
          .countReindexAttempt(attrs.tenantId, attrs.sourceUri, -1)
          .catch((recordErr: unknown) => log.error('could not record failure', { key, recordErr }));
      } else if (attrs) {
        await store
          .markFailed(
            attrs,
            `${TRANSIENT_FAILURE_PREFIX}${err instanceof Error ? err.message : String(err)}`,
            stillCurrent,
          )
          .catch((recordErr: unknown) => log.error('could not record failure', { key, recordErr }));
      }
      metrics.count('IngestionErrors');
      throw err;
    }
  }

  const tenantScope = deps.tenantScope ?? unscoped;
  /** The tenant the key names (a sidecar names its object's), or the unassigned one. */
  function tenantOfKey(rawKey: string): string {
    const key = isSidecarKey(rawKey) ? rawKey.slice(0, -SIDECAR_SUFFIX.length) : rawKey;
    try {
      return parseKey(key, settings.keyLayout).tenantId;
    } catch {
      return UNASSIGNED_TENANT;
    }
  }
  return {
    syncObject: (bucket, rawKey, timings) =>
      tenantScope(tenantOfKey(rawKey), () => syncObject(bucket, rawKey, timings)),
  };
}
