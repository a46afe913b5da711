/**
 * Who is calling: read from the claims API Gateway's JWT authorizer verified (or, on the embedded
 * default, the claims the local server verified against its own issuer). The tenant always comes
 * from the token, never from the request body.
 */
import * as z from '../core/zod';
import { AuthenticationError, ForbiddenError } from '../core/errors';
import { TENANT_ID_PATTERN } from '../core/ingestion/object-attributes';

export interface Identity {
  readonly userId: string;
  readonly tenantId: string;
  readonly groups: readonly string[];
  /** The plan from the `custom:plan` claim or a `plan-<name>` / known plan group. */
  readonly plan: string | null;
  readonly isAdmin: boolean;
}

export const identityConfigSchema = z.object({
  tenantClaim: z._default(z.string().check(z.minLength(1)), 'custom:tenant_id'),
  planClaim: z._default(z.string().check(z.minLength(1)), 'custom:plan'),
  adminGroup: z._default(z.string().check(z.minLength(1)), 'admin'),
});
export type IdentityConfig = z.infer<typeof identityConfigSchema>;
export const DEFAULT_IDENTITY_CONFIG: IdentityConfig = identityConfigSchema.parse({});

type Claims = Record<string, string | number | boolean | string[] | undefined>;

/** Finds the verified claims in an API Gateway v2 (JWT authorizer) or v1 (Cognito authorizer) event. */
export function claimsOf(event: unknown): Claims | null {
  const ctx = (
    event as { requestContext?: { authorizer?: { jwt?: { claims?: Claims }; claims?: Claims } } }
  )?.requestContext;
  return ctx?.authorizer?.jwt?.claims ?? ctx?.authorizer?.claims ?? null;
}

/** API Gateway passes list claims as "[a b]" strings; tokens carry real arrays. */
function listClaim(value: Claims[string]): string[] {
  if (Array.isArray(value)) return value.map(String);
  if (typeof value !== 'string' || value.trim() === '') return [];
  return value
    .replace(/^\[|\]$/g, '')
    .split(/[\s,]+/)
    .filter(Boolean);
}

const KNOWN_PLANS = ['free', 'basic', 'pro', 'growth', 'admin'];

/** Builds the caller's identity or throws 401 (no verified token) / 403 (no usable tenant). */
export function identityFromEvent(
  event: unknown,
  config: IdentityConfig = DEFAULT_IDENTITY_CONFIG,
): Identity {
  const claims = claimsOf(event);
  const userId = claims?.sub;
  if (!claims || typeof userId !== 'string' || userId === '') throw new AuthenticationError();
  const tenantId = claims[config.tenantClaim];
  if (typeof tenantId !== 'string' || !TENANT_ID_PATTERN.test(tenantId)) {
    throw new ForbiddenError(
      `Your token carries no usable tenant (claim "${config.tenantClaim}"); ask an administrator to assign you to a tenant.`,
    );
  }
  const groups = listClaim(claims['cognito:groups']);
  const planClaim = claims[config.planClaim];
  const plan =
    (typeof planClaim === 'string' && planClaim !== '' ? planClaim : null) ??
    groups.map((g) => g.replace(/^plan-/, '')).find((g) => KNOWN_PLANS.includes(g)) ??
    null;
  return { userId, tenantId, groups, plan, isAdmin: groups.includes(config.adminGroup) };
}
