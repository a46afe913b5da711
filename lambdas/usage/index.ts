/**
 * Production entry of the `usage` Lambda: GET /api/usage (the caller's plan, quotas and rate window, behind
 * the Cognito authorizer) and GET /api/health (liveness, no authorizer), dispatched on the event's route key.
 *
 * /api/health deliberately touches neither the database nor DynamoDB: an uptime probe must not keep
 * Aurora Serverless from pausing, nor cost a read per probe.
 *
 * Cold start: the environment (limits config included) is parsed once and fails naming the bad
 * variable; the DynamoDB client is created once. No database, no network call at init.
 */
// A namespace import lets esbuild tree-shake zod (a named `{ z }` import keeps all of it).
import * as z from '../core/zod';
import { parseEnv } from '../adapters/aws/lambda-env';
// Not lambda-wiring: that one also brings the database (pg), which this function never opens.
import { limiterFromEnv, limitsEnvShape } from '../adapters/aws/limiter-from-env';
import { createObservability } from '../adapters/observability/powertools';
import { apiDepsFromEnv, apiEnvShape } from '../http/api-env';
import { bindRoutes, dispatchByRouteKey, type RouteHandler } from '../http/route-dispatch';
import { usageRouteHandlers } from './handler';

/** The `usage` function's environment: no database, only the limits table. */
export const usageEnvSchema = z.object({
  AWS_REGION: z.string().check(z.minLength(1)),
  POWERTOOLS_SERVICE_NAME: z._default(z.string().check(z.minLength(1)), 'usage'),
  ...limitsEnvShape,
  ...apiEnvShape,
});
export type UsageEnv = z.infer<typeof usageEnvSchema>;

const env = parseEnv(usageEnvSchema);
const observability = createObservability(env.POWERTOOLS_SERVICE_NAME);
const { logger, metrics, tracer } = observability;

const limiter = limiterFromEnv(env, observability);

/** The routes this function serves, by route key (from the route table). */
export const routes: Readonly<Record<string, RouteHandler>> = bindRoutes(
  'usage',
  usageRouteHandlers({ logger, metrics, tracer, limiter, ...apiDepsFromEnv(env) }),
);

export const handler = dispatchByRouteKey(routes, logger);
