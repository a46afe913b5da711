/**
 * The AWS SDK's default credential provider as the Lambda bundles have it: the environment only.
 *
 * Every SDK client's Node.js runtime configuration imports `defaultProvider` from
 * `@aws-sdk/credential-provider-node`, the whole default chain (environment, SSO, shared ini
 * files, credential_process, web identity, container and instance metadata) with the SSO, STS
 * and sign-in clients its providers need: about 100 KB of every minified bundle. In Lambda the
 * chain always stops at its first link, because the runtime puts the execution role's
 * credentials in AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN. So
 * lib/bundling.ts aliases that package to this module, which is that first link alone
 * (`fromEnv` of `@aws-sdk/credential-provider-env`, which the chain itself calls). Outside
 * Lambda, a bundle then needs the same three variables: a profile, SSO or instance role is not
 * looked for. Tests and local/ are not bundled and keep the full chain.
 */
import { fromEnv } from '@aws-sdk/credential-provider-env';

/** What the SDK passes to `credentialDefaultProvider` (the client's config); only `logger` is read. */
export type DefaultProviderInit = NonNullable<Parameters<typeof fromEnv>[0]>;
/** The credentials the provider returns (key, secret, session token). */
export type EnvCredentials = Awaited<ReturnType<ReturnType<typeof fromEnv>>>;

/** The message of the error thrown when the environment has no credentials. */
export const MISSING_CREDENTIALS_MESSAGE =
  'No AWS credentials in the environment: this bundle reads AWS_ACCESS_KEY_ID and ' +
  'AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN), which Lambda sets; it does not look for ' +
  'profiles, SSO or instance roles (lib/bundling.ts, LAMBDA_SDK_ALIASES)';

/**
 * Stands in for `defaultProvider` of `@aws-sdk/credential-provider-node`: a provider that returns
 * the environment's credentials, or fails, naming the variables, when they are missing.
 */
export function defaultProvider(init: DefaultProviderInit = {}): () => Promise<EnvCredentials> {
  const env = fromEnv(init);
  return async () => {
    try {
      return await env();
    } catch (err) {
      throw new Error(MISSING_CREDENTIALS_MESSAGE, { cause: err });
    }
  };
}

/** As in `@aws-sdk/credential-provider-node`: credentials with an expiry need refreshing. */
export const credentialsWillNeedRefresh = (credentials: EnvCredentials): boolean =>
  credentials.expiration !== undefined;

/** As in `@aws-sdk/credential-provider-node`: expired within five minutes of their expiry. */
export const credentialsTreatedAsExpired = (credentials: EnvCredentials): boolean =>
  credentials.expiration !== undefined && credentials.expiration.getTime() - Date.now() < 300_000;
