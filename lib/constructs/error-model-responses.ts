/**
 * API Gateway's own responses (authorizer rejections, unknown routes, throttling, WAF blocks,
 * integration failures) rendered in the API's one error model,
 * `{ "error": { "code", "message", "retryable" } }`, instead of `{"message":"Unauthorized"}`.
 * The bodies come from the same error classes the handlers throw (lambdas/core/errors.ts).
 */
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import {
  AppError,
  AuthenticationError,
  ForbiddenError,
  NotFoundError,
  toErrorResponse,
  UnavailableError,
} from '../../lambdas/core/errors';
import { CORS_EXPOSE_HEADERS } from '../../lambdas/http/cors';

/** What API Gateway answers itself, by gateway response type. */
const GATEWAY_ERRORS: readonly (readonly [apigateway.ResponseType, AppError])[] = [
  // No token, a malformed, expired or foreign token: the authorizer's 401.
  [apigateway.ResponseType.UNAUTHORIZED, new AuthenticationError()],
  [
    apigateway.ResponseType.ACCESS_DENIED,
    new ForbiddenError('The token does not allow this request'),
  ],
  [
    apigateway.ResponseType.WAF_FILTERED,
    new ForbiddenError('The request was blocked by the firewall'),
  ],
  // REST APIs answer an unknown path or method with this 403; it is a 404 to the caller.
  [apigateway.ResponseType.MISSING_AUTHENTICATION_TOKEN, new NotFoundError('No such route')],
  [
    apigateway.ResponseType.THROTTLED,
    new AppError('rate_limit_exceeded', 'Too many requests; retry shortly', 429, {
      retryable: true,
    }),
  ],
  [
    apigateway.ResponseType.REQUEST_TOO_LARGE,
    new AppError('validation_error', 'body: is too large', 413),
  ],
  [
    apigateway.ResponseType.INTEGRATION_TIMEOUT,
    new UnavailableError('The request took too long; retry shortly'),
  ],
  [
    apigateway.ResponseType.DEFAULT_4XX,
    new AppError('bad_request', 'The request was refused', 400),
  ],
  [apigateway.ResponseType.DEFAULT_5XX, new AppError('internal_error', 'Internal error', 500)],
];

/**
 * The `Access-Control-Allow-Origin` of a gateway response under the CORS origins
 * (lambdas/http/cors.ts): `*`, or the one allowed origin. A gateway response is static, so with
 * several origins it cannot name the caller's: none then (the browser reports a CORS error
 * instead of the body; the status still reaches the page).
 */
function gatewayCorsOrigin(origins: readonly string[]): string | undefined {
  if (origins.includes('*')) return '*';
  return origins.length === 1 ? origins[0] : undefined;
}

/**
 * Adds a gateway response for each of GATEWAY_ERRORS. DEFAULT_4XX and DEFAULT_5XX keep the
 * status API Gateway chose (the code is generic); the others set theirs.
 * @param corsOrigins the browser origins allowed (gatewayCorsOrigin)
 */
export function addErrorModelResponses(
  api: apigateway.RestApi,
  corsOrigins: readonly string[],
): void {
  const corsOrigin = gatewayCorsOrigin(corsOrigins);
  for (const [type, error] of GATEWAY_ERRORS) {
    const { status, body } = toErrorResponse(error);
    const keepsStatus =
      type === apigateway.ResponseType.DEFAULT_4XX || type === apigateway.ResponseType.DEFAULT_5XX;
    api.addGatewayResponse(`Error${type.responseType}`, {
      type,
      ...(keepsStatus ? {} : { statusCode: String(status) }),
      templates: { 'application/json': JSON.stringify(body) },
      responseHeaders: {
        'Content-Type': "'application/json; charset=utf-8'",
        ...(corsOrigin
          ? {
              'Access-Control-Allow-Origin': `'${corsOrigin}'`,
              'Access-Control-Expose-Headers': `'${CORS_EXPOSE_HEADERS.join(',')}'`,
            }
          : {}),
      },
    });
  }
}
