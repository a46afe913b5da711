/**
 * The embedded default's moving parts in one process: PGlite with pgvector (data on disk), the
 * migrations, the local embedding model, the s3rver S3 emulator whose object events feed the
 * same `ingest` handler that runs in AWS, through a local stand-in for its SQS queue.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { S3Client, CreateBucketCommand, HeadBucketCommand } from '@aws-sdk/client-s3';
import type { Logger } from '@aws-lambda-powertools/logger';
import S3rver from 's3rver';
import { repairEmulatorFolder } from './s3-store-repair';
import { createLocalEmbedder } from '../lambdas/adapters/embeddings/local-embedder';
import {
  createLogger,
  logPort,
  metricsSink,
  createMetrics,
} from '../lambdas/adapters/observability/powertools';
import { createDocumentParser } from '../lambdas/adapters/parsers';
import type { Database } from '../lambdas/adapters/postgres/database';
import { createDocumentRepository } from '../lambdas/adapters/postgres/document-repository';
import { reconcileEmbeddingModel } from '../lambdas/adapters/postgres/embedding-guard';
import { reconcileExactScanIndex } from '../lambdas/adapters/postgres/exact-scan-index';
import {
  reconcileFilterIndexes,
  type FilterIndexValue,
} from '../lambdas/adapters/postgres/filter-indexes';
import {
  createModelSwitchStore,
  readModels,
} from '../lambdas/adapters/postgres/model-switch-store';
import {
  embedderFromRecord,
  type EmbedderSpec,
} from '../lambdas/adapters/embeddings/embedder-spec';
import { createLiveEmbedder } from '../lambdas/core/embedding/live-embedder';
import { resolveCalibration } from '../lambdas/core/answer/calibrations';
import { answeringPerLiveModel } from '../lambdas/core/embedding/per-live-model';
import type { ModelRecord } from '../lambdas/core/embedding/models';
import {
  createModelSwitch,
  type ModelSwitch,
  type ModelSwitchSettings,
  type RunOutcome,
} from '../lambdas/core/embedding/model-switch';
import { migrate } from '../lambdas/adapters/postgres/migrate';
import { openPGlite } from '../lambdas/adapters/postgres/pglite-database';
import {
  APP_GROUP_ROLE,
  ensureReadRole,
  ensureRequestRole,
  READ_GROUP_ROLE,
} from '../lambdas/adapters/postgres/app-role';
import { databases, type Databases } from '../lambdas/adapters/postgres/databases';
import { createPgDatabase } from '../lambdas/adapters/postgres/pg-database';
import { ConfigError } from '../lambdas/core/errors';
import { dbTenantScope } from '../lambdas/adapters/postgres/db-scope';
import {
  createConversationRepository,
  createPromptRepository,
} from '../lambdas/adapters/postgres/conversation-repository';
import { createSearchRepository } from '../lambdas/adapters/postgres/search-repository';
import { createS3ObjectStore } from '../lambdas/adapters/s3/s3-object-store';
import { createTokenCounter } from '../lambdas/adapters/tokenizer/gpt-token-counter';
import { createAdminStore } from '../lambdas/adapters/postgres/admin-queries';
import { createDocumentCatalog } from '../lambdas/adapters/postgres/document-queries';
import { createUploadBucket } from '../lambdas/adapters/s3/upload-bucket';
import { createAdmin, type Admin } from '../lambdas/core/admin/admin';
import { createDocuments, type Documents } from '../lambdas/core/documents/documents';
import {
  createIngestion,
  DEFAULT_INGESTION_SETTINGS,
  type Ingestion,
  type IngestionSettings,
  type StageTimings,
} from '../lambdas/core/ingestion/ingest';
import {
  createAnswering,
  type Answering,
  type AnswerSettings,
} from '../lambdas/core/answer/answer';
import type { ConversationStore } from '../lambdas/core/answer/conversations';
import type { LlmProvider } from '../lambdas/core/answer/llm';
import type { Embedder } from '../lambdas/core/ports';
import { DEFAULT_KEY_LAYOUT } from '../lambdas/core/ingestion/object-attributes';
import { DEFAULT_PUBLISHING_TENANTS } from '../lambdas/core/visibility';
import type { Reranker } from '../lambdas/core/retrieval/rerank';
import { createSearch, type Search, type SearchSettings } from '../lambdas/core/retrieval/search';
import { makeHandler as makeIngestHandler, processDeadLetter } from '../lambdas/ingest/handler';
import {
  createIngestRecovery,
  type IngestRecovery,
  type Reannouncement,
  type RecoverySettings,
} from '../lambdas/core/ingestion/recovery';
import { createDynamoLimitStore } from '../lambdas/adapters/dynamodb/limit-store';
import { DEFAULT_LIMITS_CONFIG, type LimitsConfig } from '../lambdas/core/limits/config';
import { createLimiter, type Limiter } from '../lambdas/core/limits/limiter';
import { startLocalDynamo } from './dynamodb';
import { localKeyDir } from './commands/token';
import { createIngestQueue, type IngestQueue } from './ingest-queue';
import { localS3Credentials, startS3Gate, type S3Credentials, type S3Gate } from './s3-gate';

/** How often the embedded default sweeps expired processing leases, as AWS does. */
const LEASE_SWEEP_MS = 5 * 60_000;
/** How long a failed ingest message waits before its second and third attempts (SQS hides it). */
const REDELIVERY_DELAYS_MS = [2_000, 8_000];

