/**
 * The API's CORS policy, one definition for API Gateway (lib/constructs) and the local server:
 * callers authenticate with bearer tokens, never cookies, so any origin may call by default
 * (seed 001); a deployment that wants fewer sets an allowlist (`corsOrigins`).
 */

/** Origins allowed when none are configured. */
export const DEFAULT_CORS_ORIGINS: readonly string[] = ['*'];

/** Request headers a browser may send (seed 001's list). */
export const CORS_ALLOW_HEADERS: readonly string[] = [
  'authorization',
  'x-client-info',
  'apikey',
  'content-type',
];

/** Response headers a browser script may read: the rate-limit headers. */
export const CORS_EXPOSE_HEADERS: readonly string[] = [
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'retry-after',
];

/** How long a browser may cache a preflight answer. */
export const CORS_MAX_AGE_SECONDS = 600;

/** Methods a browser may use (the route table's). */
export const CORS_ALLOW_METHODS: readonly string[] = ['GET', 'POST', 'DELETE'];

/**
 * The CORS headers of a response to a request from `origin`, under `origins`: any origin with
 * `*`, else only a listed one (echoed, with `vary: origin`); none for a request without an origin
 * or from another one. API Gateway answers the preflight; the handlers (and the local server)
 * add these to every response, since a REST API's proxy integration passes responses as they are.
 */
export function corsResponseHeaders(
  origins: readonly string[],
  origin: string | undefined,
): Record<string, string> {
  if (!origin) return {};
  const expose = { 'access-control-expose-headers': CORS_EXPOSE_HEADERS.join(', ') };
  if (origins.includes('*')) return { 'access-control-allow-origin': '*', ...expose };
  if (origins.includes(origin))
    return { 'access-control-allow-origin': origin, vary: 'origin', ...expose };
  return {};
}
