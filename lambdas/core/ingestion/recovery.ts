/**
 * Nothing stranded: what brings documents that a dead worker or a lost message left behind back
 * into the pipeline (docs/ingestion.md, "Nothing stranded").
 *
 * - `reconcile` (the embedded default, at start): compares the bucket with the index and names
 *   the keys to announce again: objects with no row, documents a previous process left `queued`,
 *   `processing` or failed for a transient reason, objects changed or removed while it was down,
 *   documents indexed by an older version of the ingestion code (version.ts).
 * - `sweepExpiredLeases` (in AWS, on a schedule): processes again the `processing` documents
 *   whose lease ran out, and fails one whose lease ran out too often.
 * - `sweepOutdated` (in AWS, on the same schedule): indexes again, for as long as the run may,
 *   the documents that an older version of the ingestion code indexed, which the embedded default
 *   announces at start.
 * - `deadLettered` (the dead-letter queue's consumer): a message that exhausted its receives
 *   fails the documents it names, with the reason.
 */
import type { Clock, Log, MetricsSink, TenantScope } from '../ports';
import { noMetrics, silentLog, systemClock, unscoped } from '../ports';
import {
  DEFAULT_PROCESSING_LEASE_SECONDS,
  type DocumentAttributes,
  type RecoveryStore,
} from './document-store';
import { TRANSIENT_FAILURE_PREFIX, type Ingestion, type SyncOutcome } from './ingest';
import {
  DEFAULT_KEY_LAYOUT,
  isSidecarKey,
  parseKey,
  SIDECAR_SUFFIX,
  UNASSIGNED_TENANT,
  type KeyLayout,
} from './object-attributes';
import type { ObjectStore } from './object-store';
import { INGESTION_VERSION } from './version';

/** How many of `items` fall under each key: a sweep's outcomes by kind, for its log line. */
export function countBy<T>(items: readonly T[], key: (item: T) => string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[key(item)] = (counts[key(item)] ?? 0) + 1;
  return counts;
}

export interface RecoverySettings {
  /** A `processing` document whose lease is older than this is abandoned. */
  readonly leaseSeconds: number;
  /** After this many expiries without being indexed, the document fails instead. */
  readonly maxLeaseExpiries: number;
  /**
   * Documents one sweep of expired leases processes at most; the outdated sweep lists this many
   * at a time.
   */
  readonly sweepBatch: number;
  readonly keyLayout: KeyLayout;
}

const DEFAULT_RECOVERY_SETTINGS: RecoverySettings = {
  leaseSeconds: DEFAULT_PROCESSING_LEASE_SECONDS,
  maxLeaseExpiries: 3,
  sweepBatch: 10,
  keyLayout: DEFAULT_KEY_LAYOUT,
};

/** Abandoned documents reconciliation at start claims at most (a sweep's batch is smaller). */
const MAX_ABANDONED_AT_START = 100_000;

/** A key to announce again, and why. */
export interface Reannouncement {
  readonly key: string;
  readonly reason: 'new' | 'unfinished' | 'changed' | 'removed' | 'outdated';
  /** Whether the object exists (an S3 "created" event) or not (a "removed" one). */
  readonly exists: boolean;
}

export interface IngestRecovery {
  reconcile(bucket: string): Promise<Reannouncement[]>;
  sweepExpiredLeases(): Promise<SyncOutcome[]>;
  /**
   * Indexes again the documents an older ingestion version indexed, a batch at a time, until none
   * is left, each tried once, one fails for a transient reason, or `shouldStop` says the run's
   * time is short (checked before each).
   */
  sweepOutdated(options?: { readonly shouldStop?: () => boolean }): Promise<SyncOutcome[]>;
  deadLettered(bucket: string, key: string, receiveCount: number | null): Promise<void>;
}

/** `s3://bucket/key` → key, or null for another bucket. */
function keyOf(bucket: string, sourceUri: string): string | null {
  const prefix = `s3://${bucket}/`;
  return sourceUri.startsWith(prefix) ? sourceUri.slice(prefix.length) : null;
}

/** `s3://bucket/key` → its bucket and key, or null for a source that is not an S3 object. */
function objectOf(sourceUri: string): { bucket: string; key: string } | null {
  const match = /^s3:\/\/([^/]+)\/(.+)$/.exec(sourceUri);
  return match ? { bucket: match[1]!, key: match[2]! } : null;
}

