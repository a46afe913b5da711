/**
 * Production entry of the `rag-search` Lambda: its routes in the route table (POST
 * /api/rag/search) behind API Gateway's JWT authorizer, dispatched on `event.routeKey`.
 *
 * Cold start: the environment (limits config included) is parsed once and fails naming the bad
 * variable; Bedrock and DynamoDB clients are created once; the database pool opens on the first
 * request, so init makes no network call.
 */
// A namespace import lets esbuild tree-shake zod (a named `{ z }` import keeps all of it).
import { databasesFromEnv, limiterFromEnv, limitsEnvShape } from '../adapters/aws/lambda-wiring';
import { searchFromEnv } from '../adapters/aws/search-from-env';
import * as z from '../core/zod';
import { lambdaEnvSchema, parseEnv } from '../adapters/aws/lambda-env';
import { createBedrockRuntimeClient } from '../adapters/embeddings/bedrock-runtime-client';
import {
  createObservability,
  logPort,
  metricsSink,
  traceClient,
} from '../adapters/observability/powertools';
import { bindRoutes, dispatchByRouteKey, type RouteHandler } from '../http/route-dispatch';
import { searchRouteHandlers } from './handler';

/** The `rag-search` function's environment (set by the CDK app's grant helpers). */
export const searchEnvSchema = z.extend(lambdaEnvSchema, {
  POWERTOOLS_SERVICE_NAME: z._default(z.string().check(z.minLength(1)), 'rag-search'),
  ...limitsEnvShape,
});
export type SearchEnv = z.infer<typeof searchEnvSchema>;

const env = parseEnv(searchEnvSchema);
const observability = createObservability(env.POWERTOOLS_SERVICE_NAME);
const { logger, metrics, tracer } = observability;

// Search reads only: from the readers when DB_READ_HOST is set (postgres/databases.ts).
const { reads } = databasesFromEnv(env, tracer);

const bedrock = traceClient(tracer, createBedrockRuntimeClient({ region: env.AWS_REGION }));
const { search } = searchFromEnv(env, {
  reads,
  bedrock,
  log: logPort(logger),
  metrics: metricsSink(metrics),
});

const limiter = limiterFromEnv(env, observability);

/** The routes this function serves, by API Gateway route key (from the route table). */
export const routes: Readonly<Record<string, RouteHandler>> = bindRoutes(
  'rag-search',
  searchRouteHandlers({ logger, metrics, tracer, search, limiter }),
);

export const handler = dispatchByRouteKey(routes, logger);
