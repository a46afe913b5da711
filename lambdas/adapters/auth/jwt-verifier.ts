/**
 * Verifies RS256/ES256 bearer tokens with aws-jwt-verify, the way an API Gateway JWT authorizer
 * does: signature against a JWKS, issuer, expiry, and `aud` (or, for Cognito access tokens,
 * `client_id`) against the expected audiences. Used by the embedded default's HTTP server
 * against the local issuer's keys, and by anything in AWS that must check Cognito tokens itself
 * (a Lambda function URL) against the user pool's JWKS.
 */
import { JwtVerifier } from 'aws-jwt-verify';
import { FetchError, JwtExpiredError } from 'aws-jwt-verify/error';
import { assertIsJwks, type Jwks } from 'aws-jwt-verify/jwk';
import type { JwtPayload } from 'aws-jwt-verify/jwt-model';
import type { JsonWebKey } from 'node:crypto';
import { AppError, AuthenticationError, ConfigError, UnavailableError } from '../../core/errors';

/** What the HTTP layer needs: verified claims, or an AppError (401, or 503 if keys are unreachable). */
export interface TokenVerifier {
  verify(token: string): Promise<Record<string, unknown>>;
}

export interface JwtVerifierConfig {
  /** The expected `iss`, e.g. `https://cognito-idp.<region>.amazonaws.com/<pool id>`. */
  readonly issuer: string;
  /** Accepted audiences: the token's `aud` (or, when it has none, `client_id`) must be one of them. */
  readonly audience: string | readonly string[];
  /**
   * The keys to trust. Given alone, verification never touches the network (the embedded
   * default). Given with `jwksUri`, they pre-fill the cache.
   */
  readonly jwks?: { readonly keys: readonly JsonWebKey[] };
  /** Where to fetch the keys (and refetch on an unknown `kid`, for key rotation), e.g. Cognito's JWKS. */
  readonly jwksUri?: string;
  /** Clock skew tolerated on `exp`/`nbf`. @default 0 */
  readonly graceSeconds?: number;
}

const TOKEN_EXPIRED_MESSAGE = 'The token has expired';
const TOKEN_INVALID_MESSAGE = 'The token is invalid';

function audiencesOf(payload: JwtPayload): string[] {
  const aud = payload.aud;
  if (Array.isArray(aud)) return aud.filter((a): a is string => typeof a === 'string');
  if (typeof aud === 'string') return [aud];
  // Cognito access tokens carry no aud; API Gateway then checks client_id instead.
  return typeof payload.client_id === 'string' ? [payload.client_id] : [];
}

/** Maps a library error to a short message that reveals nothing about our configuration. */
function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof JwtExpiredError) return new AuthenticationError(TOKEN_EXPIRED_MESSAGE);
  if (err instanceof FetchError) {
    return new UnavailableError('The signing keys cannot be fetched right now', err);
  }
  return new AuthenticationError(TOKEN_INVALID_MESSAGE);
}

/** Builds a verifier; throws ConfigError at start-up when neither keys nor a key URL are given. */
export function createJwtVerifier(config: JwtVerifierConfig): TokenVerifier {
  if (!config.jwks && !config.jwksUri) {
    throw new ConfigError('createJwtVerifier needs jwks, jwksUri or both');
  }
  const audiences = typeof config.audience === 'string' ? [config.audience] : [...config.audience];
  if (audiences.length === 0)
    throw new ConfigError('createJwtVerifier needs at least one audience');

  const verifier = JwtVerifier.create({
    issuer: config.issuer,
    // Never fetched when only `jwks` is given: verifySync below reads the cache alone.
    jwksUri: config.jwksUri ?? `${config.issuer.replace(/\/+$/, '')}/.well-known/jwks.json`,
    // Checked in customJwtCheck, to accept client_id as API Gateway does.
    audience: null,
    graceSeconds: config.graceSeconds ?? 0,
    customJwtCheck: ({ payload }) => {
      if (typeof payload.exp !== 'number') throw new AuthenticationError(TOKEN_INVALID_MESSAGE);
      if (!audiencesOf(payload).some((a) => audiences.includes(a))) {
        throw new AuthenticationError(TOKEN_INVALID_MESSAGE);
      }
    },
  });
  if (config.jwks) {
    const jwks: unknown = { keys: [...config.jwks.keys] };
    try {
      assertIsJwks(jwks as Parameters<typeof assertIsJwks>[0]);
    } catch (err) {
      throw new ConfigError(
        `createJwtVerifier: jwks is not a valid key set (${err instanceof Error ? err.message : String(err)})`,
      );
    }
    verifier.cacheJwks(jwks as Jwks);
  }

  return {
    async verify(token) {
      try {
        const payload = config.jwksUri ? await verifier.verify(token) : verifier.verifySync(token);
        return { ...payload };
      } catch (err) {
        throw toAppError(err);
      }
    },
  };
}
