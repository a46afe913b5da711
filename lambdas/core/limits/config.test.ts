import { ConfigError } from '../errors';
import {
  DEFAULT_LIMITS_CONFIG,
  dailyCapsMicroUsd,
  parseLimitsConfig,
  parseLimitsConfigJson,
  planEntitlements,
  resolvePlan,
  routeQuota,
} from './config';
import { periodsAt, secondsUntil } from './periods';

describe('limits config', () => {
  it('defaults: free 50 / basic 500 / pro 2000 answers, growth and admin unlimited, 60 requests a minute', () => {
    const { plans } = DEFAULT_LIMITS_CONFIG;
    expect(plans.free).toEqual({
      answersPerMonth: 50,
      searchesPerMonth: 500,
      requestsPerMinute: 60,
    });
    expect(plans.basic?.answersPerMonth).toBe(500);
    expect(plans.pro?.answersPerMonth).toBe(2000);
    expect(plans.growth).toMatchObject({ answersPerMonth: null, searchesPerMonth: null });
    expect(plans.admin).toMatchObject({ answersPerMonth: null, searchesPerMonth: null });
    expect(DEFAULT_LIMITS_CONFIG.onStoreUnavailable).toBe('admit');
    expect(DEFAULT_LIMITS_CONFIG.costCaps).toEqual({
      globalUsdPerDay: 100,
      tenantUsdPerDay: 20,
      tenants: {},
    });
    expect(DEFAULT_LIMITS_CONFIG.prices['anthropic.claude-3-haiku']).toBeDefined();
  });

  it('merges a plan override field by field over the defaults and accepts a complete new plan', () => {
    const config = parseLimitsConfig({
      plans: {
        free: { answersPerMonth: 10 },
        team: { answersPerMonth: 1000, searchesPerMonth: null, requestsPerMinute: 120 },
      },
    });
    expect(config.plans.free).toEqual({
      answersPerMonth: 10,
      searchesPerMonth: 500,
      requestsPerMinute: 60,
    });
    expect(config.plans.team).toEqual({
      answersPerMonth: 1000,
      searchesPerMonth: null,
      requestsPerMinute: 120,
    });
    expect(config.plans.pro?.answersPerMonth).toBe(2000);
  });

  it('rejects an incomplete new plan, a negative quota, an unknown field and a bad default plan, naming the field', () => {
    expect(() =>
      parseLimitsConfig({ plans: { team: { answersPerMonth: 5 } } }, 'limits.json'),
    ).toThrow(/^limits\.json: plans\.team\.searchesPerMonth: /);
    expect(() => parseLimitsConfig({ plans: { free: { answersPerMonth: -1 } } })).toThrow(
      /plans\.free\.answersPerMonth/,
    );
    expect(() => parseLimitsConfig({ plans: { free: { answers: 5 } } })).toThrow(/plans\.free/);
    expect(() => parseLimitsConfig({ onStoreUnavailable: 'maybe' })).toThrow(/onStoreUnavailable/);
    expect(() => parseLimitsConfig({ defaultPlan: 'gold' })).toThrow(
      /defaultPlan: "gold" is not a configured plan/,
    );
    expect(() => parseLimitsConfig({ costCaps: { globalUsdPerDay: 0 } })).toThrow(
      /costCaps\.globalUsdPerDay/,
    );
    expect(() => parseLimitsConfig({ plan: {} })).toThrow(ConfigError);
  });

  it('parses JSON text, treats empty text as the defaults and reports invalid JSON with its source', () => {
    expect(parseLimitsConfigJson('', 'LIMITS_CONFIG')).toEqual(DEFAULT_LIMITS_CONFIG);
    expect(parseLimitsConfigJson(undefined)).toEqual(DEFAULT_LIMITS_CONFIG);
    const config = parseLimitsConfigJson(
      '{"onStoreUnavailable":"reject","costCaps":{"tenants":{"acme":5}}}',
    );
    expect(config.onStoreUnavailable).toBe('reject');
    expect(config.costCaps.tenantUsdPerDay).toBe(20);
    expect(() => parseLimitsConfigJson('{oops', 'LIMITS_CONFIG')).toThrow(
      /^LIMITS_CONFIG: is not valid JSON/,
    );
  });

  it('merges prices over the defaults and replaces the route map', () => {
    const config = parseLimitsConfig({
      prices: { 'openai/': { inputPerMillionTokens: 0, outputPerMillionTokens: 0 } },
      routes: { ask: 'answers' },
    });
    expect(Object.keys(config.prices)).toEqual(
      expect.arrayContaining(['openai/', 'anthropic.claude-3-haiku']),
    );
    expect(routeQuota(config, 'ask')).toBe('answers');
    expect(routeQuota(config, 'answer')).toBeNull();
    expect(routeQuota(DEFAULT_LIMITS_CONFIG, 'search')).toBe('searches');
    expect(routeQuota(DEFAULT_LIMITS_CONFIG, 'usage')).toBeNull();
    expect(routeQuota(DEFAULT_LIMITS_CONFIG, 'constructor')).toBeNull();
  });
});

