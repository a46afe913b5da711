/**
 * Production entry of the `documents` Lambda: GET /documents behind API Gateway's JWT authorizer.
 *
 * Cold start: the environment is parsed once (failing with the variable's name), the limiter's
 * DynamoDB client is created once, and the database pool opens on the first request.
 */
// A namespace import lets esbuild tree-shake zod (a named `{ z }` import keeps all of it).
import * as z from 'zod';
import { lazyDatabaseFromSecret } from '../adapters/aws/database-from-secret';
import { lambdaEnvSchema, parseEnv } from '../adapters/aws/lambda-env';
import {
  createDynamoLimitStore,
  createLimitsDynamoDbClient,
} from '../adapters/dynamodb/limit-store';
import { createObservability, logPort, metricsSink } from '../adapters/observability/powertools';
import type { Database } from '../adapters/postgres/database';
import { parseLimitsConfigJson } from '../core/limits/config';
import { createLimiter } from '../core/limits/limiter';
import { makeListHandler } from './handler';

/** The `documents` function's environment (set by the CDK app's grant helpers). */
export const documentsEnvSchema = lambdaEnvSchema.extend({
  POWERTOOLS_SERVICE_NAME: z.string().min(1).default('documents'),
  LIMITS_TABLE: z.string().min(1),
  LIMITS_CONFIG: z.string().optional(),
});
export type DocumentsEnv = z.infer<typeof documentsEnvSchema>;

const env = parseEnv(documentsEnvSchema);
const limitsConfig = parseLimitsConfigJson(env.LIMITS_CONFIG, 'LIMITS_CONFIG');
const { logger, metrics } = createObservability(env.POWERTOOLS_SERVICE_NAME);

const db: Database = lazyDatabaseFromSecret({
  secretArn: env.DB_SECRET_ARN,
  region: env.AWS_REGION,
  database: env.DB_NAME,
  ...(env.DB_HOST ? { host: env.DB_HOST } : {}),
});

const limiter = createLimiter({
  store: createDynamoLimitStore({
    client: createLimitsDynamoDbClient({ region: env.AWS_REGION }),
    tableName: env.LIMITS_TABLE,
  }),
  config: limitsConfig,
  log: logPort(logger),
  metrics: metricsSink(metrics),
});

/** GET /documents. */
export const handler = makeListHandler({ logger, metrics, limiter, db });
