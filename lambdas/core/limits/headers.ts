/** The rate-limit response headers (`X-RateLimit-*`, `Retry-After`) every API response carries. */
import { secondsUntil, unixSeconds } from './periods';

const RATE_LIMIT_HEADERS = {
  limit: 'X-RateLimit-Limit',
  remaining: 'X-RateLimit-Remaining',
  reset: 'X-RateLimit-Reset',
  retryAfter: 'Retry-After',
} as const;

/**
 * The headers for the current rate window. `remaining: null` (the count is unknown because the
 * limits store could not be reached) omits `X-RateLimit-Remaining` rather than guess.
 */
export function rateLimitHeaders(window: {
  limit: number;
  remaining: number | null;
  resetAt: Date;
}): Record<string, string> {
  return {
    [RATE_LIMIT_HEADERS.limit]: String(window.limit),
    ...(window.remaining === null
      ? {}
      : { [RATE_LIMIT_HEADERS.remaining]: String(Math.max(0, window.remaining)) }),
    [RATE_LIMIT_HEADERS.reset]: String(unixSeconds(window.resetAt)),
  };
}

/** `Retry-After` in whole seconds (at least 1) until `resetAt`. */
export function retryAfterHeader(now: Date, resetAt: Date): Record<string, string> {
  return { [RATE_LIMIT_HEADERS.retryAfter]: String(secondsUntil(now, resetAt)) };
}