export interface LocalStackOptions {
  /** Folder for all local data; undefined keeps the database in memory (tests). */
  readonly dataDir?: string;
  readonly bucket?: string;
  /** S3 emulator port; 0 (default) picks a free one. */
  readonly s3Port?: number;
  /** Defaults to the local embedding model. */
  readonly embedder?: Embedder;
  /** An already-open database (tests pass PostgreSQL here); defaults to PGlite in dataDir. */
  readonly db?: Database;
  /**
   * The publishing tenants (lambdas/core/visibility.ts): whose `global` documents every tenant
   * reads, and who may publish them, for ingestion, the documents API and search alike.
   * @default DEFAULT_PUBLISHING_TENANTS
   */
  readonly publishingTenants?: readonly string[];
  /**
   * An already-open second connection to the same data for the reads of
   * lambdas/adapters/postgres/databases.ts (search and answer retrieval), switching to the read
   * group for each request; defaults to `db`.
   */
  readonly readDb?: Database;
  /**
   * A PostgreSQL server instead of PGlite (`GROUNDWORK_DATABASE_URL`), logged in as the owner
   * of its schema, and optionally a read connection (`GROUNDWORK_DATABASE_READ_URL`): a replica
   * of it, or the same server. Opened and closed by the stack; `db` and `readDb` win over it.
   */
  readonly database?: { readonly url: string; readonly readUrl?: string };
  /**
   * The metadata values with a filter index of their own (lambdas/adapters/postgres/filter-indexes.ts):
   * the database's declarations are made these at start. Left as they are when undefined.
   */
  readonly filterIndexes?: readonly FilterIndexValue[];
  /**
   * Whether the exact-scan index exists (lambdas/adapters/postgres/exact-scan-index.ts): made so
   * at start. Left as it is when undefined.
   */
  readonly exactScanIndex?: boolean;
  readonly ingestion?: Partial<IngestionSettings>;
  /** Accumulates ingestion stage timings (benchmarks). */
  readonly ingestionTimings?: StageTimings;
  readonly search?: Partial<SearchSettings>;
  /** Rerank stage after fusion; none when undefined. */
  readonly reranker?: Reranker | null;
  readonly answer?: Partial<AnswerSettings>;
  /** Recovery's lease and sweep settings (tests); the key layout is the stack's. */
  readonly recovery?: Partial<Omit<RecoverySettings, 'keyLayout'>>;
  /** Quotas and rate limits; defaults to the built-in plans. */
  readonly limits?: LimitsConfig;
  /** The LLM; null or undefined selects the offline extractive answerer. */
  readonly llm?: LlmProvider | null;
  readonly logLevel?: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR' | 'SILENT';
  readonly embedThreads?: number;
  /**
   * The configured model's settings, recorded with it so that a process configured with
   * another model can build it for queries during a switch. @default the local model's; none
   * (null) for another `embedder`
   */
  readonly embedderSpec?: EmbedderSpec;
  /**
   * Builds the embedder of a recorded model other than the configured one (the live model
   * during a switch). @default the local model only
   */
  readonly recordedEmbedder?: (record: ModelRecord) => Promise<Embedder>;
  /**
   * The model switch (core/embedding/model-switch.ts): its throttle, and whether this process
   * re-embeds in the background while it serves. @default background
   */
  readonly modelSwitch?: Partial<ModelSwitchSettings> & {
    readonly background?: boolean;
    /**
     * Fail at start when the live model of a switch cannot be built (queries could not be
     * embedded); `groundwork reembed`, which serves no query, does without. @default true
     */
    readonly requireLiveModel?: boolean;
  };
  /**
   * Compare the bucket with the index at start and re-announce what a previous process left
   * unfinished (core/ingestion/recovery.ts). @default true with a dataDir, false without
   */
  readonly reconcile?: boolean;
  /**
   * How long a failed ingest message waits before its next attempt (local/ingest-queue.ts), by the
   * attempts made so far. @default 2 s, then 8 s, with a dataDir (so that a database or model down
   * for a few seconds does not fail a document); no wait without one (tests)
   */
  readonly redeliveryDelaysMs?: readonly number[];
  /**
   * How often the lease sweep runs (core/ingestion/recovery.ts), as it runs in AWS. @default 5
   * minutes with a dataDir, never without one (tests call `recovery.sweepExpiredLeases`)
   */
  readonly leaseSweepMs?: number;
  /** Browser origins the S3 emulator answers with CORS besides those added by allowOrigin. */
  readonly s3CorsOrigins?: readonly string[];
}

