/**
 * Production entry of the `migrate` Lambda: the onEvent handler of a CloudFormation custom
 * resource (CDK Provider framework) that applies `migrations/` with the same runner as the
 * embedded default, on create and on every update (the resource's properties carry the
 * migrations' hash, so a deploy that changes them triggers a run). The runner is idempotent:
 * applied files are skipped, a changed applied file is an error that fails the deploy.
 *
 * It then records the configured embedding model on a new database or, when the index was built
 * with another model, begins a switch to the configured one: the ingest function re-embeds on
 * its schedule while search keeps the live model (docs/decisions/0148-switching-embedding-models.md).
 * Then it makes the database's filter indexes those cdk.json declares (`filterIndexes`,
 * filter-indexes.ts): a new value's chunks are copied and its HNSW index built within the
 * function's timeout. Then it builds or drops the exact-scan index as cdk.json's `exactScanIndex`
 * asks (exact-scan-index.ts). Delete does nothing: removing the stack never drops data.
 *
 * The SQL files are copied next to the bundle (`migrations/`) by the function's bundling hook.
 */
import path from 'node:path';
import type { CloudFormationCustomResourceEvent, Context } from 'aws-lambda';
// A namespace import lets esbuild tree-shake zod (a named `{ z }` import keeps all of it).
import * as z from '../core/zod';
import {
  createDatabaseFromSecret,
  openWhenReady,
  readDatabaseSecret,
} from '../adapters/aws/database-from-secret';
import { lambdaEnvSchema, parseEnv } from '../adapters/aws/lambda-env';
import { configuredSpec, embedderFromEnv } from '../adapters/aws/embedder-from-env';
import { createBedrockRuntimeClient } from '../adapters/embeddings/bedrock-runtime-client';
import { createLogger } from '../adapters/observability/powertools';
import { APP_GROUP_ROLE, ensureAppRole } from '../adapters/postgres/app-role';
import { reconcileEmbeddingModel } from '../adapters/postgres/embedding-guard';
import { reconcileExactScanIndex } from '../adapters/postgres/exact-scan-index';
import { parseFilterIndexes, reconcileFilterIndexes } from '../adapters/postgres/filter-indexes';
import { loadMigrations, migrate } from '../adapters/postgres/migrate';

/** The `migrate` function's environment (set by the CDK app's grant helpers). */
export const migrateEnvSchema = z.extend(lambdaEnvSchema, {
  POWERTOOLS_SERVICE_NAME: z._default(z.string().check(z.minLength(1)), 'migrate'),
  /** Where the SQL files are; next to the bundle by default. */
  MIGRATIONS_DIR: z.optional(z.string().check(z.minLength(1))),
  /**
   * The application's secret (the login the request-serving functions use): its role is
   * created on first deploy and granted DML only (lambdas/adapters/postgres/app-role.ts).
   * DB_SECRET_ARN is the owner's secret, which only this function reads.
   */
  APP_DB_SECRET_ARN: z.string().check(z.minLength(1)),
  APP_DB_GROUP_ROLE: z._default(z.string().check(z.minLength(1)), APP_GROUP_ROLE),
  /**
   * The metadata values with a filter index of their own, as JSON (cdk.json's `filterIndexes`):
   * the database's declarations are made these after migrating (filter-indexes.ts).
   */
  FILTER_INDEXES: z.optional(z.string()),
  /** `on` when cdk.json's `exactScanIndex` asks for the exact-scan index (exact-scan-index.ts). */
  EXACT_SCAN_INDEX: z._default(z.enum(['on', 'off']), 'off'),
});
export type MigrateEnv = z.infer<typeof migrateEnvSchema>;

/** What the Provider framework expects back from onEvent. */
export interface MigrationResult {
  readonly PhysicalResourceId: string;
  readonly Data?: Readonly<Record<string, string>>;
}

