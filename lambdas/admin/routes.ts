/**
 * The `admin` function's route handlers by route name (lambdas/http/api-routes.ts): the
 * project's /api/admin routes and seed 000's /api/admin/lexybrain routes, over one `Admin`.
 * Composed once for the Lambda entry (index.ts) and the embedded default (local/api.ts).
 */
import type { Admin } from '../core/admin/admin';
import type { HttpHandlerDeps } from '../http/http-handler';
import { makeAdminHandlers } from './handler';
import { makeLexyBrainAdminHandlers } from './lexybrain-handler';

export function adminRouteHandlers(deps: HttpHandlerDeps & { admin: Admin }) {
  return { ...makeAdminHandlers(deps), ...makeLexyBrainAdminHandlers(deps) };
}
