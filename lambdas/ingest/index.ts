/**
 * Production entry of the `ingest` Lambda: SQS messages carrying S3 event notifications.
 *
 * Cold start: the environment is parsed once (a bad variable fails the init, naming it), the
 * S3 and Bedrock clients are created once, and the database pool opens on the first message,
 * so init makes no network call. PDF.js, mammoth and the HTML parser load on the first PDF,
 * Word or HTML document (see adapters/parsers), the cl100k tokenizer on the first document
 * (see adapters/tokenizer); in AWS all four ship beside the bundle (lib/bundling.ts).
 */
import { databaseFromEnv } from '../adapters/aws/lambda-wiring';
import { embedderFromEnv, liveEmbedderFromEnv } from '../adapters/aws/embedder-from-env';
import { S3Client } from '@aws-sdk/client-s3';
// A namespace import lets esbuild tree-shake zod (a named `{ z }` import keeps all of it).
import * as z from '../core/zod';
import { lambdaEnvSchema, parseEnv } from '../adapters/aws/lambda-env';
import { createBedrockRuntimeClient } from '../adapters/embeddings/bedrock-runtime-client';
import {
  createObservability,
  logPort,
  metricsSink,
  traceClient,
} from '../adapters/observability/powertools';
import { createDocumentParser } from '../adapters/parsers';
import type { Database } from '../adapters/postgres/database';
import { createDocumentRepository } from '../adapters/postgres/document-repository';
import { createS3ObjectStore } from '../adapters/s3/s3-object-store';
import { createTokenCounter } from '../adapters/tokenizer/gpt-token-counter';
import { dbTenantScope } from '../adapters/postgres/db-scope';
import type { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { createModelSwitchStore } from '../adapters/postgres/model-switch-store';
import { createModelSwitch } from '../core/embedding/model-switch';
import { createIngestion, DEFAULT_INGESTION_SETTINGS } from '../core/ingestion/ingest';
import { DEFAULT_KEY_LAYOUT } from '../core/ingestion/object-attributes';
import { createIngestRecovery } from '../core/ingestion/recovery';
import { makeHandler } from './handler';

/** The `ingest` function's environment (set by the CDK app's grant helpers). */
export const ingestEnvSchema = z.extend(lambdaEnvSchema, {
  POWERTOOLS_SERVICE_NAME: z._default(z.string().check(z.minLength(1)), 'ingest'),
  /** The ingest queue's dead-letter queue, which this function also consumes (IngestRecovery). */
  DEAD_LETTER_QUEUE_ARN: z.optional(z.string().check(z.minLength(1))),
  /** Model switch: chunks per batch and the pause between batches (core/embedding/model-switch.ts). */
  EMBEDDING_SWITCH_BATCH_CHUNKS: z.optional(z.pipe(z.coerce.number(), z.int().check(z.gte(1)))),
  EMBEDDING_SWITCH_PAUSE_MS: z.optional(z.pipe(z.coerce.number(), z.int().check(z.gte(0)))),
});
export type IngestEnv = z.infer<typeof ingestEnvSchema>;

const env = parseEnv(ingestEnvSchema);
const { logger, metrics, tracer } = createObservability(env.POWERTOOLS_SERVICE_NAME);

const db: Database = databaseFromEnv(env, tracer);

// Bulk ingestion: adaptive retries slow the whole Bedrock client down once Bedrock throttles.
let bedrock: BedrockRuntimeClient | undefined;
const bedrockClient = () =>
  (bedrock ??= traceClient(
    tracer,
    createBedrockRuntimeClient({ region: env.AWS_REGION, retryMode: 'adaptive' }),
  ));
// The configured model; documents are embedded with the index's live model (the one replaced,
// while a switch to the configured model runs), which the switch's job re-embeds meanwhile.
const configured = embedderFromEnv(env, bedrockClient);
const embedder = liveEmbedderFromEnv(env, configured, db, bedrockClient);
const tokens = createTokenCounter();

const store = createDocumentRepository(db);
const keyLayout = { ...DEFAULT_KEY_LAYOUT, globalPublishers: env.PUBLISHING_TENANTS };
const objects = createS3ObjectStore(traceClient(tracer, new S3Client({ region: env.AWS_REGION })));
const ingestion = createIngestion({
  store,
  objects,
  parser: createDocumentParser(),
  embedder,
  tokens,
  settings: { maxObjectBytes: env.MAX_OBJECT_BYTES, keyLayout },
  log: logPort(logger),
  metrics: metricsSink(metrics),
  tenantScope: dbTenantScope,
});

const recovery = createIngestRecovery({
  store,
  objects,
  ingestion,
  settings: { keyLayout },
  log: logPort(logger),
  metrics: metricsSink(metrics),
  tenantScope: dbTenantScope,
});

const modelSwitch = createModelSwitch({
  store: createModelSwitchStore(db),
  target: configured,
  tokens,
  embedding: DEFAULT_INGESTION_SETTINGS,
  settings: {
    ...(env.EMBEDDING_SWITCH_BATCH_CHUNKS
      ? { batchChunks: env.EMBEDDING_SWITCH_BATCH_CHUNKS }
      : {}),
    ...(env.EMBEDDING_SWITCH_PAUSE_MS !== undefined
      ? { pauseMs: env.EMBEDDING_SWITCH_PAUSE_MS }
      : {}),
  },
  onSwitched: () => embedder.refresh(),
  log: logPort(logger),
  metrics: metricsSink(metrics),
});

/**
 * SQS batch handler with partial batch responses (`reportBatchItemFailures`), for the ingest
 * queue and its dead-letter queue; the scheduled lease sweep.
 */
export const handler = makeHandler({
  ingestion,
  recovery,
  modelSwitch,
  ...(env.DEAD_LETTER_QUEUE_ARN ? { deadLetterQueueArn: env.DEAD_LETTER_QUEUE_ARN } : {}),
  logger,
  metrics,
  tracer,
});
