/**
 * Production entry of the `rag-search` Lambda: POST /search behind API Gateway's JWT authorizer.
 *
 * Cold start: the environment (limits config included) is parsed once and fails naming the bad
 * variable; Bedrock and DynamoDB clients are created once; the database pool opens on the first
 * request, so init makes no network call.
 */
// A namespace import lets esbuild tree-shake zod (a named `{ z }` import keeps all of it).
import * as z from 'zod';
import { lazyDatabaseFromSecret } from '../adapters/aws/database-from-secret';
import { lambdaEnvSchema, parseEnv } from '../adapters/aws/lambda-env';
import {
  createDynamoLimitStore,
  createLimitsDynamoDbClient,
} from '../adapters/dynamodb/limit-store';
import { createBedrockEmbedder } from '../adapters/embeddings/bedrock-embedder';
import { createBedrockRuntimeClient } from '../adapters/embeddings/bedrock-runtime-client';
import { createObservability, logPort, metricsSink } from '../adapters/observability/powertools';
import type { Database } from '../adapters/postgres/database';
import { createSearchRepository } from '../adapters/postgres/search-repository';
import { parseLimitsConfigJson } from '../core/limits/config';
import { createLimiter } from '../core/limits/limiter';
import { createSearch } from '../core/retrieval/search';
import { makeHandler } from './handler';

/** The `rag-search` function's environment (set by the CDK app's grant helpers). */
export const searchEnvSchema = lambdaEnvSchema.extend({
  POWERTOOLS_SERVICE_NAME: z.string().min(1).default('rag-search'),
  /** DynamoDB table of the limiter (rate limits, quotas, daily cost). */
  LIMITS_TABLE: z.string().min(1),
  /** Plans, quotas and caps as JSON (empty: the built-in defaults). */
  LIMITS_CONFIG: z.string().optional(),
});
export type SearchEnv = z.infer<typeof searchEnvSchema>;

const env = parseEnv(searchEnvSchema);
const limitsConfig = parseLimitsConfigJson(env.LIMITS_CONFIG, 'LIMITS_CONFIG');
const { logger, metrics } = createObservability(env.POWERTOOLS_SERVICE_NAME);

const db: Database = lazyDatabaseFromSecret({
  secretArn: env.DB_SECRET_ARN,
  region: env.AWS_REGION,
  database: env.DB_NAME,
  ...(env.DB_HOST ? { host: env.DB_HOST } : {}),
});

const search = createSearch({
  store: createSearchRepository(db),
  embedder: createBedrockEmbedder({
    client: createBedrockRuntimeClient({ region: env.AWS_REGION }),
    modelId: env.EMBEDDING_MODEL_ID,
    dimension: env.EMBEDDING_DIMENSION,
  }),
  log: logPort(logger),
  metrics: metricsSink(metrics),
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

/** POST /search. */
export const handler = makeHandler({ logger, metrics, search, limiter });