describe('resolvePlan', () => {
  const config = DEFAULT_LIMITS_CONFIG;

  it('takes the plan from the token, admins get admin, unknown or missing plans get free', () => {
    expect(resolvePlan({ plan: 'pro', isAdmin: false }, config)).toBe('pro');
    expect(resolvePlan({ plan: 'Growth', isAdmin: false }, config)).toBe('growth');
    expect(resolvePlan({ plan: null, isAdmin: true }, config)).toBe('admin');
    expect(resolvePlan({ plan: 'free', isAdmin: true }, config)).toBe('admin');
    expect(resolvePlan({ plan: 'platinum', isAdmin: false }, config)).toBe('free');
    expect(resolvePlan({ plan: null, isAdmin: false }, config)).toBe('free');
    expect(resolvePlan({ plan: '__proto__', isAdmin: false }, config)).toBe('free');
  });

  it('does not grant the admin plan to a plan claim without the admin group', () => {
    expect(resolvePlan({ plan: 'admin', isAdmin: false }, config)).toBe('free');
  });

  it('honours a configured default plan', () => {
    const basicByDefault = parseLimitsConfig({ defaultPlan: 'basic' });
    expect(resolvePlan({ plan: 'nope', isAdmin: false }, basicByDefault)).toBe('basic');
    expect(planEntitlements(basicByDefault, 'basic').answersPerMonth).toBe(500);
    expect(() => planEntitlements(basicByDefault, 'nope')).toThrow(ConfigError);
  });
});

describe('daily caps', () => {
  it('converts USD to micro-USD, with per-tenant overrides (null: uncapped)', () => {
    const config = parseLimitsConfig({
      costCaps: {
        globalUsdPerDay: 2.5,
        tenantUsdPerDay: 0.01,
        tenants: { big: null, small: 0.002 },
      },
    });
    expect(dailyCapsMicroUsd(config, 'acme')).toEqual({ global: 2_500_000, tenant: 10_000 });
    expect(dailyCapsMicroUsd(config, 'big')).toEqual({ global: 2_500_000, tenant: null });
    expect(dailyCapsMicroUsd(config, 'small')).toEqual({ global: 2_500_000, tenant: 2_000 });
    expect(
      dailyCapsMicroUsd(parseLimitsConfig({ costCaps: { globalUsdPerDay: null } }), 'acme').global,
    ).toBeNull();
  });
});

describe('periods', () => {
  it('names the minute, day and month in UTC and when each resets, across a year end', () => {
    const p = periodsAt(new Date('2025-12-31T23:59:30.250Z'));
    expect(p).toMatchObject({ minute: '2025-12-31T23:59', day: '2025-12-31', month: '2025-12' });
    expect(p.minuteResetsAt.toISOString()).toBe('2026-01-01T00:00:00.000Z');
    expect(p.dayResetsAt.toISOString()).toBe('2026-01-01T00:00:00.000Z');
    expect(p.monthResetsAt.toISOString()).toBe('2026-01-01T00:00:00.000Z');
    expect(secondsUntil(new Date('2025-12-31T23:59:30.250Z'), p.minuteResetsAt)).toBe(30);
    expect(secondsUntil(p.minuteResetsAt, p.minuteResetsAt)).toBe(1);
  });
});
