/**
 * The embedded default's moving parts in one process: PGlite with pgvector (data on disk), the
 * migrations, the local embedding model, the s3rver S3 emulator whose object events feed the
 * same `ingest` handler that runs in AWS, through a local stand-in for its SQS queue.
 */
import { mkdir } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { S3Client, CreateBucketCommand, HeadBucketCommand } from '@aws-sdk/client-s3';
import type { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import S3rver from 's3rver';
import { createLocalEmbedder } from '../lambdas/adapters/embeddings/local-embedder';
import {
  createLogger,
  logPort,
  metricsSink,
  METRICS_NAMESPACE,
} from '../lambdas/adapters/observability/powertools';
import { createDocumentParser } from '../lambdas/adapters/parsers';
import type { Database } from '../lambdas/adapters/postgres/database';
import { createDocumentRepository } from '../lambdas/adapters/postgres/document-repository';
import { ensureEmbeddingModel } from '../lambdas/adapters/postgres/embedding-guard';
import { migrate } from '../lambdas/adapters/postgres/migrate';
import { openPGlite } from '../lambdas/adapters/postgres/pglite-database';
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
import type { Reranker } from '../lambdas/core/retrieval/rerank';
import { createSearch, type Search, type SearchSettings } from '../lambdas/core/retrieval/search';
import { makeHandler as makeIngestHandler } from '../lambdas/ingest/handler';
import { createDynamoLimitStore } from '../lambdas/adapters/dynamodb/limit-store';
import { DEFAULT_LIMITS_CONFIG, type LimitsConfig } from '../lambdas/core/limits/config';
import { createLimiter, type Limiter } from '../lambdas/core/limits/limiter';
import { startLocalDynamo } from './dynamodb';
import { createIngestQueue, type IngestQueue } from './ingest-queue';

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
  readonly ingestion?: Partial<IngestionSettings>;
  /** Accumulates ingestion stage timings (benchmarks). */
  readonly ingestionTimings?: StageTimings;
  readonly search?: Partial<SearchSettings>;
  /** Rerank stage after fusion; none when undefined. */
  readonly reranker?: Reranker | null;
  readonly answer?: Partial<AnswerSettings>;
  /** Quotas and rate limits; defaults to the built-in plans. */
  readonly limits?: LimitsConfig;
  /** The LLM; null or undefined selects the offline extractive answerer. */
  readonly llm?: LlmProvider | null;
  readonly logLevel?: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR' | 'SILENT';
  readonly embedThreads?: number;
  /** Skip the check that the index was built with this embedder (only `groundwork reembed` does). */
  readonly skipEmbeddingGuard?: boolean;
}

export interface LocalStack {
  readonly db: Database;
  readonly embedder: Embedder;
  readonly ingestion: Ingestion;
  readonly search: Search;
  readonly conversations: ConversationStore;
  readonly answering: Answering;
  readonly limiter: Limiter;
  readonly documents: Documents;
  readonly admin: Admin;
  readonly queue: IngestQueue;
  readonly s3: { readonly client: S3Client; readonly endpoint: string; readonly bucket: string };
  readonly logger: Logger;
  stop(): Promise<void>;
}

/** Any origin may PUT and GET (the emulator listens on localhost only). */
const LOCAL_BUCKET_CORS = `<CORSConfiguration>
  <CORSRule>
    <AllowedOrigin>*</AllowedOrigin>
    <AllowedMethod>PUT</AllowedMethod>
    <AllowedMethod>GET</AllowedMethod>
    <AllowedMethod>HEAD</AllowedMethod>
    <AllowedHeader>*</AllowedHeader>
    <MaxAgeSeconds>600</MaxAgeSeconds>
  </CORSRule>
</CORSConfiguration>`;

/** Encodes a key the way S3 event notifications do (URL-encoded, spaces as `+`). */
export function encodeS3EventKey(key: string): string {
  return encodeURIComponent(key).replace(/%20/g, '+').replace(/%2F/g, '/');
}

