/**
 * Who is calling: read from the claims API Gateway's Cognito authorizer verified, in
 * `requestContext.authorizer.claims` of the REST API's proxy event (on the embedded default, the
 * claims the local server verified against its own issuer, in the same place). The token must
 * have been issued to one of our app clients: the Cognito authorizer checks the signature and
 * expiry but accepts the tokens of every app client of the pool, so the audience is checked here,
 * for every route. The tenant always comes from the token, never from the request body.
 */
import * as z from '../core/zod';
import { AuthenticationError, ForbiddenError } from '../core/errors';
import { TENANT_ID_PATTERN } from '../core/ingestion/object-attributes';
import { isStorableText } from '../core/text/storable';

export interface Identity {
  readonly userId: string;
  readonly tenantId: string;
  readonly groups: readonly string[];
  /** The plan from the `custom:plan` claim or a `plan-<name>` / known plan group. */
  readonly plan: string | null;
  readonly isAdmin: boolean;
}

const identityConfigSchema = z.object({
  tenantClaim: z._default(z.string().check(z.minLength(1)), 'custom:tenant_id'),
  planClaim: z._default(z.string().check(z.minLength(1)), 'custom:plan'),
  adminGroup: z._default(z.string().check(z.minLength(1)), 'admin'),
  /**
   * The app clients whose tokens are accepted: an ID token's `aud` or an access token's
   * `client_id` must be one of them (else 401). Unset: any client the authorizer accepted (only
   * for events built in tests; every Lambda entry and the local server set it).
   */
  audiences: z.optional(z.array(z.string().check(z.minLength(1))).check(z.minLength(1))),
});
export type IdentityConfig = z.infer<typeof identityConfigSchema>;
export const DEFAULT_IDENTITY_CONFIG: IdentityConfig = identityConfigSchema.parse({});

type Claims = Record<string, string | number | boolean | string[] | undefined>;

/** The verified claims of a REST API proxy event (`requestContext.authorizer.claims`), if any. */
function claimsOf(event: unknown): Claims | null {
  const authorizer = (event as { requestContext?: { authorizer?: { claims?: Claims } | null } })
    ?.requestContext?.authorizer;
  return authorizer?.claims ?? null;
}

/**
 * A list claim as the authorizer sends it: the Cognito authorizer joins the values with commas
 * (a real array, as a test or the local issuer may give, is taken as is).
 */
export function listClaim(value: Claims[string]): string[] {
  if (Array.isArray(value)) return value.map(String);
  if (typeof value !== 'string' || value.trim() === '') return [];
  return value
    .trim()
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);
}

/**
 * Refuses a token issued to another app client (401): the client is an ID token's `aud`, or an
 * access token's `client_id`.
 */
function assertAudience(claims: Claims, audiences: readonly string[] | undefined): void {
  if (!audiences) return;
  const client = claims.aud ?? claims.client_id;
  const clients = Array.isArray(client) ? client : typeof client === 'string' ? [client] : [];
  if (!clients.some((c) => audiences.includes(c)))
    throw new AuthenticationError('The token was issued to another application');
}

const KNOWN_PLANS = ['free', 'basic', 'pro', 'growth', 'admin'];

/**
 * A subject that can name a user everywhere the user id goes: a segment of a storage key
 * (`tenants/<tenant>/users/<user>/...`, which ingestion reads the owner back from), a database
 * value and a log field. Cognito's subjects are UUIDs; another issuer's may hold `|` or `@`, but
 * never `/` or a control character (NUL included) here, and is never `.` or `..`, which a storage
 * key's path would read as its own folder or the one above.
 */
const USER_ID_PATTERN = /^(?!\.{1,2}$)[^/\p{Cc}]+$/u;

/**
 * The longest subject, in UTF-8 bytes: as a key segment it stays within the 233 bytes the local
 * S3 emulator stores in a file name, and the whole key within S3's 1,024 bytes beside a tenant
 * and a file name (documents.ts, MAX_FILE_NAME_BYTES).
 */
const MAX_USER_ID_BYTES = 200;

/** Whether a token's subject can name a user (see USER_ID_PATTERN and MAX_USER_ID_BYTES). */
export function isUsableUserId(userId: string): boolean {
  return (
    USER_ID_PATTERN.test(userId) &&
    Buffer.byteLength(userId, 'utf8') <= MAX_USER_ID_BYTES &&
    isStorableText(userId)
  );
}

/** Builds the caller's identity or throws 401 (no verified token) / 403 (no usable tenant). */
export function identityFromEvent(
  event: unknown,
  config: IdentityConfig = DEFAULT_IDENTITY_CONFIG,
): Identity {
  const claims = claimsOf(event);
  const userId = claims?.sub;
  if (!claims || typeof userId !== 'string' || userId === '') throw new AuthenticationError();
  if (!isUsableUserId(userId))
    throw new AuthenticationError('The token\'s subject ("sub") cannot name a user');
  assertAudience(claims, config.audiences);
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
