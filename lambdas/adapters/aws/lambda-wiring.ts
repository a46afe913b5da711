/**
 * What every API Lambda entry builds the same way from its parsed environment: the lazily opened
 * database and the limiter on the limits table. One place, so the entries cannot drift.
 */
import type { Tracer } from '@aws-lambda-powertools/tracer';
import { traceDatabase } from '../observability/traced-database';
import type { Database } from '../postgres/database';
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