/** One physical resource for the life of the stack: updates never replace it. */
export const PHYSICAL_RESOURCE_ID = 'groundwork-schema';

const env = parseEnv(migrateEnvSchema);
// Logs only: a deploy-time function, not instrumented for X-Ray (no Tracer, no X-Ray SDK loaded).
const logger = createLogger({ serviceName: env.POWERTOOLS_SERVICE_NAME });
const migrationsDir = env.MIGRATIONS_DIR ?? path.join(__dirname, 'migrations');
// Only its id and dimension are read: no embedding call is made here.
const embedder = embedderFromEnv(env, () => createBedrockRuntimeClient({ region: env.AWS_REGION }));

/** Time left for migrating once the database answers; the rest of the timeout is for waiting. */
const MIGRATION_RESERVE_MS = 90_000;

/** Applies pending migrations on Create and Update; Delete keeps the data. */
export async function handler(
  event: CloudFormationCustomResourceEvent,
  context?: Pick<Context, 'getRemainingTimeInMillis'>,
): Promise<MigrationResult> {
  logger.info('migration event', {
    requestType: event.RequestType,
    properties: event.ResourceProperties,
  });
  if (event.RequestType === 'Delete') return { PhysicalResourceId: event.PhysicalResourceId };

  const migrations = await loadMigrations(migrationsDir);
  if (migrations.length === 0)
    throw new Error(`No migrations found in ${migrationsDir}: the bundle is incomplete`);
  // A fresh pool per event: a deploy is rare, and a pool kept across deploys could hold a
  // connection whose credentials were rotated since. On a first deploy the new cluster (or an
  // instance resuming from 0 ACUs) may not accept connections yet: wait for it, within the
  // function's timeout.
  const remaining = context?.getRemainingTimeInMillis() ?? 5 * 60_000;
  const db = await openWhenReady(
    () =>
      createDatabaseFromSecret({
        secretArn: env.DB_SECRET_ARN,
        region: env.AWS_REGION,
        database: env.DB_NAME,
        ...(env.DB_HOST ? { host: env.DB_HOST } : {}),
        // A paused instance resumes within about 15 seconds of the first connection attempt.
        connectTimeoutMs: 30_000,
      }),
    {
      deadline: Date.now() + Math.max(0, remaining - MIGRATION_RESERVE_MS),
      onRetry: (attempt, err) => logger.warn('database not ready, retrying', { attempt, err }),
    },
  );
  try {
    const { applied, routines } = await migrate(db, migrations);
    const models = await reconcileEmbeddingModel(db, {
      modelId: embedder.modelId,
      dimension: embedder.dimension,
      settings: configuredSpec(env),
    });
    const filterIndexes = await reconcileFilterIndexes(
      db,
      parseFilterIndexes(env.FILTER_INDEXES, 'FILTER_INDEXES'),
      (message, fields) => logger.info(message, fields),
    );
    const exactScanIndex = await reconcileExactScanIndex(
      db,
      env.EXACT_SCAN_INDEX === 'on',
      (message, fields) => logger.info(message, fields),
    );
    const app = await readDatabaseSecret(env.APP_DB_SECRET_ARN, env.AWS_REGION);
    const role = await ensureAppRole(db, {
      group: env.APP_DB_GROUP_ROLE,
      login: app.username,
      password: app.password,
    });
    logger.info('migrations applied', {
      applied,
      routines,
      latest: migrations[migrations.length - 1]?.version,
      appRole: { created: role.created },
      embeddingModel: {
        live: models.live?.modelId,
        switchingTo: models.target?.modelId,
        began: models.began,
      },
      filterIndexes,
      exactScanIndex,
    });
    return {
      PhysicalResourceId: PHYSICAL_RESOURCE_ID,
      Data: {
        Applied: applied.join(',') || 'none',
        Latest: migrations[migrations.length - 1]?.version ?? '',
      },
    };
  } finally {
    await db.close();
  }
}
