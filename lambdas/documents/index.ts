/**
 * Production entry of the `documents` Lambda: GET /documents behind API Gateway's JWT authorizer.
 *
 * Cold start: the environment is parsed once (failing with the variable's name), the limiter's
 * DynamoDB client is created once, and the database pool opens on the first request.
 */
// A namespace import lets esbuild tree-shake zod (a named `{ z }` import keeps all of it).
import { databaseFromEnv, limiterFromEnv, limitsEnvShape } from '../adapters/aws/lambda-wiring';
import * as z from 'zod';
import { lambdaEnvSchema, parseEnv } from '../adapters/aws/lambda-env';
import { createObservability } from '../adapters/observability/powertools';
import type { Database } from '../adapters/postgres/database';
import { makeListHandler } from './handler';

/** The `documents` function's environment (set by the CDK app's grant helpers). */
export const documentsEnvSchema = lambdaEnvSchema.extend({
  POWERTOOLS_SERVICE_NAME: z.string().min(1).default('documents'),
  ...limitsEnvShape,
});
export type DocumentsEnv = z.infer<typeof documentsEnvSchema>;

const env = parseEnv(documentsEnvSchema);
const { logger, metrics } = createObservability(env.POWERTOOLS_SERVICE_NAME);

const db: Database = databaseFromEnv(env);

const limiter = limiterFromEnv(env, { logger, metrics });

/** GET /documents. */
export const handler = makeListHandler({ logger, metrics, limiter, db });
