/**
 * Production entry of the `admin` Lambda: the /admin routes (admin group only, checked by the
 * use cases) behind API Gateway's JWT authorizer, routed on `event.routeKey`:
 *
 * | routeKey                              | handler                                     |
 * |---------------------------------------|---------------------------------------------|
 * | `GET /admin/stats`                    | documents, conversations, answers, quotas   |
 * | `GET /admin/feedback`                 | feedback, newest first, paged               |
 * | `GET /admin/prompts`                  | defaults and the tenant's versions          |
 * | `POST /admin/prompts`                 | the tenant's next version                   |
 * | `POST /admin/prompts/{id}/activate`   | makes a version the active one              |
 * | `GET /api/admin/source-policy`        | the tenant's source-type policy             |
 * | `POST /api/admin/source-policy`       | sets it                                     |
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
import { dispatchByRouteKey, type RouteHandler } from '../http/route-dispatch';
import { makeAdminHandlers } from './handler';

/** The `admin` function's environment (set by the CDK app's grant helpers). */
export const adminEnvSchema = z.extend(lambdaEnvSchema, {
  POWERTOOLS_SERVICE_NAME: z._default(z.string().check(z.minLength(1)), 'admin'),
  ...limitsEnvShape,
});
export type AdminEnv = z.infer<typeof adminEnvSchema>;

const env = parseEnv(adminEnvSchema);
const observability = createObservability(env.POWERTOOLS_SERVICE_NAME);
const { logger, metrics, tracer } = observability;

const db = databaseFromEnv(env, tracer);
const limiter = limiterFromEnv(env, observability);
const h = makeAdminHandlers({
  logger,
  metrics,
  tracer,
  limiter,
  admin: createAdmin({ store: createAdminStore(db), limiter }),
});

/** The routes this function serves, by API Gateway route key. */
export const routes: Readonly<Record<string, RouteHandler>> = {
  'GET /admin/stats': h.stats,
  'GET /admin/feedback': h.feedback,
  'GET /admin/prompts': h.listPrompts,
  'POST /admin/prompts': h.createPrompt,
  'POST /admin/prompts/{id}/activate': h.activatePrompt,
  'GET /api/admin/source-policy': h.getSourceTypePolicy,
  'POST /api/admin/source-policy': h.setSourceTypePolicy,
};

export const handler = dispatchByRouteKey(routes, logger);
