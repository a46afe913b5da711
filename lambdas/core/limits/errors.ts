/**
 * The limiter's refusals, as AppErrors the one error middleware renders; each carries its
 * response headers (`X-RateLimit-*`, `Retry-After`) in `options.headers`.
 */
import { AppError } from '../errors';
import type { QuotaKind } from './config';

/** 429: more requests this minute than the plan allows. Retry after `Retry-After` seconds. */
export class RateLimitExceededError extends AppError {
  override name = 'RateLimitExceededError';
  constructor(
    readonly limit: number,
    readonly retryAfterSeconds: number,
    headers: Record<string, string>,
  ) {
    super(
      'rate_limit_exceeded',
      `Rate limit of ${limit} requests per minute exceeded; retry in ${retryAfterSeconds} s.`,
      429,
      {
        retryable: true,
        headers,
        details: { limit, window: 'minute', retry_after_seconds: retryAfterSeconds },
      },
    );
  }
}

/** 403: the plan's monthly quota is used up; the body names the reset date. */
export class QuotaExceededError extends AppError {
  override name = 'QuotaExceededError';
  constructor(
    readonly quota: QuotaKind,
    readonly plan: string,
    readonly limit: number,
    readonly used: number,
    readonly resetsAt: Date,
    headers: Record<string, string>,
  ) {
    const resets = resetsAt.toISOString();
    super(
      'quota_exceeded',
      `Monthly ${quota} quota of the ${plan} plan (${limit}) is used up; it resets on ${resets}.`,
      403,
      { retryable: false, headers, details: { quota, plan, limit, used, resets_at: resets } },
    );
  }
}

/** 503: today's spending cap (global or the tenant's) is reached; answers resume at 00:00 UTC. */
export class CostCapReachedError extends AppError {
  override name = 'CostCapReachedError';
  constructor(
    readonly scope: 'global' | 'tenant',
    readonly resetsAt: Date,
    headers: Record<string, string>,
  ) {
    const resets = resetsAt.toISOString();
    super(
      'cost_cap_reached',
      `The daily ${scope === 'global' ? 'service' : 'tenant'} spending cap is reached; answers resume at ${resets}.`,
      503,
      { retryable: true, expose: true, headers, details: { scope, resets_at: resets } },
    );
  }
}
