/**
 * The one way API handlers are built: middy with Powertools logging and metrics, JSON body
 * parsing, the caller's identity, zod validation of the body, and the single error middleware
 * that renders `{ "error": { "code", "message", "retryable" } }` and never leaks a stack trace.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { MetricUnit, type Metrics } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type {
  APIGatewayProxyEventV2,
  APIGatewayProxyStructuredResultV2,
  Context,
} from 'aws-lambda';
import type * as z from '../core/zod';
import { runInDbScope, type DbScope } from '../adapters/postgres/db-scope';
import { AppError, toErrorResponse, ValidationError } from '../core/errors';
import type { Admission, Limiter } from '../core/limits/limiter';
import {
  DEFAULT_IDENTITY_CONFIG,
  identityFromEvent,
  type Identity,
  type IdentityConfig,
} from './identity';
import { attachAdmission, withLimitHeaders } from './limits-middleware';

export type ApiEvent = APIGatewayProxyEventV2 & { requestContext: { authorizer?: unknown } };
export type ApiResult = APIGatewayProxyStructuredResultV2 & {
  statusCode: number;
  headers: Record<string, string>;
};

export interface HttpRequest<B> {
  readonly body: B;
  readonly identity: Identity;
  readonly event: ApiEvent;
  readonly pathParameters: Readonly<Record<string, string | undefined>>;
  readonly query: Readonly<Record<string, string | undefined>>;
}

export interface HttpResponse {
  readonly status?: number;
  readonly body: unknown;
  readonly headers?: Record<string, string>;
  /** `body` is a string sent as is (with its own content-type header), not JSON. */
  readonly raw?: boolean;
}

export interface HttpHandlerDeps {
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly identity?: IdentityConfig;
  /** Quotas, rate limits and cost caps, checked after authentication and before any work. */
  readonly limiter?: Limiter;
}

/** Turns the first zod issue into a message that names the field. */
export function describeZodError(error: z.core.$ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'Invalid request';
  const field = issue.path.length > 0 ? issue.path.join('.') : 'body';
  return `${field}: ${issue.message}`;
}

/** Parses with a zod schema, throwing a 422 ValidationError that names the field. */
export function parseOrThrow<S extends z.ZodMiniType>(schema: S, value: unknown): z.infer<S> {
  const result = schema.safeParse(value);
  if (!result.success) {
    throw new ValidationError(
      describeZodError(result.error),
      result.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
    );
  }
  return result.data;
}

/**
 * The database scope of a request (row-level security, db-scope.ts): the caller's tenant, and
 * the caller's own private rows, or every user's for a tenant admin.
 */
export function requestDbScope(identity: Identity): DbScope {
  return { tenantId: identity.tenantId, userId: identity.userId, allUsers: identity.isAdmin };
}

function parseJsonBody(event: ApiEvent): unknown {
  if (event.body === undefined || event.body === null || event.body === '') return {};
  const raw = event.isBase64Encoded
    ? Buffer.from(event.body, 'base64').toString('utf8')
    : event.body;
  try {
    return JSON.parse(raw);
  } catch {
    throw new ValidationError('body: is not valid JSON');
  }
}

/**
 * Headers on every API response: the declared type is the only one a browser may use, and
 * nothing (a shared proxy, the browser's cache) keeps a response, since each one is the
 * caller's own data. They win over a handler's own headers.
 */
export const API_RESPONSE_HEADERS: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
};

function json(status: number, body: unknown, headers: Record<string, string> = {}): ApiResult {
  return {
    statusCode: status,
    headers: {
      'content-type': 'application/json; charset=utf-8',
      ...headers,
      ...API_RESPONSE_HEADERS,
    },
    body: JSON.stringify(body),
  };
}

/**
 * Builds an API handler: `schema` validates the body (use `z.object({})` for bodiless routes);
 * `route` names the metric dimension.
 */
export function createHttpHandler<S extends z.ZodMiniType>(
  deps: HttpHandlerDeps,
  options: { route: string; schema: S; authenticated?: boolean },
  fn: (req: HttpRequest<z.infer<S>>) => Promise<HttpResponse>,
) {
  const base = async (event: ApiEvent, _context: Context): Promise<ApiResult> => {
    const started = performance.now();
    let status = 500;
    let admission: Admission | undefined;
    try {
      const identity =
        options.authenticated === false
          ? { userId: 'anonymous', tenantId: 'anonymous', groups: [], plan: null, isAdmin: false }
          : identityFromEvent(event, deps.identity ?? DEFAULT_IDENTITY_CONFIG);
      deps.logger.appendKeys({
        tenantId: identity.tenantId,
        userId: identity.userId,
        route: options.route,
      });
      if (deps.limiter && options.authenticated !== false) {
        admission = await deps.limiter.admit(identity, options.route);
        attachAdmission(event, admission);
      }
      const body = parseOrThrow(options.schema, parseJsonBody(event));
      const response = await runInDbScope(requestDbScope(identity), () =>
        fn({
          body,
          identity,
          event,
          pathParameters: event.pathParameters ?? {},
          query: event.queryStringParameters ?? {},
        }),
      );
      status = response.status ?? 200;
      const headers = withLimitHeaders(response.headers, admission);
      if (response.raw) {
        return {
          statusCode: status,
          headers: { ...headers, ...API_RESPONSE_HEADERS },
          body: String(response.body),
        };
      }
      return json(status, response.body, headers);
    } catch (err) {
      const { status: errorStatus, body } = toErrorResponse(err);
      status = errorStatus;
      if (status >= 500) {
        deps.logger.error('request failed', { err, route: options.route });
      } else {
        deps.logger.info('request rejected', { code: body.error.code, status });
      }
      return json(
        status,
        body,
        withLimitHeaders(err instanceof AppError ? err.options.headers : undefined, admission),
      );
    } finally {
      // A 5xx on our side is refunded; an answer's token cost is added to the daily spend.
      if (admission) await deps.limiter?.settle(admission, { status });
      deps.metrics.addDimensions({ route: options.route });
      deps.metrics.addMetric('Requests', MetricUnit.Count, 1);
      deps.metrics.addMetric(
        status >= 500 ? 'Errors5xx' : status >= 400 ? 'Errors4xx' : 'Success',
        MetricUnit.Count,
        1,
      );
      deps.metrics.addMetric('Latency', MetricUnit.Milliseconds, performance.now() - started);
      deps.logger.removeKeys(['tenantId', 'userId', 'route']);
    }
  };
  return middy(base).use(injectLambdaContext(deps.logger)).use(logMetrics(deps.metrics));
}
