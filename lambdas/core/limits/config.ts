/**
 * Plans and entitlements, rate limits, cost caps and the model price table: one zod-validated
 * config object (from a JSON file or an environment variable), parsed once at cold start.
 *
 * Defaults (each can be overridden field by field; `null` means unlimited):
 *
 * | plan   | answers / month | searches / month | requests / minute |
 * |--------|-----------------|------------------|-------------------|
 * | free   | 50              | 500              | 60                |
 * | basic  | 500             | 5,000            | 60                |
 * | pro    | 2,000           | 20,000           | 60                |
 * | growth | unlimited       | unlimited        | 60                |
 * | admin  | unlimited       | unlimited        | 60                |
 *
 * Searches are counted apart from answers, at ten times the answer allowance. Daily cost caps:
 * USD 100 for the whole deployment and USD 20 per tenant (UTC days), overridable per tenant.
 */
import * as z from '../zod';
import { ConfigError } from '../errors';

/** The monthly quotas a route can draw on. */
export const QUOTA_KINDS = ['answers', 'searches'] as const;
export type QuotaKind = (typeof QUOTA_KINDS)[number];

const quotaLimitSchema = z.nullable(z.int().check(z.nonnegative()));

const planSchema = z.strictObject({
  /** Answers per calendar month (UTC); `null` is unlimited. */
  answersPerMonth: quotaLimitSchema,
  /** Searches per calendar month (UTC); `null` is unlimited. */
  searchesPerMonth: quotaLimitSchema,
  /** Requests per minute across every API route. */
  requestsPerMinute: z.int().check(z.positive()),
});
export type Plan = z.infer<typeof planSchema>;

const DEFAULT_PLANS: Readonly<Record<string, Plan>> = {
  free: { answersPerMonth: 50, searchesPerMonth: 500, requestsPerMinute: 60 },
  basic: { answersPerMonth: 500, searchesPerMonth: 5_000, requestsPerMinute: 60 },
  pro: { answersPerMonth: 2_000, searchesPerMonth: 20_000, requestsPerMinute: 60 },
  growth: { answersPerMonth: null, searchesPerMonth: null, requestsPerMinute: 60 },
  admin: { answersPerMonth: null, searchesPerMonth: null, requestsPerMinute: 60 },
};

/** The plan reserved for members of the admin group (a `custom:plan` claim cannot select it). */
const ADMIN_PLAN = 'admin';

const modelPriceSchema = z.strictObject({
  /** USD per million input (prompt) tokens. */
  inputPerMillionTokens: z.number().check(z.nonnegative()),
  /** USD per million output (completion) tokens. */
  outputPerMillionTokens: z.number().check(z.nonnegative()),
});
export type ModelPrice = z.infer<typeof modelPriceSchema>;

/**
 * On-demand prices (USD per million tokens, us-east-1) of the models the answer pipeline is
 * likely to use. Keys are model-id prefixes without the `bedrock/` provider prefix or a
 * cross-region inference profile prefix (`us.`, `eu.`, ...); the longest matching key wins.
 * Check them against the current price list before relying on a cap.
 */
const DEFAULT_MODEL_PRICES: Readonly<Record<string, ModelPrice>> = {
  extractive: { inputPerMillionTokens: 0, outputPerMillionTokens: 0 },
  'anthropic.claude-3-haiku': { inputPerMillionTokens: 0.25, outputPerMillionTokens: 1.25 },
  'anthropic.claude-3-5-haiku': { inputPerMillionTokens: 0.8, outputPerMillionTokens: 4 },
  'anthropic.claude-3-5-sonnet': { inputPerMillionTokens: 3, outputPerMillionTokens: 15 },
  'anthropic.claude-3-7-sonnet': { inputPerMillionTokens: 3, outputPerMillionTokens: 15 },
  'anthropic.claude-sonnet-4': { inputPerMillionTokens: 3, outputPerMillionTokens: 15 },
  'amazon.nova-micro': { inputPerMillionTokens: 0.035, outputPerMillionTokens: 0.14 },
  'amazon.nova-lite': { inputPerMillionTokens: 0.06, outputPerMillionTokens: 0.24 },
  'amazon.nova-pro': { inputPerMillionTokens: 0.8, outputPerMillionTokens: 3.2 },
  'meta.llama3-1-8b-instruct': { inputPerMillionTokens: 0.22, outputPerMillionTokens: 0.22 },
};