export interface LocalStack {
  /** The writer (and the database of every command); `databases.reads` is the read connection. */
  readonly db: Database;
  readonly databases: Databases;
  /** The index's live model (during a switch, the model search reads), as queries embed. */
  readonly embedder: Embedder;
  /** The switch to the configured model, when one is in progress. */
  readonly modelSwitch: ModelSwitch;
  /** The background re-embedding: what it ended with, or undefined when none ran. */
  readonly switchJob: Promise<RunOutcome | undefined>;
  readonly ingestion: Ingestion;
  readonly search: Search;
  readonly conversations: ConversationStore;
  readonly answering: Answering;
  readonly limiter: Limiter;
  readonly documents: Documents;
  readonly admin: Admin;
  readonly queue: IngestQueue;
  readonly recovery: IngestRecovery;
  /** What the start-up reconciliation re-announced (empty when it did not run). */
  readonly reconciled: readonly Reannouncement[];
  readonly s3: {
    readonly client: S3Client;
    readonly endpoint: string;
    readonly bucket: string;
    /** The emulator accepts only requests signed with these (docs/ingestion.md). */
    readonly credentials: S3Credentials;
    /** Lets a browser origin call the emulator with CORS (the playground's, by startLocalApi). */
    allowOrigin(origin: string): void;
  };
  readonly logger: Logger;
  stop(): Promise<void>;
}

/** Encodes a key the way S3 event notifications do (URL-encoded, spaces as `+`). */
export function encodeS3EventKey(key: string): string {
  return encodeURIComponent(key).replace(/%20/g, '+').replace(/%2F/g, '/');
}

/** An S3 event notification for one key, as the emulator sends them. */
export function localS3Event(bucket: string, key: string, exists: boolean) {
  return {
    Records: [
      {
        eventVersion: '2.1',
        eventSource: 'aws:s3',
        eventName: exists ? 'ObjectCreated:Put' : 'ObjectRemoved:Delete',
        eventTime: new Date().toISOString(),
        s3: { bucket: { name: bucket }, object: { key: encodeS3EventKey(key) } },
      },
    ],
  };
}

