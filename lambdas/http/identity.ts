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

/**
 * How the list claims of a verified token reach the handler: as real arrays (the local server
 * passes the token's own claims), as API Gateway's HTTP API JWT authorizer renders them (a
 * string `"[a b c]"`: the values joined by spaces in brackets), or as the REST API's Cognito
 * authorizer renders them (a string `"a,b,c"`).
 */
export type ClaimFormat = 'http-api-jwt' | 'rest-cognito';

type VerifiedClaims = { readonly claims: Claims; readonly format: ClaimFormat };

/** Finds the verified claims in an API Gateway v2 (JWT authorizer) or v1 (Cognito authorizer) event. */
export function verifiedClaimsOf(event: unknown): VerifiedClaims | null {
  const authorizer = (
    event as { requestContext?: { authorizer?: { jwt?: { claims?: Claims }; claims?: Claims } } }
  )?.requestContext?.authorizer;
  if (authorizer?.jwt?.claims) return { claims: authorizer.jwt.claims, format: 'http-api-jwt' };
  if (authorizer?.claims) return { claims: authorizer.claims, format: 'rest-cognito' };
  return null;
}

/** The verified claims of an event, whatever the authorizer. */
export function claimsOf(event: unknown): Claims | null {
  return verifiedClaimsOf(event)?.claims ?? null;
}

/**
 * A list claim exactly as the authorizer sends it. Cognito group names cannot contain
 * whitespace but can contain commas, so the HTTP API's bracketed form is split on whitespace
 * only: a group named `readers,admin` stays one group and grants nothing. The REST API joins
 * with commas, so there a comma always separates.
 */
export function listClaim(value: Claims[string], format: ClaimFormat): string[] {
  if (Array.isArray(value)) return value.map(String);
  if (typeof value !== 'string' || value.trim() === '') return [];
  const text = value.trim();
  if (format === 'http-api-jwt') {
    const inner = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
    return inner.split(/\s+/).filter(Boolean);
  }
  return text.split(',').filter(Boolean);
}

const KNOWN_PLANS = ['free', 'basic', 'pro', 'growth', 'admin'];

/** Builds the caller's identity or throws 401 (no verified token) / 403 (no usable tenant). */
export function identityFromEvent(
  event: unknown,
  config: IdentityConfig = DEFAULT_IDENTITY_CONFIG,
): Identity {
  const verified = verifiedClaimsOf(event);
  const claims = verified?.claims;
  const userId = claims?.sub;
  if (!verified || !claims || typeof userId !== 'string' || userId === '')
    throw new AuthenticationError();
  const tenantId = claims[config.tenantClaim];
  if (typeof tenantId !== 'string' || !TENANT_ID_PATTERN.test(tenantId)) {
    throw new ForbiddenError(
      `Your token carries no usable tenant (claim "${config.tenantClaim}"); ask an administrator to assign you to a tenant.`,
    );
  }
  const groups = listClaim(claims['cognito:groups'], verified.format);
  const planClaim = claims[config.planClaim];
  const plan =
    (typeof planClaim === 'string' && planClaim !== '' ? planClaim : null) ??
    groups.map((g) => g.replace(/^plan-/, '')).find((g) => KNOWN_PLANS.includes(g)) ??
    null;
  return { userId, tenantId, groups, plan, isAdmin: groups.includes(config.adminGroup) };
}
