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
 * | `POST /admin/prompts/{id}/deactivate` | back to the default for its profile         |
 * | `... /api/admin/lexybrain/...`        | seed 000's admin routes (lexybrain-handler) |
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
import { makeLexyBrainAdminHandlers } from './lexybrain-handler';

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
const deps = {
  logger,
  metrics,
  tracer,
  limiter,
  admin: createAdmin({ store: createAdminStore(db), limiter }),
};
const h = makeAdminHandlers(deps);
const lexy = makeLexyBrainAdminHandlers(deps);

/** The routes this function serves, by API Gateway route key. */
export const routes: Readonly<Record<string, RouteHandler>> = {
  'GET /admin/stats': h.stats,
  'GET /admin/feedback': h.feedback,
  'GET /admin/prompts': h.listPrompts,
  'POST /admin/prompts': h.createPrompt,
  'POST /admin/prompts/{id}/activate': h.activatePrompt,
  'POST /admin/prompts/{id}/deactivate': h.deactivatePrompt,
  'GET /api/admin/lexybrain/rag/stats': lexy.stats,
  'GET /api/admin/lexybrain/rag/feedback': lexy.feedback,
  'GET /api/admin/lexybrain/configs': lexy.listConfigs,
  'POST /api/admin/lexybrain/configs': lexy.createConfig,
  'POST /api/admin/lexybrain/configs/{id}/activate': lexy.activateConfig,
  'POST /api/admin/lexybrain/configs/{id}/deactivate': lexy.deactivateConfig,
};

export const handler = dispatchByRouteKey(routes, logger);
