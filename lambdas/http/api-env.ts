/**
 * What every API function reads from its environment for the request lifecycle, set by
 * lib/constructs/groundwork-rest-api.ts on each function it routes to: `TOKEN_AUDIENCES`, the app
 * clients whose tokens are accepted (identity.ts), and `CORS_ORIGINS`, the browser origins the
 * responses allow (cors.ts; empty: none). Both are JSON arrays.
 */
import * as z from '../core/zod';
import { DEFAULT_IDENTITY_CONFIG, type IdentityConfig } from './identity';

/** A JSON array of non-empty strings. */
const jsonList = z.pipe(
  z.pipe(
    z.string(),
    z.transform((s): unknown => {
      try {
        return JSON.parse(s);
      } catch {
        return s;
      }
    }),
  ),
  z.array(z.string().check(z.minLength(1))),
);

export const apiEnvShape = {
  /** At least one: a function that accepted any client's tokens would be a wiring mistake. */
  TOKEN_AUDIENCES: jsonList.check(z.minLength(1)),
  /** Empty: no cross-origin call is allowed (`corsOrigins: []`). */
  CORS_ORIGINS: jsonList,
};

/** The handler dependencies of a parsed API function environment. */
export function apiDepsFromEnv(env: {
  readonly TOKEN_AUDIENCES: string[];
  readonly CORS_ORIGINS: string[];
}): { identity: IdentityConfig; corsOrigins: readonly string[] } {
  return {
    identity: { ...DEFAULT_IDENTITY_CONFIG, audiences: env.TOKEN_AUDIENCES },
    corsOrigins: env.CORS_ORIGINS,
  };
}
