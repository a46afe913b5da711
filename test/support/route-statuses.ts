/**
 * The status a route answers for an error, as its contract says (API_ROUTES `statuses`): seed
 * 001's routes answer 400 and 500 where the others answer the error model's 422 and 503.
 */
import { API_ROUTES } from '../../lambdas/http/api-routes';

export function errorStatus(
  method: string,
  path: string,
  kind: 'validation' | 'unavailable',
): number {
  const route = API_ROUTES.find((r) => r.method === method && r.path === path);
  const fallback = kind === 'validation' ? 422 : 503;
  return route?.statuses?.[kind] ?? fallback;
}