/** Creates an S3 client for the emulator (path-style, its credentials, no streaming checksums). */
export function localS3Client(endpoint: string, credentials: S3Credentials): S3Client {
  return new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials,
    // s3rver stores aws-chunked uploads with their framing unless checksums are off.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const bucket = options.bucket ?? 'groundwork-local';
  const logLevel = options.logLevel ?? 'WARN';
  process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
  const logger = createLogger({ serviceName: 'groundwork-local', logLevel });
  const metrics = createMetrics(
    'groundwork-local',
    createLogger({ serviceName: 'groundwork-local', logLevel: 'ERROR' }),
  );

  if (options.dataDir) await mkdir(options.dataDir, { recursive: true });
  // Requests run as the application's group role, under row-level security (db-scope.ts); reads
  // on a second connection as the read group (SELECT only). PGlite is one in-process connection:
  // with it, reads and writes share it.
  const url = options.db ? undefined : options.database?.url;
  const readUrl = options.readDb ? undefined : options.database?.readUrl;
  const opened: Database[] = [];
  const open = (db: Database) => (opened.push(db), db);
  const db =
    options.db ??
    (url
      ? open(createPgDatabase({ connectionString: url }, { requestRole: APP_GROUP_ROLE }))
      : open(
          await openPGlite(options.dataDir ? path.join(options.dataDir, 'pgdata') : undefined, {
            requestRole: APP_GROUP_ROLE,
          }),
        ));
  const readDb =
    options.readDb ??
    (readUrl
      ? open(createPgDatabase({ connectionString: readUrl }, { requestRole: READ_GROUP_ROLE }))
      : undefined);
  const dbs = databases(db, readDb);
  const closeOpened = () => Promise.all(opened.map((d) => d.close()));
  const loadLocal = () =>
    createLocalEmbedder(
      options.embedThreads === undefined ? {} : { threads: options.embedThreads },
    );
  const configured = options.embedder ?? (await loadLocal());
  const spec: EmbedderSpec | null =
    options.embedderSpec ?? (options.embedder ? null : { provider: 'local', settings: {} });
  let embedder: Embedder = configured;
  let gate: S3Gate | undefined;
  const dynamo = await startLocalDynamo(
    options.dataDir ? { dataDir: path.join(options.dataDir, 'dynamodb') } : {},
  );
  try {
    if (readDb?.kind === 'pglite' || (readDb && db.kind === 'pglite'))
      throw new ConfigError(
        'A separate read connection needs PostgreSQL for both; PGlite has one.',
      );
    await migrate(db);
    await ensureRequestRole(db, APP_GROUP_ROLE);
    if (options.filterIndexes)
      await reconcileFilterIndexes(db, options.filterIndexes, (message, fields) =>
        logger.info(message, fields),
      );
    if (options.exactScanIndex !== undefined)
      await reconcileExactScanIndex(db, options.exactScanIndex, (message, fields) =>
        logger.info(message, fields),
      );
    if (readDb) {
      const login = await readDb.query<{ login: string }>('SELECT session_user AS login');
      await ensureReadRole(db, { member: login.rows[0]!.login });
    }
    const models = await reconcileEmbeddingModel(db, {
      modelId: configured.modelId,
      dimension: configured.dimension,
      settings: spec,
    });
    if (models.began)
      logger.info('embedding model switch started', {
        from: models.live?.modelId,
        to: configured.modelId,
      });
    const live = createLiveEmbedder({
      // Read where search reads (a replica may lag the writer): the query model and the column
      // it is compared with change together.
      registry: { models: () => readModels(dbs.reads) },
      configured,
      build:
        options.recordedEmbedder ?? ((record) => embedderFromRecord(record, { local: loadLocal })),
    });
    if (options.modelSwitch?.requireLiveModel !== false) await live.refresh();
    embedder = live;

    const s3Dir = options.dataDir ? path.join(options.dataDir, 's3') : await tempDir();
    // Objects a killed process left half written would otherwise fail every listing of their
    // bucket (s3-store-repair.ts).
    const torn = await repairEmulatorFolder(
      s3Dir,
      options.dataDir ? path.join(options.dataDir, 's3-started-at') : null,
    );
    if (torn.length > 0)
      logger.warn('removed objects left incomplete by an interrupted upload; upload them again', {
        objects: torn,
      });
    const s3rver = new S3rver({
      silent: true,
      directory: s3Dir,
      configureBuckets: [{ name: bucket }],
    });
    await s3rver.configureBuckets();
    // s3rver checks no SigV4 signature and serves anonymous requests: it is reached only
    // through the gate, which verifies them (local/s3-gate.ts).
    const credentials = await localS3Credentials(
      options.dataDir ? localKeyDir(options.dataDir) : undefined,
    );
    gate = await startS3Gate({
      upstream: s3rver.callback(),
      credentials,
      port: options.s3Port ?? 0,
      // Uploads larger than what ingestion accepts are refused (with a margin for requests
      // such as a multi-object delete).
      maxBodyBytes:
        (options.ingestion?.maxObjectBytes ?? DEFAULT_INGESTION_SETTINGS.maxObjectBytes) +
        1024 * 1024,
      corsOrigins: options.s3CorsOrigins ?? [],
    });
    const endpoint = gate.endpoint;
    const client = localS3Client(endpoint, credentials);
    await client
      .send(new HeadBucketCommand({ Bucket: bucket }))
      .catch(() => client.send(new CreateBucketCommand({ Bucket: bucket })));

    const publishingTenants = options.publishingTenants ?? DEFAULT_PUBLISHING_TENANTS;
    const keyLayout = { ...DEFAULT_KEY_LAYOUT, globalPublishers: publishingTenants };
    const documentStore = createDocumentRepository(db);
    const objectStore = createS3ObjectStore(client);
    const ingestion = createIngestion({
      store: documentStore,
      objects: objectStore,
      parser: createDocumentParser(),
      embedder,
      tokens: createTokenCounter(),
      settings: { ...options.ingestion, keyLayout },
      ...(options.ingestionTimings ? { timings: options.ingestionTimings } : {}),
      log: logPort(logger),
      metrics: metricsSink(metrics),
      tenantScope: dbTenantScope,
    });
    const search = createSearch({
      store: createSearchRepository(dbs.reads),
      embedder,
      reranker: options.reranker ?? null,
      settings: { ...options.search, globalTenants: publishingTenants },
      log: logPort(logger),
      metrics: metricsSink(metrics),
    });
    const tokens = createTokenCounter();
    const conversations = createConversationRepository(db);
    // Settings that make the model's calibration invalid (a medium above high) stop the start,
    // rather than failing every answer; after a model switch the calibration follows the new model.
    resolveCalibration(
      embedder.modelId,
      options.answer?.calibrationOverrides,
      options.answer?.calibrationByModel,
    );
    const answering = answeringPerLiveModel(embedder, () =>
      createAnswering({
        search,
        embedder,
        tokens,
        conversations,
        prompts: createPromptRepository(db),
        llm: options.llm ?? null,
        settings: options.answer,
        log: logPort(logger),
        metrics: metricsSink(metrics),
      }),
    );
    const limiter = createLimiter({
      store: createDynamoLimitStore({ client: dynamo.client, tableName: dynamo.tableName }),
      config: options.limits ?? DEFAULT_LIMITS_CONFIG,
      log: logPort(logger),
      metrics: metricsSink(metrics),
    });
    const documents = createDocuments({
      catalog: createDocumentCatalog(db),
      bucket: createUploadBucket(client, bucket),
      settings: {
        globalPublishers: publishingTenants,
        maxUploadBytes:
          options.ingestion?.maxObjectBytes ?? DEFAULT_INGESTION_SETTINGS.maxObjectBytes,
      },
    });
    const admin = createAdmin({ store: createAdminStore(db), limiter });
    const recovery = createIngestRecovery({
      store: documentStore,
      objects: objectStore,
      ingestion,
      settings: { ...options.recovery, keyLayout },
      log: logPort(logger),
      metrics: metricsSink(metrics),
      tenantScope: dbTenantScope,
    });
    const handler = makeIngestHandler({ ingestion, recovery, logger, metrics });
    const queue = createIngestQueue((event, context) => handler(event, context), {
      onError: (err) => logger.error('local ingest batch failed', { err }),
      onDeadLetter: async (record) => {
        await processDeadLetter(recovery, record);
      },
      // PGlite runs no autovacuum: without fresh statistics the planner misjudges every table
      // (e.g. it ignores the GIN and HNSW indexes), so refresh them when a batch of writes ends.
      ...(db.kind === 'pglite'
        ? { onIdle: () => db.exec('ANALYZE documents, chunks, term_stats, tenant_stats') }
        : {}),
      batchSize: 4,
      concurrency: 4,
      redeliveryDelaysMs:
        options.redeliveryDelaysMs ?? (options.dataDir !== undefined ? REDELIVERY_DELAYS_MS : []),
    });
    s3rver.on('event', (event: { Records: { s3: { object: { key: string } } }[] }) => {
      for (const r of event.Records) r.s3.object.key = encodeS3EventKey(r.s3.object.key);
      queue.push(event);
    });

    // The queue lives in memory: what a previous process left unfinished, and what changed in
    // the bucket while nothing listened, is announced again (docs/ingestion.md).
    const reconciled =
      (options.reconcile ?? options.dataDir !== undefined) ? await recovery.reconcile(bucket) : [];
    for (const r of reconciled) queue.push(localS3Event(bucket, r.key, r.exists));
    // The lease sweep AWS runs on a schedule (docs/ingestion.md): a document a failure left
    // `processing` that could not be recorded (the database down) is processed again once its
    // lease runs out, without waiting for the next start.
    const sweepMs = options.leaseSweepMs ?? (options.dataDir !== undefined ? LEASE_SWEEP_MS : 0);
    // One sweep at a time: the next is timed from the end of the last, which may run long.
    let sweeping: Promise<void> = Promise.resolve();
    let sweepTimer: NodeJS.Timeout | null = null;
    let sweepStopped = false;
    const scheduleSweep = () => {
      if (sweepMs <= 0 || sweepStopped) return;
      sweepTimer = setTimeout(() => {
        sweeping = recovery
          .sweepExpiredLeases()
          .then((outcomes) => {
            if (outcomes.length > 0) logger.info('lease sweep', { outcomes });
          })
          .catch((err: unknown) => logger.error('lease sweep failed', { err }))
          .finally(scheduleSweep);
      }, sweepMs).unref();
    };
    scheduleSweep();

    // The switch to the configured model runs beside the server, throttled (docs/retrieval.md).
    const pause = interruptibleSleep();
    const modelSwitch = createModelSwitch({
      store: createModelSwitchStore(db),
      target: configured,
      tokens: createTokenCounter(),
      embedding: { ...DEFAULT_INGESTION_SETTINGS, ...options.ingestion },
      settings: options.modelSwitch ?? {},
      onSwitched: () => live.refresh(),
      sleep: (ms) => pause.wait(ms),
      log: logPort(logger),
      metrics: metricsSink(metrics),
    });
    const switchJob =
      models.target && options.modelSwitch?.background !== false
        ? runInBackground(modelSwitch, pause, logger)
        : Promise.resolve(undefined);

    const running = gate;
    return {
      db,
      databases: dbs,
      embedder,
      modelSwitch,
      switchJob,
      ingestion,
      search,
      conversations,
      answering,
      limiter,
      documents,
      admin,
      queue,
      recovery,
      reconciled,
      s3: { client, endpoint, bucket, credentials, allowOrigin: (o) => running.allowOrigin(o) },
      logger,
      async stop() {
        sweepStopped = true;
        if (sweepTimer) clearTimeout(sweepTimer);
        await sweeping;
        pause.stop();
        await switchJob;
        await queue.stop();
        client.destroy();
        await running.close();
        await dynamo.stop();
        await embedder.close?.();
        await closeOpened();
      },
    };
  } catch (err) {
    await gate?.close().catch(() => undefined);
    await dynamo.stop();
    await embedder.close?.();
    await closeOpened();
    throw err;
  }
}

