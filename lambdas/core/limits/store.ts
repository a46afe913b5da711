/**
 * The `LimitStore` port: atomic counters for the limiter. Every check-and-consume is atomic in
 * the store (a conditional update), so concurrent requests can never be over-admitted; there is
 * no read-then-write in the limiter. The DynamoDB adapter implements it.
 */
import type { QuotaKind } from './config';

export interface ConsumeRequest {
  /** Whose counters: the tenant and user together (`limitSubject` in limiter.ts). */
  readonly subject: string;
  /** `yyyy-mm`: the month whose quota counters are used. */
  readonly month: string;
  /** `yyyy-mm-ddThh:mm`: the rate-limit window. */
  readonly minute: string;
  /** Requests allowed in one minute (every route). */
  readonly rateLimit: number;
  /** The quota this request draws on, if any; `limit: null` counts without limiting. */
  readonly quota: { readonly kind: QuotaKind; readonly limit: number | null } | null;
  /** Unix seconds after which the store may delete the counters (DynamoDB TTL). */
  readonly expiresAt: number;
  /** Recorded on the counters so that a tenant's use can be reported by plan. */
  readonly tenantId?: string;
  readonly plan?: string;
}

/** One user's counters for a month, as recorded for their tenant. */
export interface TenantUserUsage {
  readonly userId: string;
  readonly plan: string | null;
  readonly answers: number;
  readonly searches: number;
}

/**
 * The outcome of one check-and-consume. Nothing is counted unless `admitted`. `rateCount` is the
 * caller's request count in the current minute (including this one when admitted).
 */
export type ConsumeResult =
  | { readonly outcome: 'admitted'; readonly rateCount: number; readonly quotaUsed: number | null }
  | {
      readonly outcome: 'rate_limited';
      readonly rateCount: number;
      /** Shed under contention (the counters kept changing), not because the minute is full. */
      readonly transient?: boolean;
    }
  | { readonly outcome: 'quota_exceeded'; readonly rateCount: number; readonly quotaUsed: number };

/** What a user has used this month and this minute. */
export interface UserUsage {
  readonly answers: number;
  readonly searches: number;
  /** The minute of the latest rate window, and the requests counted in it. */
  readonly rateMinute: string | null;
  readonly rateCount: number;
}

/** Today's spend in micro-USD. */
export interface Spend {
  readonly global: number;
  readonly tenant: number;
}

/** Any method may throw when the store cannot be reached; the limiter applies its policy. */
export interface LimitStore {
  /** Atomically counts one request in the minute and (if any) against the monthly quota. */
  consume(request: ConsumeRequest): Promise<ConsumeResult>;
  /** Gives back one unit of a monthly quota (never below zero); false if there was none. */
  refund(subject: string, month: string, kind: QuotaKind): Promise<boolean>;
  /** The user's counters for a month (zeros when there are none). */
  readUsage(subject: string, month: string): Promise<UserUsage>;
  /** Every user of the tenant with counters in the month (for the admin statistics). */
  tenantUsage(tenantId: string, month: string): Promise<TenantUserUsage[]>;
  /** Today's global and tenant spend. */
  readSpend(day: string, tenantId: string): Promise<Spend>;
  /** Adds a cost to today's global and tenant spend; returns the new totals. */
  addSpend(day: string, tenantId: string, microUsd: number, expiresAt: number): Promise<Spend>;
}
