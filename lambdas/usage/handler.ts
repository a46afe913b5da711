/**
 * The `usage` Lambda: GET /api/usage, the caller's plan, quotas used and remaining, and rate window.
 * Reading usage consumes no monthly quota (the `usage` route maps to none); like every route it
 * counts toward the rate limit.
 */
import * as z from '../core/zod';
import type { Limiter, QuotaReport } from '../core/limits/limiter';
import { unixSeconds } from '../core/limits/periods';
import { createHttpHandler, type HttpHandlerDeps } from '../http/http-handler';
import { usageRequestSchema, type UsageResponseBody } from './schema';

const USAGE_ROUTE = 'usage';

const quotaBody = (q: QuotaReport) => ({
  limit: q.limit,
  used: q.used,
  remaining: q.remaining,
  resets_at: q.resetsAt.toISOString(),
});

export function makeHandler(deps: HttpHandlerDeps & { limiter: Limiter }) {
  return createHttpHandler(
    deps,
    { route: USAGE_ROUTE, schema: usageRequestSchema },
    async ({ identity }) => {
      const report = await deps.limiter.usage(identity);
      const body: UsageResponseBody = {
        plan: report.plan,
        period: report.month,
        quotas: {
          answers: quotaBody(report.quotas.answers),
          searches: quotaBody(report.quotas.searches),
        },
        rate_limit: {
          limit: report.rateLimit.limit,
          remaining: report.rateLimit.remaining,
          window_seconds: 60,
          resets_at: report.rateLimit.resetsAt.toISOString(),
          reset: unixSeconds(report.rateLimit.resetsAt),
        },
      };
      return { body, headers: { 'cache-control': 'no-store' } };
    },
  );
}

/** The route name of GET /api/health in metrics. */
const HEALTH_ROUTE = 'health';

/** GET /api/health: liveness, no authorizer; touches neither the database nor DynamoDB. */
function makeHealthHandler(deps: Pick<HttpHandlerDeps, 'logger' | 'metrics' | 'tracer'>) {
  return createHttpHandler(
    deps,
    { route: HEALTH_ROUTE, schema: z.looseObject({}), authenticated: false },
    async () => ({ body: { status: 'ok' }, headers: { 'cache-control': 'no-store' } }),
  );
}

/** Every route of the `usage` function, by name (bound to paths by bindRoutes). */
export function usageRouteHandlers(deps: HttpHandlerDeps & { limiter: Limiter }) {
  return { health: makeHealthHandler(deps), usage: makeHandler(deps) };
}