/** A sleep that `stop` ends at once, for good. */
function interruptibleSleep() {
  let stopped = false;
  const waiting = new Set<() => void>();
  return {
    get stopped() {
      return stopped;
    },
    wait(ms: number): Promise<void> {
      if (stopped) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          waiting.delete(done);
          resolve();
        };
        const timer = setTimeout(done, ms);
        waiting.add(done);
      });
    },
    stop() {
      stopped = true;
      for (const done of [...waiting]) done();
    },
  };
}

/** Runs the switch until it completes or the stack stops; a failed batch is retried later. */
async function runInBackground(
  modelSwitch: ModelSwitch,
  pause: ReturnType<typeof interruptibleSleep>,
  logger: Logger,
): Promise<RunOutcome> {
  for (;;) {
    try {
      const outcome = await modelSwitch.run({ shouldStop: () => pause.stopped });
      if (outcome === 'switched') logger.info('embedding model switch completed');
      return outcome;
    } catch (err) {
      logger.error('embedding model switch batch failed; retrying', { err });
      await pause.wait(5000);
      if (pause.stopped) return 'stopped';
    }
  }
}

async function tempDir(): Promise<string> {
  const { mkdtemp } = await import('node:fs/promises');
  const os = await import('node:os');
  return mkdtemp(path.join(os.tmpdir(), 'groundwork-s3-'));
}
