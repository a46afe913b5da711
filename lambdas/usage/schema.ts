/** GET /api/usage: the response contract (also the source of the OpenAPI document). */
import * as z from '../core/zod';

export const usageRequestSchema = z.strictObject({});

const quotaSchema = z.object({
  /** `null`: unlimited. */
  limit: z.nullable(z.int()),
  used: z.int(),
  remaining: z.nullable(z.int()),
  /** ISO 8601, UTC: the first instant of next month. */
  resets_at: z.string(),
});

export const usageResponseSchema = z.object({
  plan: z.string(),
  /** The quota month, `yyyy-mm` (UTC). */
  period: z.string(),
  quotas: z.object({ answers: quotaSchema, searches: quotaSchema }),
  rate_limit: z.object({
    limit: z.int(),
    remaining: z.int(),
    window_seconds: z.literal(60),
    resets_at: z.string(),
    /** Unix seconds, as in `X-RateLimit-Reset`. */
    reset: z.int(),
  }),
});
export type UsageResponseBody = z.infer<typeof usageResponseSchema>;

/** GET /api/health. */
export const healthResponseSchema = z.object({ status: z.literal('ok') });
