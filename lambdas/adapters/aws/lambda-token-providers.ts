/**
 * `@aws-sdk/token-providers` as the Lambda bundles have it: bearer tokens from the environment
 * only.
 *
 * The Bedrock Runtime client can sign with a bearer token instead of SigV4. Its Node.js runtime
 * configuration looks for one in AWS_BEARER_TOKEN_BEDROCK (`fromEnvSigningName`), then in the
 * SSO token cache of the shared config files (`nodeProvider`), which brings the SSO OIDC client
 * into every bundle that uses Bedrock: about 20 KB minified. A Lambda function has no SSO cache,
 * so lib/bundling.ts aliases the package to this module: the environment lookup as the SDK does
 * it, and a `nodeProvider` that says there is nothing else to look in. The functions sign with
 * SigV4 (their execution role), which is tried first; a token in the environment still works.
 */
import { setTokenFeature } from '@aws-sdk/core/client';
import { getBearerTokenEnvKey } from '@aws-sdk/core/httpAuthSchemes';
import { TokenProviderError } from '@smithy/core/config';

/** The SDK logger its provider errors accept. */
type ProviderLogger = Exclude<
  ConstructorParameters<typeof TokenProviderError>[1],
  boolean | undefined
>['logger'];

/** A bearer token, as the SDK's token providers return it. */
export interface BearerToken {
  readonly token: string;
  readonly expiration?: Date;
}

/** The options the SDK passes to the token providers; only these are read. */
export interface TokenProviderInit {
  readonly signingName?: string;
  readonly logger?: ProviderLogger;
}

/**
 * As in `@aws-sdk/token-providers`: the token in `AWS_BEARER_TOKEN_<SIGNING NAME>` (for Bedrock,
 * AWS_BEARER_TOKEN_BEDROCK), or a TokenProviderError naming the variable.
 */
export const fromEnvSigningName =
  ({ logger, signingName }: TokenProviderInit = {}) =>
  async (): Promise<BearerToken> => {
    logger?.debug?.('groundwork lambda-token-providers - fromEnvSigningName');
    if (!signingName) {
      throw new TokenProviderError(
        "Please pass 'signingName' to compute environment variable key",
        {
          logger,
        },
      );
    }
    const key = getBearerTokenEnvKey(signingName);
    const token = process.env[key];
    if (token === undefined) {
      throw new TokenProviderError(`Token not present in '${key}' environment variable`, {
        logger,
      });
    }
    const bearer = { token };
    // As the SDK does: the user agent records where the token came from.
    setTokenFeature(bearer, 'BEARER_SERVICE_ENV_VARS', '3');
    return bearer;
  };

/** The message of the error `nodeProvider`'s providers throw. */
export const NO_TOKEN_MESSAGE =
  'No bearer token: the Lambda bundles read one from the environment only ' +
  '(AWS_BEARER_TOKEN_<SERVICE>), not from an SSO cache (lib/bundling.ts, LAMBDA_SDK_ALIASES)';

/** Stands in for the SDK's SSO-cache token chain: a provider that always fails, saying why. */
export const nodeProvider =
  (_init: TokenProviderInit = {}) =>
  async (): Promise<BearerToken> => {
    throw new TokenProviderError(NO_TOKEN_MESSAGE, false);
  };
