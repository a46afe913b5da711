/**
 * Quotas, rate limits and the cost cap against dynalite with the real AWS SDK client: the
 * limiter core, the DynamoDB adapter, the HTTP glue (limits middleware on `createHttpHandler`
 * handlers) and GET /api/usage. The clock is injected; every test uses its own users, tenants and days.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { Context } from 'aws-lambda';
import { createDynamoLimitStore } from '../../lambdas/adapters/dynamodb/limit-store';
import { parseLimitsConfig, type LimitsConfigInput } from '../../lambdas/core/limits/config';
import {
  CostCapReachedError,
  QuotaExceededError,
  RateLimitExceededError,
} from '../../lambdas/core/limits/errors';
import { createLimiter, type Caller, type Limiter } from '../../lambdas/core/limits/limiter';
import { UnavailableError } from '../../lambdas/core/errors';
import type { Log, MetricsSink } from '../../lambdas/core/ports';
import * as z from '../../lambdas/core/zod';
import { buildApiEvent } from '../../lambdas/http/api-event';
import { createHttpHandler, type ApiEvent, type ApiResult } from '../../lambdas/http/http-handler';
import { makeHandler as makeUsageHandler } from '../../lambdas/usage/handler';
import type { UsageResponseBody } from '../../lambdas/usage/schema';
import { localDynamoClient, startLocalDynamo, type LocalDynamo } from '../../local/dynamodb';

process.env.POWERTOOLS_METRICS_DISABLED = 'true';

const unix = (iso: string) => Math.floor(Date.parse(iso) / 1000);

function fixedClock(iso: string) {
  const clock = {
    at: new Date(iso),
    now: () => clock.at,
    set: (next: string) => {
      clock.at = new Date(next);
    },
  };
  return clock;
}

function recordingMetrics(): MetricsSink & { counts: Record<string, number> } {
  const counts: Record<string, number> = {};
  return {
    counts,
    count: (name, value = 1) => {
      counts[name] = (counts[name] ?? 0) + value;
    },
    timing: () => undefined,
  };
}

function recordingLog(): Log & { errors: string[] } {
  const errors: string[] = [];
  return {
    errors,
    debug: () => undefined,
    info: () => undefined,
    warn: () => undefined,
    error: (m) => errors.push(m),
  };
}

let seq = 0;
const unique = (prefix: string) => `${prefix}-${++seq}`;
const caller = (userId: string, extra: Partial<Caller> = {}): Caller => ({
  userId,
  tenantId: 'acme',
  plan: null,
  isAdmin: false,
  ...extra,
});

/** Settles every promise and sorts the outcomes by error class name ('admitted' for success). */
async function tally(promises: Promise<unknown>[]): Promise<Record<string, number>> {
  const outcomes = await Promise.allSettled(promises);
  const counts: Record<string, number> = {};
  for (const o of outcomes) {
    const key = o.status === 'fulfilled' ? 'admitted' : (o.reason as Error).constructor.name;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

describe('limits on dynalite', () => {
  let dynamo: LocalDynamo;

  beforeAll(async () => {
    dynamo = await startLocalDynamo();
  });
  afterAll(async () => {
    await dynamo?.stop();
  });

  /** A limiter as one Lambda container has it: its own store instance (and minute hints). */
  function limiterWith(
    config: LimitsConfigInput,
    clock: { now(): Date },
    extra: { metrics?: MetricsSink; log?: Log; client?: LocalDynamo['client'] } = {},
  ): Limiter {
    return createLimiter({
      store: createDynamoLimitStore({
        client: extra.client ?? dynamo.client,
        tableName: dynamo.tableName,
      }),
      config: parseLimitsConfig(config),
      clock,
      ...(extra.metrics ? { metrics: extra.metrics } : {}),
      ...(extra.log ? { log: extra.log } : {}),
    });
  }

  describe('atomic admission', () => {
    it('admits exactly 60 of 200 concurrent requests against a rate limit of 60, across four containers', async () => {
      const clock = fixedClock('2030-05-10T10:00:05Z');
      const containers = Array.from({ length: 4 }, () => limiterWith({}, clock));
      const user = caller(unique('burst'));
      const counts = await tally(
        Array.from({ length: 200 }, (_, i) => containers[i % 4]!.admit(user, 'documents')),
      );
      expect(counts).toEqual({ admitted: 60, RateLimitExceededError: 140 });
      expect((await containers[0]!.usage(user)).rateLimit.remaining).toBe(0);
    });

    it('admits exactly 60 of 200 concurrent searches against a monthly quota of 60', async () => {
      const clock = fixedClock('2030-05-10T10:00:05Z');
      const config = { plans: { free: { searchesPerMonth: 60, requestsPerMinute: 1000 } } };
      const containers = Array.from({ length: 4 }, () => limiterWith(config, clock));
      const user = caller(unique('quota-burst'));
      const counts = await tally(
        Array.from({ length: 200 }, (_, i) => containers[i % 4]!.admit(user, 'search')),
      );
      expect(counts).toEqual({ admitted: 60, QuotaExceededError: 140 });
      expect((await containers[0]!.usage(user)).quotas.searches).toMatchObject({
        used: 60,
        remaining: 0,
      });
    });
  });

  describe('periods', () => {
    it('opens a new rate window at the minute boundary', async () => {
      const clock = fixedClock('2030-05-10T10:00:59.200Z');
      const limiter = limiterWith({ plans: { free: { requestsPerMinute: 3 } } }, clock);
      const user = caller(unique('minute'));
      for (let i = 0; i < 3; i++) await limiter.admit(user, 'search');
      const refused = await limiter.admit(user, 'search').catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(RateLimitExceededError);
      expect((refused as RateLimitExceededError).options.headers).toMatchObject({
        'Retry-After': '1',
        'X-RateLimit-Remaining': '0',
      });

      clock.set('2030-05-10T10:01:00.000Z');
      const next = await limiter.admit(user, 'search');
      expect(next.headers).toEqual({
        'X-RateLimit-Limit': '3',
        'X-RateLimit-Remaining': '2',
        'X-RateLimit-Reset': String(unix('2030-05-10T10:02:00Z')),
      });
      // Another container that never saw this user this minute counts in the same window.
      const other = limiterWith({ plans: { free: { requestsPerMinute: 3 } } }, clock);
      expect((await other.admit(user, 'search')).headers['X-RateLimit-Remaining']).toBe('1');
    });

    it('resets the monthly quota at the turn of the month (UTC) and reports the reset date', async () => {
      const clock = fixedClock('2030-01-31T23:59:58Z');
      const limiter = limiterWith(
        {
          plans: { free: { answersPerMonth: 2 } },
          costCaps: { globalUsdPerDay: null, tenantUsdPerDay: null },
        },
        clock,
      );
      const user = caller(unique('month'));
      await limiter.admit(user, 'answer');
      await limiter.admit(user, 'answer');
      const refused = await limiter.admit(user, 'answer').catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(QuotaExceededError);
      expect((refused as QuotaExceededError).options.details).toMatchObject({
        quota: 'answers',
        plan: 'free',
        limit: 2,
        used: 2,
        resets_at: '2030-02-01T00:00:00.000Z',
      });

      clock.set('2030-02-01T00:00:00Z');
      const admitted = await limiter.admit(user, 'answer');
      expect(admitted.periods.month).toBe('2030-02');
      const report = await limiter.usage(user);
      expect(report.quotas.answers).toMatchObject({ used: 1, remaining: 1 });
      expect(report.quotas.answers.resetsAt.toISOString()).toBe('2030-03-01T00:00:00.000Z');
      expect(report.rateLimit.remaining).toBe(59);
    });
  });

  describe('cost cap', () => {
    // 1 micro-USD per token in and out; caps: tenant 4,000, global 10,000 micro-USD a day.
    const config: LimitsConfigInput = {
      prices: { 'test-model': { inputPerMillionTokens: 1, outputPerMillionTokens: 1 } },
      costCaps: { globalUsdPerDay: 0.01, tenantUsdPerDay: 0.004 },
    };

    it('trips the tenant cap, then the global cap, at the right spend, and resets the next day', async () => {
      const clock = fixedClock('2031-03-10T22:00:00Z');
      const metrics = recordingMetrics();
      const limiter = limiterWith(config, clock, { metrics });
      const alice = caller(unique('cost-alice'), { tenantId: unique('tenant-a') });
      const bob = caller(unique('cost-bob'), { tenantId: unique('tenant-b') });

      const first = await limiter.admit(alice, 'answer');
      first.recordUsage({ inputTokens: 2500, outputTokens: 500 }, 'test-model');
      expect(await limiter.settle(first, { status: 200 })).toMatchObject({
        costMicroUsd: 3000,
        spend: { tenant: 3000 },
      });

      // 3,000 < 4,000: still admitted; this answer brings the tenant to exactly its cap.
      const second = await limiter.admit(alice, 'answer');
      await limiter.settle(second, {
        status: 200,
        usage: { inputTokens: 900, outputTokens: 100 },
        modelId: 'test-model',
      });
      const capped = await limiter.admit(alice, 'answer').catch((e: unknown) => e);
      expect(capped).toBeInstanceOf(CostCapReachedError);
      expect(capped).toMatchObject({
        status: 503,
        code: 'cost_cap_reached',
        retryable: true,
        scope: 'tenant',
      });
      expect((capped as CostCapReachedError).options.headers).toMatchObject({
        'Retry-After': String(2 * 3600),
      });
      // The refused answer was not charged to the monthly quota; searches are not capped.
      expect((await limiter.usage(alice)).quotas.answers.used).toBe(2);
      await expect(limiter.admit(alice, 'search')).resolves.toBeDefined();

      // Another tenant is under its own cap until the global spend (4,000 + 6,000) reaches 10,000.
      const third = await limiter.admit(bob, 'answer');
      const settled = await limiter.settle(third, {
        status: 200,
        usage: { inputTokens: 5000, outputTokens: 1000 },
        modelId: 'test-model',
      });
      expect(settled.spend).toEqual({ global: 10_000, tenant: 6_000 });
      await expect(limiter.admit(bob, 'answer')).rejects.toMatchObject({
        code: 'cost_cap_reached',
        scope: 'global',
      });
      // Logged as alice's tenant, then the global total and bob's tenant, crossed their caps.
      expect(metrics.counts.CostCapReached).toBe(3);
      expect(metrics.counts.CostCapRejected).toBe(2);

      clock.set('2031-03-11T00:00:00Z');
      await expect(limiter.admit(alice, 'answer')).resolves.toMatchObject({
        periods: { day: '2031-03-11' },
      });
      await expect(limiter.admit(bob, 'answer')).resolves.toBeDefined();
    });
  });

  it('keeps counters across a restart of the local DynamoDB when given a data folder', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'groundwork-dynamo-'));
    try {
      const clock = fixedClock('2030-04-04T04:04:04Z');
      const user = caller(unique('persist'));
      let local = await startLocalDynamo({ dataDir });
      const limiterOn = (d: LocalDynamo) =>
        createLimiter({
          store: createDynamoLimitStore({ client: d.client, tableName: d.tableName }),
          config: parseLimitsConfig({}),
          clock,
        });
      await limiterOn(local).admit(user, 'search');
      // Counted before the restart, so that a 0 after it can only be the data folder's doing.
      expect((await limiterOn(local).usage(user)).quotas.searches.used).toBe(1);
      await local.stop();
      local = await startLocalDynamo({ dataDir });
      try {
        expect((await limiterOn(local).usage(user)).quotas.searches.used).toBe(1);
      } finally {
        await local.stop();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  describe('through the HTTP handlers', () => {
    const logger = new Logger({ serviceName: 'limits-test', logLevel: 'SILENT' });
    const metrics = new Metrics({ namespace: 'LimitsTest', serviceName: 'limits-test' });
    const context = {
      functionName: 'limits-test',
      awsRequestId: 'test-request',
      getRemainingTimeInMillis: () => 30_000,
    } as unknown as Context;

    function apiEvent(
      claims: Record<string, string>,
      init: {
        method?: string;
        path?: string;
        body?: unknown;
        headers?: Record<string, string>;
      } = {},
    ): ApiEvent {
      return buildApiEvent({
        method: init.method ?? 'POST',
        resource: init.path ?? '/',
        headers: init.headers ?? {},
        claims,
        requestId: 'test-request',
        body: init.body === undefined ? null : JSON.stringify(init.body),
      });
    }

    const claimsFor = (sub: string, extra: Record<string, string> = {}) => ({
      sub,
      'custom:tenant_id': 'acme',
      ...extra,
    });

    /** POST /api/rag/answer stand-in: records token usage, or fails with a 500 when asked to. */
    function answerHandler(limiter: Limiter) {
      return createHttpHandler(
        { logger, metrics, limiter },
        {
          route: 'answer',
          schema: z.object({
            question: z.string().check(z.minLength(1)),
            fail: z._default(z.boolean(), false),
            greeting: z._default(z.boolean(), false),
          }),
        },
        async (req) => {
          if (req.body.fail) throw new Error('the LLM adapter blew up');
          if (req.body.greeting) {
            req.admission?.waiveQuota();
            return { body: { answer: 'Hello!' } };
          }
          req.admission?.recordUsage(
            { inputTokens: 1000, outputTokens: 200 },
            'bedrock/anthropic.claude-3-haiku-20240307-v1:0',
          );
          return { body: { answer: 'forty-two' } };
        },
      );
    }

    function searchHandler(limiter: Limiter) {
      return createHttpHandler(
        { logger, metrics, limiter },
        { route: 'search', schema: z.object({ query_text: z.string() }) },
        async () => ({ body: { results: [] }, headers: { 'x-handler': 'search' } }),
      );
    }

    function usageHandler(limiter: Limiter) {
      return makeUsageHandler({ logger, metrics, limiter });
    }

    const parse = (res: ApiResult) =>
      JSON.parse(res.body ?? 'null') as {
        error: {
          code: string;
          message: string;
          retryable: boolean;
          details?: Record<string, unknown>;
        };
      };

    it('carries X-RateLimit headers on success, a 429 with Retry-After, and a 403 with the reset date', async () => {
      const clock = fixedClock('2030-06-30T12:30:45Z');
      const limiter = limiterWith(
        { plans: { free: { requestsPerMinute: 3, searchesPerMonth: 4 } } },
        clock,
      );
      const search = searchHandler(limiter);
      const sub = unique('headers');
      const call = () =>
        search(
          apiEvent(claimsFor(sub), { path: '/api/rag/search', body: { query_text: 'refunds' } }),
          context,
        );

      const ok = await call();
      expect(ok.statusCode).toBe(200);
      expect(ok.headers).toMatchObject({
        'x-handler': 'search',
        'X-RateLimit-Limit': '3',
        'X-RateLimit-Remaining': '2',
        'X-RateLimit-Reset': String(unix('2030-06-30T12:31:00Z')),
      });
      await call();
      await call();
      const limited = await call();
      expect(limited.statusCode).toBe(429);
      expect(limited.headers).toMatchObject({
        'Retry-After': '15',
        'X-RateLimit-Remaining': '0',
        'X-RateLimit-Limit': '3',
      });
      expect(parse(limited).error).toMatchObject({ code: 'rate_limit_exceeded', retryable: true });

      clock.set('2030-06-30T12:31:00Z');
      expect((await call()).statusCode).toBe(200);
      const exhausted = await call();
      expect(exhausted.statusCode).toBe(403);
      const body = parse(exhausted);
      expect(body.error).toMatchObject({
        code: 'quota_exceeded',
        retryable: false,
        details: {
          quota: 'searches',
          plan: 'free',
          limit: 4,
          used: 4,
          resets_at: '2030-07-01T00:00:00.000Z',
        },
      });
      expect(body.error.message).toContain('2030-07-01T00:00:00.000Z');
      expect(exhausted.headers).toMatchObject({
        'X-RateLimit-Remaining': '2',
        'X-RateLimit-Reset': String(unix('2030-06-30T12:32:00Z')),
      });
    });

    it('charges only a request that did the work: a 5xx, a 4xx and a waived greeting are refunded, and the answer cost is added', async () => {
      const clock = fixedClock('2032-01-15T09:00:00Z');
      const limiter = limiterWith({}, clock);
      const answer = answerHandler(limiter);
      const sub = unique('refund');
      const post = (body: unknown) =>
        answer(apiEvent(claimsFor(sub), { path: '/api/rag/answer', body }), context);

      const failed = await post({ question: 'why?', fail: true });
      expect(failed.statusCode).toBe(500);
      expect(failed.headers['X-RateLimit-Remaining']).toBe('59');
      expect((await limiter.usage(caller(sub))).quotas.answers.used).toBe(0);

      expect((await post({ question: 'why?' })).statusCode).toBe(200);
      // 400: the handler is named `answer`, seed 001's route, whose contract says 400.
      expect((await post({ question: '' })).statusCode).toBe(400);
      expect((await post({ question: 'hello', greeting: true })).statusCode).toBe(200);
      const report = await limiter.usage(caller(sub));
      expect(report.quotas.answers.used).toBe(1);
      // Every request still counts toward the rate limit.
      expect(report.rateLimit.remaining).toBe(56);

      // Claude 3 Haiku: 1000 x $0.25 + 200 x $1.25 per million tokens = 500 micro-USD.
      const spend = await createDynamoLimitStore({
        client: dynamo.client,
        tableName: dynamo.tableName,
      }).readSpend('2032-01-15', 'acme');
      expect(spend).toEqual({ global: 500, tenant: 500 });
    });

    it('keeps separate counters for the same sub in two tenants', async () => {
      const clock = fixedClock('2032-02-03T09:00:00Z');
      const limiter = limiterWith({ plans: { free: { requestsPerMinute: 2 } } }, clock);
      const search = searchHandler(limiter);
      const sub = unique('shared-sub');
      const post = (tenant: string) =>
        search(
          apiEvent(claimsFor(sub, { 'custom:tenant_id': tenant }), {
            path: '/api/rag/search',
            body: { query_text: 'q' },
          }),
          context,
        );
      expect((await post('tenant-a')).statusCode).toBe(200);
      expect((await post('tenant-a')).statusCode).toBe(200);
      expect((await post('tenant-a')).statusCode).toBe(429);
      // The same sub in another tenant is another caller, with a window of its own.
      const other = await post('tenant-b');
      expect(other.statusCode).toBe(200);
      expect(other.headers['X-RateLimit-Remaining']).toBe('1');
      expect(
        (await limiter.usage(caller(sub, { tenantId: 'tenant-b' }))).quotas.searches.used,
      ).toBe(1);
      expect(
        (await limiter.usage(caller(sub, { tenantId: 'tenant-a' }))).quotas.searches.used,
      ).toBe(2);
    });

    it('renders a cost-cap refusal as a retryable 503 with Retry-After until midnight UTC', async () => {
      const clock = fixedClock('2033-08-01T23:00:00Z');
      const limiter = limiterWith({ costCaps: { tenantUsdPerDay: 0.0005 } }, clock);
      const answer = answerHandler(limiter);
      const sub = unique('cap-http');
      const post = () =>
        answer(
          apiEvent(claimsFor(sub), { path: '/api/rag/answer', body: { question: 'q' } }),
          context,
        );
      expect((await post()).statusCode).toBe(200); // spends 500 micro-USD: the tenant cap
      const capped = await post();
      expect(capped.statusCode).toBe(503);
      expect(capped.headers).toMatchObject({
        'Retry-After': '3600',
        'X-RateLimit-Remaining': '58',
      });
      expect(parse(capped).error).toMatchObject({
        code: 'cost_cap_reached',
        retryable: true,
        details: { scope: 'tenant', resets_at: '2033-08-02T00:00:00.000Z' },
      });
    });

    it('GET /api/usage reports plan, quotas, rate limit and resets, and consumes no quota', async () => {
      const clock = fixedClock('2030-09-20T08:15:10Z');
      const limiter = limiterWith({}, clock);
      const sub = unique('usage');
      const search = searchHandler(limiter);
      const answer = answerHandler(limiter);
      const usage = usageHandler(limiter);
      await search(apiEvent(claimsFor(sub), { body: { query_text: 'a' } }), context);
      await search(apiEvent(claimsFor(sub), { body: { query_text: 'b' } }), context);
      await answer(apiEvent(claimsFor(sub), { body: { question: 'c' } }), context);

      const get = () =>
        usage(apiEvent(claimsFor(sub), { method: 'GET', path: '/api/usage' }), context);
      const first = await get();
      expect(first.statusCode).toBe(200);
      expect(first.headers['X-RateLimit-Remaining']).toBe('56');
      const expected: UsageResponseBody = {
        plan: 'free',
        period: '2030-09',
        quotas: {
          answers: { limit: 50, used: 1, remaining: 49, resets_at: '2030-10-01T00:00:00.000Z' },
          searches: { limit: 500, used: 2, remaining: 498, resets_at: '2030-10-01T00:00:00.000Z' },
        },
        rate_limit: {
          limit: 60,
          remaining: 56,
          window_seconds: 60,
          resets_at: '2030-09-20T08:16:00.000Z',
          reset: unix('2030-09-20T08:16:00Z'),
        },
      };
      expect(JSON.parse(first.body ?? '')).toEqual(expected);

      const second = JSON.parse((await get()).body ?? '') as UsageResponseBody;
      expect(second.quotas).toEqual(expected.quotas);
      expect(second.rate_limit.remaining).toBe(55);
    });

    it('takes the plan from the verified token only: claim, admin group, unknown plan, headers ignored', async () => {
      const clock = fixedClock('2030-09-20T08:15:10Z');
      const usage = usageHandler(limiterWith({}, clock));
      const planOf = async (claims: Record<string, string>, headers: Record<string, string> = {}) =>
        JSON.parse(
          (await usage(apiEvent(claims, { method: 'GET', path: '/api/usage', headers }), context))
            .body ?? '',
        ) as UsageResponseBody;

      const growth = await planOf(claimsFor(unique('growth'), { 'custom:plan': 'growth' }));
      expect(growth.plan).toBe('growth');
      expect(growth.quotas.answers).toMatchObject({ limit: null, remaining: null });
      expect(
        (await planOf(claimsFor(unique('pro-group'), { 'cognito:groups': 'plan-pro' }))).quotas
          .answers.limit,
      ).toBe(2000);
      expect((await planOf(claimsFor(unique('admin'), { 'cognito:groups': 'admin' }))).plan).toBe(
        'admin',
      );
      expect(
        (await planOf(claimsFor(unique('platinum'), { 'custom:plan': 'platinum' }))).plan,
      ).toBe('free');
      expect(
        (await planOf(claimsFor(unique('claims-admin'), { 'custom:plan': 'admin' }))).plan,
      ).toBe('free');
      expect(
        (
          await planOf(claimsFor(unique('header'), {}), {
            'x-plan': 'growth',
            'custom:plan': 'growth',
          })
        ).plan,
      ).toBe('free');
    });

    it('passes a request without a usable identity to the handler, which answers 401 without counting', async () => {
      const limiter = limiterWith({}, fixedClock('2030-09-20T08:15:10Z'));
      const res = await searchHandler(limiter)(
        apiEvent({}, { body: { query_text: 'x' } }),
        context,
      );
      expect(res.statusCode).toBe(401);
      expect(res.headers['X-RateLimit-Limit']).toBeUndefined();
    });

    describe('when DynamoDB cannot be reached', () => {
      let deadClient: LocalDynamo['client'];
      beforeAll(async () => {
        // A port that was free a moment ago: connections are refused at once.
        const port = await new Promise<number>((resolve) => {
          const server = createServer().listen(0, '127.0.0.1', () => {
            const { port: p } = server.address() as { port: number };
            server.close(() => resolve(p));
          });
        });
        deadClient = localDynamoClient(`http://127.0.0.1:${port}`, { maxAttempts: 1 });
      });
      afterAll(() => deadClient.destroy());

      it('admit mode serves the request, logs an error and counts LimiterStoreErrors', async () => {
        const metricsSink = recordingMetrics();
        const log = recordingLog();
        const limiter = limiterWith({}, fixedClock('2030-09-20T08:15:10Z'), {
          client: deadClient,
          metrics: metricsSink,
          log,
        });
        const admission = await limiter.admit(caller(unique('down')), 'search');
        expect(admission).toMatchObject({ degraded: true, charged: false });
        expect(admission.headers).toEqual({
          'X-RateLimit-Limit': '60',
          'X-RateLimit-Reset': String(unix('2030-09-20T08:16:00Z')),
        });
        expect(metricsSink.counts.LimiterStoreErrors).toBe(1);
        expect(log.errors).toEqual(['limits store unavailable']);

        const res = await searchHandler(limiter)(
          apiEvent(claimsFor(unique('down-http')), { body: { query_text: 'x' } }),
          context,
        );
        expect(res.statusCode).toBe(200);
        expect(metricsSink.counts.LimiterStoreErrors).toBe(2);
      });

      it('reject mode answers unavailable, retryable (500 on seed 001 search)', async () => {
        const metricsSink = recordingMetrics();
        const limiter = limiterWith(
          { onStoreUnavailable: 'reject' },
          fixedClock('2030-09-20T08:15:10Z'),
          { client: deadClient, metrics: metricsSink },
        );
        await expect(limiter.admit(caller(unique('down')), 'answer')).rejects.toBeInstanceOf(
          UnavailableError,
        );
        const res = await searchHandler(limiter)(
          apiEvent(claimsFor(unique('down-http')), { body: { query_text: 'x' } }),
          context,
        );
        // The handler is named `search`: seed 001's POST /api/rag/search answers 500.
        expect(res.statusCode).toBe(500);
        expect(parse(res).error).toMatchObject({ code: 'unavailable', retryable: true });
        expect(metricsSink.counts.LimiterStoreErrors).toBeGreaterThanOrEqual(2);
      });
    });
  });
});