/** Creates an S3 client for the emulator (path-style, fixed credentials, no streaming checksums). */
export function localS3Client(endpoint: string): S3Client {
  return new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
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
  const metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName: 'groundwork-local' });

  if (options.dataDir) await mkdir(options.dataDir, { recursive: true });
  const db =
    options.db ??
    (await openPGlite(options.dataDir ? path.join(options.dataDir, 'pgdata') : undefined));
  const embedder =
    options.embedder ??
    (await createLocalEmbedder(
      options.embedThreads === undefined ? {} : { threads: options.embedThreads },
    ));
  let s3rver: S3rver | undefined;
  const dynamo = await startLocalDynamo(
    options.dataDir ? { dataDir: path.join(options.dataDir, 'dynamodb') } : {},
  );
  try {
    await migrate(db);
    if (!options.skipEmbeddingGuard) await ensureEmbeddingModel(db, embedder);

    const s3Dir = options.dataDir ? path.join(options.dataDir, 's3') : await tempDir();
    s3rver = new S3rver({
      address: '127.0.0.1',
      port: options.s3Port ?? 0,
      silent: true,
      directory: s3Dir,
      // The playground uploads straight to the bucket from the browser, as it does to S3.
      configureBuckets: [{ name: bucket, configs: [LOCAL_BUCKET_CORS] }],
    });
    const server = await s3rver.run();
    const { port } = server as unknown as AddressInfo;
    const endpoint = `http://127.0.0.1:${port}`;
    const client = localS3Client(endpoint);
    await client
      .send(new HeadBucketCommand({ Bucket: bucket }))
      .catch(() => client.send(new CreateBucketCommand({ Bucket: bucket })));

    const ingestion = createIngestion({
      store: createDocumentRepository(db),
      objects: createS3ObjectStore(client),
      parser: createDocumentParser(),
      embedder,
      tokens: createTokenCounter(),
      settings: options.ingestion,
      ...(options.ingestionTimings ? { timings: options.ingestionTimings } : {}),
      log: logPort(logger),
      metrics: metricsSink(metrics),
    });
    const search = createSearch({
      store: createSearchRepository(db),
      embedder,
      reranker: options.reranker ?? null,
      settings: options.search,
      log: logPort(logger),
      metrics: metricsSink(metrics),
    });
    const tokens = createTokenCounter();
    const conversations = createConversationRepository(db);
    const answering = createAnswering({
      search,
      embedder,
      tokens,
      conversations,
      prompts: createPromptRepository(db),
      llm: options.llm ?? null,
      settings: options.answer,
      log: logPort(logger),
      metrics: metricsSink(metrics),
    });
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
        maxUploadBytes:
          options.ingestion?.maxObjectBytes ?? DEFAULT_INGESTION_SETTINGS.maxObjectBytes,
      },
    });
    const admin = createAdmin({ store: createAdminStore(db), limiter });
    const handler = makeIngestHandler({ ingestion, logger, metrics });
    const queue = createIngestQueue((event, context) => handler(event, context), {
      onError: (err) => logger.error('local ingest batch failed', { err }),
      // PGlite runs no autovacuum: without fresh statistics the planner misjudges every table
      // (e.g. it ignores the GIN and HNSW indexes), so refresh them when a batch of writes ends.
      ...(db.kind === 'pglite'
        ? { onIdle: () => db.exec('ANALYZE documents, chunks, term_stats, tenant_stats') }
        : {}),
      batchSize: 4,
      concurrency: 4,
    });
    s3rver.on('event', (event: { Records: { s3: { object: { key: string } } }[] }) => {
      for (const r of event.Records) r.s3.object.key = encodeS3EventKey(r.s3.object.key);
      queue.push(event);
    });

    const running = s3rver;
    return {
      db,
      embedder,
      ingestion,
      search,
      conversations,
      answering,
      limiter,
      documents,
      admin,
      queue,
      s3: { client, endpoint, bucket },
      logger,
      async stop() {
        await queue.stop();
        client.destroy();
        await running.close();
        await dynamo.stop();
        await embedder.close?.();
        if (!options.db) await db.close();
      },
    };
  } catch (err) {
    await s3rver?.close().catch(() => undefined);
    await dynamo.stop();
    await embedder.close?.();
    if (!options.db) await db.close();
    throw err;
  }
}

async function tempDir(): Promise<string> {
  const { mkdtemp } = await import('node:fs/promises');
  const os = await import('node:os');
  return mkdtemp(path.join(os.tmpdir(), 'groundwork-s3-'));
}
