/**
 * The limiter use case, for every API route: the per-user rate limit, the plan's monthly quotas
 * and the daily cost caps. `admit` runs after the caller is identified and before any embedding
 * or LLM work; `settle` runs after the handler with the response status (a 5xx gives the quota
 * unit back) and the LLM token usage (added to today's spend).
 */
import { UnavailableError } from '../errors';
import type { Clock, Log, MetricsSink } from '../ports';
import { noMetrics, silentLog, systemClock } from '../ports';
import {
  dailyCapsMicroUsd,
  planEntitlements,
  QUOTA_KINDS,
  quotaLimit,
  resolvePlan,
  routeQuota,
  type LimitsConfig,
  type PlanHolder,
  type QuotaKind,
} from './config';
import { estimateCostMicroUsd, type TokenCounts } from './cost';
import { CostCapReachedError, QuotaExceededError, RateLimitExceededError } from './errors';
import { rateLimitHeaders, retryAfterHeader } from './headers';
import { periodsAt, secondsUntil, unixSeconds, type Periods } from './periods';
import type { ConsumeResult, LimitStore, Spend } from './store';

/** Monthly counters are kept a month after their month ends (for support questions). */
const USAGE_RETENTION_SECONDS = 32 * 24 * 3600;
/** Daily cost counters are kept a week after their day ends. */
const SPEND_RETENTION_SECONDS = 7 * 24 * 3600;
/** Rate-limited users remembered per process (see `rateLimited` in `createLimiter`). */
const RATE_LIMITED_CACHE_SIZE = 10_000;

/** Who is calling (the HTTP `Identity` satisfies it). */
export interface Caller extends PlanHolder {
  readonly userId: string;
  readonly tenantId: string;
}

/** One LLM call made while serving a request. */
interface ModelUsage {
  /** `null` when the provider did not report usage: the call is then not costed. */
  readonly usage: TokenCounts | null;
  readonly modelId: string;
}

/**
 * The key a caller's counters are kept under: the tenant and the user together, since the same
 * `sub` may exist in two tenants (tenant ids never contain `#`, so the key is unambiguous).
 */
function limitSubject(caller: { readonly tenantId: string; readonly userId: string }): string {
  return `${caller.tenantId}#${caller.userId}`;
}

/** A request the limiter let through: its headers, and what `settle` needs. */
export interface Admission {
  readonly plan: string;
  readonly route: string;
  readonly userId: string;
  /** Where the caller's counters are kept (`limitSubject`). */
  readonly subject: string;
  readonly tenantId: string;
  /** The quota drawn on, or `null` for a route that only counts toward the rate limit. */
  readonly quota: QuotaKind | null;
  readonly periods: Periods;
  /** A quota unit was taken (and a 5xx gives it back). */
  readonly charged: boolean;
  /**
   * The quota drawn on after this request: its monthly limit (`null`: unlimited), the units used
   * this month counting this one (`null` when the store could not be reached), and when it
   * resets. `null` for a route that draws on no quota.
   */
  readonly quotaUsage: {
    readonly limit: number | null;
    readonly used: number | null;
    readonly resetsAt: Date;
  } | null;
  /** Let through unchecked because the store was unreachable (`onStoreUnavailable: admit`). */
  readonly degraded: boolean;
  /** `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset` for the response. */
  readonly headers: Readonly<Record<string, string>>;
  /** The LLM calls recorded so far. */
  readonly usage: readonly ModelUsage[];
  /** Records an LLM call's token usage; `settle` adds its cost to today's spend. */
  recordUsage(usage: TokenCounts | null, modelId: string): void;
  /**
   * The request turned out not to be work the quota counts (a greeting answered without
   * retrieval): `settle` gives the quota unit back whatever the status.
   */
  waiveQuota(): void;
  /** `waiveQuota` was called. */
  readonly waived: boolean;
}

interface SettleOutcome {
  /** The HTTP status of the response: anything but 2xx or 3xx refunds the quota unit. */
  readonly status: number;
  /** Token usage of an LLM call not yet recorded on the admission. */
  readonly usage?: TokenCounts | null;
  readonly modelId?: string;
}

interface Settlement {
  readonly refunded: boolean;
  readonly costMicroUsd: number;
  /** Today's spend after adding this request's cost, when there was a cost and it was counted. */
  readonly spend: Spend | null;
}

export interface QuotaReport {
  /** `null`: unlimited. */
  readonly limit: number | null;
  readonly used: number;
  readonly remaining: number | null;
  readonly resetsAt: Date;
}

