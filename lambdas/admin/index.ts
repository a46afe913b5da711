/**
 * Production entry of the `admin` Lambda: the /api/admin routes of the route table (admin group only, checked by
 * the use cases) behind the REST API's Cognito authorizer, dispatched on the event's route key: the
 * project's own (handler.ts) and seed 000's /api/admin/lexybrain routes (lexybrain-handler.ts).
 *
 * Cold start: the environment is parsed once, the DynamoDB client is created once, and the
 * database pool opens on the first request.
 */
// A namespace import lets esbuild tree-shake zod (a named `{ z }` import keeps all of it).
import * as z from '../core/zod';
import { lambdaEnvSchema, parseEnv } from '../adapters/aws/lambda-env';
import { databaseFromEnv, limiterFromEnv, limitsEnvShape } from '../adapters/aws/lambda-wiring';
import { createObservability } from '../adapters/observability/powertools';
import { createAdminStore } from '../adapters/postgres/admin-queries';
import { createAdmin } from '../core/admin/admin';
import { apiDepsFromEnv, apiEnvShape } from '../http/api-env';
import { bindRoutes, dispatchByRouteKey, type RouteHandler } from '../http/route-dispatch';
import { adminRouteHandlers } from './routes';

/** The `admin` function's environment (set by the CDK app's grant helpers). */
export const adminEnvSchema = z.extend(lambdaEnvSchema, {
  POWERTOOLS_SERVICE_NAME: z._default(z.string().check(z.minLength(1)), 'admin'),
  ...limitsEnvShape,
  ...apiEnvShape,
});
export type AdminEnv = z.infer<typeof adminEnvSchema>;

const env = parseEnv(adminEnvSchema);
const observability = createObservability(env.POWERTOOLS_SERVICE_NAME);
const { logger, metrics, tracer } = observability;

const db = databaseFromEnv(env, tracer);
const limiter = limiterFromEnv(env, observability);
/** The routes this function serves, by route key (from the route table). */
export const routes: Readonly<Record<string, RouteHandler>> = bindRoutes(
  'admin',
  adminRouteHandlers({
    logger,
    metrics,
    tracer,
    limiter,
    ...apiDepsFromEnv(env),
    admin: createAdmin({ store: createAdminStore(db), limiter }),
  }),
);

export const handler = dispatchByRouteKey(routes, logger);