/** Routes (the `route` name given to `createHttpHandler`) that draw on a monthly quota. */
const DEFAULT_ROUTE_QUOTAS: Readonly<Record<string, QuotaKind>> = {
  answer: 'answers',
  'answer-stream': 'answers',
  search: 'searches',
};

const planNameSchema = z
  .string()
  .check(
    z.regex(/^[a-z][a-z0-9_-]{0,31}$/, 'plan names are lower-case letters, digits, "_" or "-"'),
  );
const tenantIdSchema = z
  .string()
  .check(z.regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/, 'not a tenant id'));
const capSchema = z.nullable(z.number().check(z.positive()));

/** Plans given in config are merged field by field over the defaults; new plans need every field. */
const planOverridesSchema = z.prefault(z.record(planNameSchema, z.partial(planSchema)), {});
const plansSchema = z.pipe(
  planOverridesSchema,
  z.transform((given: z.output<typeof planOverridesSchema>, ctx) => {
    const merged: Record<string, Plan> = { ...DEFAULT_PLANS };
    for (const [name, override] of Object.entries(given)) {
      const defined = Object.fromEntries(
        Object.entries(override).filter(([, v]) => v !== undefined),
      );
      const result = planSchema.safeParse({ ...DEFAULT_PLANS[name], ...defined });
      if (!result.success) {
        for (const issue of result.error.issues) {
          // zod/mini's transform context has no addIssue: the issue goes on the payload as
          // classic zod's addIssue would put it.
          ctx.issues.push({
            code: 'custom',
            message:
              issue.path.length > 0
                ? issue.message
                : `${issue.message} (a new plan needs every field)`,
            path: [name, ...issue.path],
            input: ctx.value,
          });
        }
        continue;
      }
      merged[name] = result.data;
    }
    return merged;
  }),
);

const limitsConfigSchema = z
  .strictObject({
    plans: plansSchema,
    /** The plan of a caller whose token names no plan, or one that is not configured. */
    defaultPlan: z._default(planNameSchema, 'free'),
    /** Route name -> the quota it consumes; every other route only counts toward the rate limit. */
    routes: z._default(z.record(z.string().check(z.minLength(1)), z.enum(QUOTA_KINDS)), {
      ...DEFAULT_ROUTE_QUOTAS,
    }),
    costCaps: z.prefault(
      z.strictObject({
        /** USD per UTC day for the whole deployment; `null` disables the global cap. */
        globalUsdPerDay: z._default(capSchema, 100),
        /** USD per UTC day per tenant; `null` disables the per-tenant cap. */
        tenantUsdPerDay: z._default(capSchema, 20),
        /** Per-tenant overrides of `tenantUsdPerDay` (`null`: no cap for that tenant). */
        tenants: z._default(z.record(tenantIdSchema, capSchema), {}),
      }),
      {},
    ),
    /** Merged over `DEFAULT_MODEL_PRICES`. */
    prices: z.pipe(
      z.prefault(z.record(z.string().check(z.minLength(1)), modelPriceSchema), {}),
      z.transform((given) => ({ ...DEFAULT_MODEL_PRICES, ...given })),
    ),
    /** Charged for a model that matches no price key: deliberately not cheap. */
    unknownModelPrice: z.prefault(modelPriceSchema, {
      inputPerMillionTokens: 3,
      outputPerMillionTokens: 15,
    }),
    /**
     * What to do when the limits table cannot be reached: `admit` (serve, log an error, count
     * `LimiterStoreErrors`) or `reject` (503 `unavailable`, retryable).
     */
    onStoreUnavailable: z._default(z.enum(['admit', 'reject']), 'admit'),
  })
  .check(
    z.superRefine((config, ctx) => {
      if (!Object.hasOwn(config.plans, config.defaultPlan)) {
        ctx.addIssue({
          code: 'custom',
          message: `"${config.defaultPlan}" is not a configured plan`,
          path: ['defaultPlan'],
        });
      }
    }),
  );

