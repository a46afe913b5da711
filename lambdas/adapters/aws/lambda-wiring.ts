/**
 * What every API Lambda entry builds the same way from its parsed environment: the lazily opened
 * database and the limiter on the limits table. One place, so the entries cannot drift.
 */
import type { Tracer } from '@aws-lambda-powertools/tracer';
import { traceDatabase } from '../observability/traced-database';
import type { Database } from '../postgres/database';
import { databases, type Databases } from '../postgres/databases';
import { lazyDatabaseFromSecret } from './database-from-secret';
import type { LambdaEnv } from './lambda-env';

export { limiterFromEnv, limitsEnvShape } from './limiter-from-env';

/**
 * The database of the environment's secret, opened on first use; with `tracer`, a subsegment per
 * statement and for the Secrets Manager read.
 */
export function databaseFromEnv(
  env: Pick<LambdaEnv, 'DB_SECRET_ARN' | 'AWS_REGION' | 'DB_NAME' | 'DB_HOST'>,
  tracer?: Tracer,
): Database {
  return traceDatabase(
    lazyDatabaseFromSecret({
      secretArn: env.DB_SECRET_ARN,
      region: env.AWS_REGION,
      database: env.DB_NAME,
      ...(env.DB_HOST ? { host: env.DB_HOST } : {}),
      ...(tracer ? { tracer } : {}),
    }),
    tracer,
  );
}

/**
 * The writer (`DB_HOST`) and the reads (`DB_READ_HOST`, with the same secret): two pools, each
 * opened on first use, or the writer alone for both when no read host is set.
 */
export function databasesFromEnv(
  env: Pick<LambdaEnv, 'DB_SECRET_ARN' | 'AWS_REGION' | 'DB_NAME' | 'DB_HOST' | 'DB_READ_HOST'>,
  tracer?: Tracer,
): Databases {
  const writer = databaseFromEnv(env, tracer);
  return databases(
    writer,
    env.DB_READ_HOST ? databaseFromEnv({ ...env, DB_HOST: env.DB_READ_HOST }, tracer) : undefined,
  );
}
