/**
 * The limiter's response headers: the request lifecycle (request-lifecycle.ts) admits each request
 * after authentication, hands the admission to the handler (`req.admission`; a handler that calls
 * an LLM reports the token usage with `req.admission?.recordUsage(usage, modelId)` so that
 * `settle` adds its cost), merges its headers into the response and settles it in `finally`.
 */
import type { Admission } from '../core/limits/limiter';

/** The response headers with the rate-limit headers added (the handler's own win). */
export function withLimitHeaders(
  headers: Record<string, string> | undefined,
  admission: Admission | undefined,
): Record<string, string> {
  return { ...(admission?.headers ?? {}), ...(headers ?? {}) };
}