export type LimitsConfig = z.output<typeof limitsConfigSchema>;
/** What a config file may contain: every field optional. */
export type LimitsConfigInput = z.input<typeof limitsConfigSchema>;

/** Parses a limits config, throwing a ConfigError that names the source and the field. */
export function parseLimitsConfig(value: unknown, source = 'limits config'): LimitsConfig {
  const result = limitsConfigSchema.safeParse(value ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = issue && issue.path.length > 0 ? issue.path.join('.') : '(root)';
  throw new ConfigError(`${source}: ${field}: ${issue?.message ?? 'invalid'}`);
}

/** Parses the JSON text of a limits config file or environment variable (empty text: defaults). */
export function parseLimitsConfigJson(
  text: string | undefined,
  source = 'limits config',
): LimitsConfig {
  if (text === undefined || text.trim() === '') return parseLimitsConfig({}, source);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(
      `${source}: is not valid JSON (${err instanceof Error ? err.message : String(err)})`,
    );
  }
  return parseLimitsConfig(value, source);
}

export const DEFAULT_LIMITS_CONFIG: LimitsConfig = parseLimitsConfig({});

/** The facts about a caller the plan depends on (the HTTP `Identity` satisfies it). */
export interface PlanHolder {
  /** From the verified token only (claim or group), never from the request. */
  readonly plan: string | null;
  readonly isAdmin: boolean;
}

/**
 * The caller's plan: `admin` for the admin group, else the token's plan if it is configured,
 * else the default plan. The `admin` plan cannot be claimed without the admin group.
 */
export function resolvePlan(caller: PlanHolder, config: LimitsConfig): string {
  if (caller.isAdmin && Object.hasOwn(config.plans, ADMIN_PLAN)) return ADMIN_PLAN;
  const claimed = caller.plan?.trim().toLowerCase();
  if (claimed && claimed !== ADMIN_PLAN && Object.hasOwn(config.plans, claimed)) return claimed;
  return config.defaultPlan;
}

/** The entitlements of a configured plan. */
export function planEntitlements(config: LimitsConfig, plan: string): Plan {
  const entitlements = Object.hasOwn(config.plans, plan) ? config.plans[plan] : undefined;
  if (!entitlements) throw new ConfigError(`limits config: plan "${plan}" is not configured`);
  return entitlements;
}

/** The monthly limit of one quota in a plan (`null`: unlimited). */
export function quotaLimit(plan: Plan, kind: QuotaKind): number | null {
  return kind === 'answers' ? plan.answersPerMonth : plan.searchesPerMonth;
}

/** The quota a route draws on, or `null` when it only counts toward the rate limit. */
export function routeQuota(config: LimitsConfig, route: string): QuotaKind | null {
  return Object.hasOwn(config.routes, route) ? (config.routes[route] ?? null) : null;
}

/** The daily caps that apply to a tenant, in micro-USD (`null`: no cap). */
export function dailyCapsMicroUsd(
  config: LimitsConfig,
  tenantId: string,
): { global: number | null; tenant: number | null } {
  const tenantUsd = Object.hasOwn(config.costCaps.tenants, tenantId)
    ? (config.costCaps.tenants[tenantId] ?? null)
    : config.costCaps.tenantUsdPerDay;
  const toMicro = (usd: number | null) => (usd === null ? null : Math.round(usd * 1_000_000));
  return { global: toMicro(config.costCaps.globalUsdPerDay), tenant: toMicro(tenantUsd) };
}