interface UsageReport {
  readonly plan: string;
  /** `yyyy-mm`. */
  readonly month: string;
  readonly quotas: Readonly<Record<QuotaKind, QuotaReport>>;
  readonly rateLimit: {
    readonly limit: number;
    readonly remaining: number;
    readonly resetsAt: Date;
  };
}

export interface Limiter {
  readonly config: LimitsConfig;
  /** The caller's plan (from the verified token only). */
  planOf(caller: PlanHolder): string;
  /**
   * Counts the request; throws `RateLimitExceededError` (429), `QuotaExceededError` (403),
   * `CostCapReachedError` (503) or, with `onStoreUnavailable: reject`, `UnavailableError` (503).
   * Every refusal carries its headers in `options.headers`.
   */
  admit(caller: Caller, route: string, now?: Date): Promise<Admission>;
  /**
   * Refunds a request that did no work for the caller (a 4xx or 5xx, or a waived one) and adds
   * LLM cost. Never throws: failures are logged and counted.
   */
  settle(admission: Admission, outcome: SettleOutcome): Promise<Settlement>;
  /** The caller's plan, quotas and rate window, without consuming anything. */
  usage(caller: Caller, now?: Date): Promise<UsageReport>;
  /** This month's quota use in a tenant, summed by plan, with each plan's per-user quotas. */
  tenantUsageByPlan(tenantId: string, now?: Date): Promise<PlanUsageReport[]>;
}

export interface PlanUsageReport {
  readonly plan: string;
  /** Users with any counted request this month. */
  readonly users: number;
  readonly month: string;
  /** Used this month by all those users, and each user's monthly quota (`null`: unlimited). */
  readonly quotas: Readonly<Record<QuotaKind, { used: number; limitPerUser: number | null }>>;
}

export interface LimiterDeps {
  readonly store: LimitStore;
  readonly config: LimitsConfig;
  readonly clock?: Clock;
  readonly log?: Log;
  readonly metrics?: MetricsSink;
}