export function createIngestRecovery(deps: {
  readonly store: RecoveryStore;
  readonly objects: ObjectStore;
  readonly ingestion: Ingestion;
  readonly settings?: Partial<RecoverySettings>;
  readonly clock?: Clock;
  readonly log?: Log;
  readonly metrics?: MetricsSink;
  /**
   * Walls a document's statements to its tenant (row-level security); claiming expired leases
   * spans tenants and goes through the store's own path for it. @default unscoped
   */
  readonly tenantScope?: TenantScope;
}): IngestRecovery {
  const tenantScope = deps.tenantScope ?? unscoped;
  const settings = { ...DEFAULT_RECOVERY_SETTINGS, ...deps.settings };
  const clock = deps.clock ?? systemClock;
  const log = deps.log ?? silentLog;
  const metrics = deps.metrics ?? noMetrics;
  const { store, objects, ingestion } = deps;

  const tenantOf = (key: string): string => {
    try {
      return parseKey(key, settings.keyLayout).tenantId;
    } catch {
      return UNASSIGNED_TENANT;
    }
  };

  return {
    async reconcile(bucket) {
      if (!objects.list) return [];
      await failAbandonedTooOften();
      const listed = await objects.list(bucket);
      const rows = new Map(
        (await store.listSources(`s3://${bucket}/`)).map((r) => [r.sourceUri, r] as const),
      );
      const objectsByKey = new Map<string, Date>();
      const sidecars = new Map<string, Date>();
      for (const o of listed) {
        if (o.key.endsWith('/')) continue;
        if (isSidecarKey(o.key))
          sidecars.set(o.key.slice(0, -SIDECAR_SUFFIX.length), o.lastModified);
        else objectsByKey.set(o.key, o.lastModified);
      }
      const out: Reannouncement[] = [];
      for (const [key, lastModified] of objectsByKey) {
        const row = rows.get(`s3://${bucket}/${key}`);
        const sidecarModified = sidecars.get(key);
        if (!row) out.push({ key, reason: 'new', exists: true });
        else if (
          row.status === 'queued' ||
          row.status === 'processing' ||
          (row.status === 'failed' && row.failureReason?.startsWith(TRANSIENT_FAILURE_PREFIX))
        )
          out.push({ key, reason: 'unfinished', exists: true });
        else if (
          row.status === 'deleted' ||
          !row.sourceUpdatedAt ||
          lastModified > row.sourceUpdatedAt ||
          (sidecarModified !== undefined && sidecarModified > row.updatedAt)
        )
          out.push({ key, reason: 'changed', exists: true });
        else if (
          row.status === 'indexed' &&
          row.ingestionVersion < INGESTION_VERSION &&
          // A file the process died on that many times keeps the chunks it has.
          row.reindexAttempts < settings.maxLeaseExpiries
        )
          out.push({ key, reason: 'outdated', exists: true });
      }
      for (const row of rows.values()) {
        const key = keyOf(bucket, row.sourceUri);
        if (key === null || objectsByKey.has(key)) continue;
        // A reserved upload whose file has not arrived yet is waiting, not stranded; a failed
        // document keeps its reason until its file comes back.
        const stranded =
          row.status === 'processing' ||
          row.status === 'indexed' ||
          (row.status === 'queued' && !row.reserved);
        if (stranded) out.push({ key, reason: 'removed', exists: false });
      }
      if (out.length > 0) {
        log.warn('reconciling the index with the bucket', {
          reannounced: out.length,
          byReason: countBy(out, (r) => r.reason),
        });
        metrics.count('DocumentsReconciled', out.length);
      }
      return out;
    },

    async sweepExpiredLeases() {
      const cutoff = new Date(clock.now().getTime() - settings.leaseSeconds * 1000);
      const claimed = await store.claimExpiredLeases(cutoff, settings.sweepBatch);
      const outcomes: SyncOutcome[] = [];
      for (const lease of claimed) {
        const object = objectOf(lease.sourceUri);
        if (!object) continue;
        const { bucket, key } = object;
        metrics.count('LeasesExpired');
        if (lease.expiries > settings.maxLeaseExpiries) {
          const reason =
            `Indexing stopped ${lease.expiries} times without finishing (the worker ran out of time or memory). ` +
            'Split the file or retry it (POST /api/documents/{id}/retry).';
          const id = await tenantScope(lease.tenantId, () =>
            store.failUnfinished(lease.tenantId, lease.sourceUri, reason),
          );
          log.warn('document failed after repeated lease expiries', {
            key,
            expiries: lease.expiries,
          });
          outcomes.push({ action: 'failed', documentId: id ?? '', reason });
          continue;
        }
        log.warn('processing lease expired; processing the document again', {
          key,
          expiries: lease.expiries,
        });
        outcomes.push(await ingestion.syncObject(bucket, key));
      }
      return outcomes;
    },

    async sweepOutdated({ shouldStop = () => false } = {}) {
      const outcomes: SyncOutcome[] = [];
      // Each document once per run: one that sync leaves outdated (a key it ignores) is not
      // listed again within it.
      const tried = new Set<string>();
      let failed = false;
      while (!failed && !shouldStop()) {
        // A file whose re-indexing the worker did not survive that many times keeps the chunks
        // it has, as at the embedded default's start.
        const listed = await store.listOutdated(
          INGESTION_VERSION,
          settings.maxLeaseExpiries,
          settings.sweepBatch,
        );
        const batch = listed.filter((d) => !tried.has(`${d.tenantId}\n${d.sourceUri}`));
        if (batch.length === 0) break;
        for (const doc of batch) {
          if (shouldStop()) break;
          tried.add(`${doc.tenantId}\n${doc.sourceUri}`);
          const object = objectOf(doc.sourceUri);
          if (!object) continue;
          const { bucket, key } = object;
          try {
            outcomes.push(await ingestion.syncObject(bucket, key));
          } catch (err) {
            // Sync throws only for a transient failure (the model or database down): the
            // document keeps its old chunks (ingest.ts), and the run stops rather than try every
            // other document against the same outage; the next run starts over.
            log.warn('indexing again for the new ingestion version failed', { key, err });
            failed = true;
            break;
          }
        }
      }
      if (outcomes.length > 0) metrics.count('DocumentsReindexed', outcomes.length);
      return outcomes;
    },

    async deadLettered(bucket, key, receiveCount) {
      const objectKey = isSidecarKey(key) ? key.slice(0, -SIDECAR_SUFFIX.length) : key;
      const tenantId = tenantOf(objectKey);
      return tenantScope(tenantId, () => deadLetteredIn(tenantId, bucket, objectKey, receiveCount));
    },
  };

  /**
   * At start, the `processing` documents were abandoned by the process before this one, which is
   * gone (reconciliation runs before this process ingests anything): each counts an expiry of its
   * lease, and one abandoned more than `maxLeaseExpiries` times (a file that brings the process
   * down, such as a decompression bomb) fails with the reason instead of being processed again at
   * every start. The others are announced again by `reconcile`.
   */
  async function failAbandonedTooOften(): Promise<void> {
    const abandoned = await store.claimExpiredLeases(clock.now(), MAX_ABANDONED_AT_START);
    if (abandoned.length > 0) metrics.count('LeasesExpired', abandoned.length);
    for (const lease of abandoned) {
      if (lease.expiries <= settings.maxLeaseExpiries) continue;
      const reason =
        `Indexing stopped ${lease.expiries} times without finishing (the process ended while it ran: out of memory, killed or stopped). ` +
        'Split the file or retry it (POST /api/documents/{id}/retry).';
      await tenantScope(lease.tenantId, () =>
        store.failUnfinished(lease.tenantId, lease.sourceUri, reason),
      );
      log.warn('document failed after repeated abandonment', {
        sourceUri: lease.sourceUri,
        expiries: lease.expiries,
      });
    }
  }

  async function deadLetteredIn(
    tenantId: string,
    bucket: string,
    objectKey: string,
    receiveCount: number | null,
  ): Promise<void> {
    const sourceUri = `s3://${bucket}/${objectKey}`;
    const existing = await store.find(tenantId, sourceUri);
    const attempts = receiveCount === null ? 'every attempt' : `${receiveCount} attempts`;
    const cause = existing?.failureReason?.startsWith(TRANSIENT_FAILURE_PREFIX)
      ? existing.failureReason.slice(TRANSIENT_FAILURE_PREFIX.length)
      : 'the worker did not finish (it ran out of time or memory, or stopped)';
    const reason = `Indexing failed after ${attempts}: ${cause}. Retry it (POST /api/documents/{id}/retry) once the cause is fixed.`;
    if (existing && (existing.status === 'indexed' || existing.status === 'deleted')) {
      // A later event already brought the document up to date: the dead letter is stale.
      log.info('dead-lettered event for a document that is up to date', { key: objectKey });
      return;
    }
    metrics.count('DocumentsDeadLettered');
    // The failure-rate alarm counts it with the other failures.
    metrics.count('DocumentsFailed');
    if (existing) {
      await store.failUnfinished(tenantId, sourceUri, reason);
    } else {
      const attrs: DocumentAttributes = {
        tenantId,
        sourceUri,
        title: objectKey.split('/').pop() ?? objectKey,
        sourceType: 'doc',
        language: 'en',
        ownerUserId: null,
        visibility: 'tenant',
        metadata: {},
        sourceUpdatedAt: null,
      };
      // A private key's owner is named by the key; keep the row in their scope.
      try {
        const { userId } = parseKey(objectKey, settings.keyLayout);
        if (userId) Object.assign(attrs, { ownerUserId: userId, visibility: 'user' });
      } catch {
        // no tenant: the row goes to the reserved unassigned tenant
      }
      await store.markFailed(attrs, reason);
    }
    log.error('ingestion gave up on a document', { key: objectKey, reason });
  }
}