export function createLimiter(deps: LimiterDeps): Limiter {
  const { store, config } = deps;
  const clock = deps.clock ?? systemClock;
  const log = deps.log ?? silentLog;
  const metrics = deps.metrics ?? noMetrics;
  const settled = new WeakSet<Admission>();
  /**
   * Users this process saw refused by the rate limit, with the minute and limit: a minute's
   * count never goes down, so until the minute ends they are refused without a store call.
   */
  const rateLimited = new Map<string, { minute: string; limit: number; rateCount: number }>();
  const rememberRateLimited = (
    userId: string,
    entry: { minute: string; limit: number; rateCount: number },
  ) => {
    rateLimited.delete(userId);
    rateLimited.set(userId, entry);
    if (rateLimited.size > RATE_LIMITED_CACHE_SIZE) {
      const oldest = rateLimited.keys().next().value;
      if (oldest !== undefined) rateLimited.delete(oldest);
    }
  };

  /** Logs and counts a store failure; in `reject` mode, turns it into a 503. */
  function storeFailed(err: unknown, operation: string): void {
    log.error('limits store unavailable', { err, operation, policy: config.onStoreUnavailable });
    metrics.count('LimiterStoreErrors');
    if (config.onStoreUnavailable === 'reject') {
      throw new UnavailableError('Usage limits cannot be checked right now; retry shortly.', err);
    }
  }

  async function refundQuietly(userId: string, month: string, kind: QuotaKind): Promise<boolean> {
    try {
      const refunded = await store.refund(userId, month, kind);
      if (refunded) metrics.count('QuotaRefunds');
      return refunded;
    } catch (err) {
      log.error('quota refund failed', { err, userId, month, quota: kind });
      metrics.count('LimiterStoreErrors');
      return false;
    }
  }

  return {
    config,

    planOf: (caller) => resolvePlan(caller, config),

    async admit(caller, route, now = clock.now()) {
      const subject = limitSubject(caller);
      const plan = resolvePlan(caller, config);
      const entitlements = planEntitlements(config, plan);
      const kind = routeQuota(config, route);
      const periods = periodsAt(now);
      const rateLimit = entitlements.requestsPerMinute;
      const caps = kind === 'answers' ? dailyCapsMicroUsd(config, caller.tenantId) : null;
      const checkSpend = caps !== null && (caps.global !== null || caps.tenant !== null);
      const rateLimitError = (rateCount: number) => {
        metrics.count('RateLimited');
        return new RateLimitExceededError(rateLimit, secondsUntil(now, periods.minuteResetsAt), {
          ...rateLimitHeaders({
            limit: rateLimit,
            remaining: rateLimit - rateCount,
            resetAt: periods.minuteResetsAt,
          }),
          ...retryAfterHeader(now, periods.minuteResetsAt),
        });
      };

      const known = rateLimited.get(subject);
      if (known && known.minute === periods.minute && known.limit === rateLimit) {
        throw rateLimitError(known.rateCount);
      }

      // The spend check reads other items than the counters, so it runs beside the consume.
      const [consumed, spent] = await Promise.allSettled([
        store.consume({
          subject,
          month: periods.month,
          minute: periods.minute,
          rateLimit,
          quota: kind ? { kind, limit: quotaLimit(entitlements, kind) } : null,
          expiresAt: unixSeconds(periods.monthResetsAt) + USAGE_RETENTION_SECONDS,
          tenantId: caller.tenantId,
          plan,
        }),
        checkSpend ? store.readSpend(periods.day, caller.tenantId) : Promise.resolve(null),
      ]);

      let result: ConsumeResult | null = null;
      if (consumed.status === 'fulfilled') result = consumed.value;
      else storeFailed(consumed.reason, 'consume');

      let spend: Spend | null = null;
      if (spent.status === 'fulfilled') {
        spend = spent.value;
      } else {
        if (config.onStoreUnavailable === 'reject' && kind && result?.outcome === 'admitted') {
          await refundQuietly(subject, periods.month, kind);
        }
        storeFailed(spent.reason, 'readSpend');
      }

      const window = (rateCount: number | null) =>
        rateLimitHeaders({
          limit: rateLimit,
          remaining: rateCount === null ? null : rateLimit - rateCount,
          resetAt: periods.minuteResetsAt,
        });

      if (result?.outcome === 'rate_limited') {
        if (!result.transient) {
          rememberRateLimited(subject, {
            minute: periods.minute,
            limit: rateLimit,
            rateCount: result.rateCount,
          });
        }
        throw rateLimitError(result.rateCount);
      }
      if (result?.outcome === 'quota_exceeded' && kind) {
        metrics.count('QuotaExceeded');
        throw new QuotaExceededError(
          kind,
          plan,
          quotaLimit(entitlements, kind) ?? 0,
          result.quotaUsed,
          periods.monthResetsAt,
          window(result.rateCount),
        );
      }

      const charged = result?.outcome === 'admitted' && kind !== null;
      const headers = window(result ? result.rateCount : null);

      if (caps && spend) {
        const scope =
          caps.global !== null && spend.global >= caps.global
            ? 'global'
            : caps.tenant !== null && spend.tenant >= caps.tenant
              ? 'tenant'
              : null;
        if (scope) {
          // A 503 of ours is not charged to the quota.
          if (charged && kind) await refundQuietly(subject, periods.month, kind);
          metrics.count('CostCapRejected');
          throw new CostCapReachedError(scope, periods.dayResetsAt, {
            ...headers,
            ...retryAfterHeader(now, periods.dayResetsAt),
          });
        }
      }

      const recorded: ModelUsage[] = [];
      let waived = false;
      return {
        plan,
        route,
        userId: caller.userId,
        subject,
        tenantId: caller.tenantId,
        quota: kind,
        periods,
        charged,
        quotaUsage: kind
          ? {
              limit: quotaLimit(entitlements, kind),
              used: result?.outcome === 'admitted' ? result.quotaUsed : null,
              resetsAt: periods.monthResetsAt,
            }
          : null,
        degraded: result === null,
        headers,
        usage: recorded,
        recordUsage(usage, modelId) {
          recorded.push({ usage, modelId });
        },
        waiveQuota() {
          waived = true;
        },
        get waived() {
          return waived;
        },
      };
    },

    async settle(admission, outcome) {
      if (settled.has(admission)) {
        log.warn('admission settled twice; ignoring the second call', { route: admission.route });
        return { refunded: false, costMicroUsd: 0, spend: null };
      }
      settled.add(admission);

      const calls = [...admission.usage];
      if (outcome.modelId !== undefined && outcome.usage !== undefined) {
        calls.push({ usage: outcome.usage, modelId: outcome.modelId });
      }
      let costMicroUsd = 0;
      for (const call of calls) {
        if (call.usage === null) {
          log.warn('LLM usage not reported; its cost is not counted', { modelId: call.modelId });
          metrics.count('AnswerCostUnknown');
          continue;
        }
        costMicroUsd += estimateCostMicroUsd(call.usage, call.modelId, config);
      }

      // Only a successful answer to real work draws on the quota: an invalid request (4xx), a
      // failure of ours (5xx) and a waived request (a greeting) give the unit back.
      const didWork = outcome.status < 400 && !admission.waived;
      const refund =
        admission.charged && admission.quota && !didWork
          ? refundQuietly(admission.subject, admission.periods.month, admission.quota)
          : Promise.resolve(false);
      const addSpend = async (): Promise<Spend | null> => {
        if (costMicroUsd <= 0) return null;
        try {
          const spend = await store.addSpend(
            admission.periods.day,
            admission.tenantId,
            costMicroUsd,
            unixSeconds(admission.periods.dayResetsAt) + SPEND_RETENTION_SECONDS,
          );
          metrics.count('AnswerCostMicroUsd', costMicroUsd);
          const caps = dailyCapsMicroUsd(config, admission.tenantId);
          for (const scope of ['global', 'tenant'] as const) {
            const cap = caps[scope];
            // Log once, when this request's cost is the one that crosses the cap.
            if (cap !== null && spend[scope] >= cap && spend[scope] - costMicroUsd < cap) {
              log.warn('daily cost cap reached', {
                scope,
                tenantId: admission.tenantId,
                day: admission.periods.day,
                capMicroUsd: cap,
              });
              metrics.count('CostCapReached');
            }
          }
          return spend;
        } catch (err) {
          log.error('adding answer cost failed', {
            err,
            tenantId: admission.tenantId,
            costMicroUsd,
          });
          metrics.count('LimiterStoreErrors');
          return null;
        }
      };
      const [refunded, spend] = await Promise.all([refund, addSpend()]);
      return { refunded, costMicroUsd, spend };
    },

    async tenantUsageByPlan(tenantId, now = clock.now()) {
      const { month } = periodsAt(now);
      let rows;
      try {
        rows = await store.tenantUsage(tenantId, month);
      } catch (err) {
        log.error('limits store unavailable', { err, operation: 'tenantUsage' });
        metrics.count('LimiterStoreErrors');
        throw new UnavailableError('Usage cannot be read right now; retry shortly.', err);
      }
      const byPlan = new Map<string, { users: number; answers: number; searches: number }>();
      for (const row of rows) {
        const plan = row.plan ?? config.defaultPlan;
        const sum = byPlan.get(plan) ?? { users: 0, answers: 0, searches: 0 };
        sum.users += 1;
        sum.answers += row.answers;
        sum.searches += row.searches;
        byPlan.set(plan, sum);
      }
      return [...byPlan.entries()]
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([plan, sum]) => {
          // A plan since removed from the configuration has no quotas to report.
          const entitlements = Object.hasOwn(config.plans, plan)
            ? planEntitlements(config, plan)
            : null;
          const limit = (kind: QuotaKind) => (entitlements ? quotaLimit(entitlements, kind) : null);
          return {
            plan,
            users: sum.users,
            month,
            quotas: {
              answers: { used: sum.answers, limitPerUser: limit('answers') },
              searches: { used: sum.searches, limitPerUser: limit('searches') },
            },
          };
        });
    },

    async usage(caller, now = clock.now()) {
      const plan = resolvePlan(caller, config);
      const entitlements = planEntitlements(config, plan);
      const periods = periodsAt(now);
      let counters;
      try {
        counters = await store.readUsage(limitSubject(caller), periods.month);
      } catch (err) {
        log.error('limits store unavailable', { err, operation: 'readUsage' });
        metrics.count('LimiterStoreErrors');
        throw new UnavailableError('Usage cannot be read right now; retry shortly.', err);
      }
      const quota = (kind: QuotaKind): QuotaReport => {
        const limit = quotaLimit(entitlements, kind);
        const used = counters[kind];
        return {
          limit,
          used,
          remaining: limit === null ? null : Math.max(0, limit - used),
          resetsAt: periods.monthResetsAt,
        };
      };
      const inWindow =
        counters.rateMinute !== null && counters.rateMinute >= periods.minute
          ? counters.rateCount
          : 0;
      return {
        plan,
        month: periods.month,
        quotas: Object.fromEntries(QUOTA_KINDS.map((k) => [k, quota(k)])) as Record<
          QuotaKind,
          QuotaReport
        >,
        rateLimit: {
          limit: entitlements.requestsPerMinute,
          remaining: Math.max(0, entitlements.requestsPerMinute - inWindow),
          resetsAt: periods.minuteResetsAt,
        },
      };
    },
  };
}
