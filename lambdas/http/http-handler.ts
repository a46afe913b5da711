/**
 * The one way API handlers are built: middy with Powertools tracing, logging and metrics, JSON
 * body parsing, the caller's identity, zod validation of the body, and the single error
 * middleware that renders `{ "error": { "code", "message", "retryable" } }` and never leaks a
 * stack trace.
 *
 * Every request is held to the same limits before any schema sees it: a body of at most
 * MAX_BODY_BYTES, JSON nested at most MAX_JSON_DEPTH levels, and no string (value, key, query
 * parameter or path parameter) that PostgreSQL cannot store (NUL, a lone UTF-16 surrogate).
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { MetricUnit, type Metrics } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import type { Tracer } from '@aws-lambda-powertools/tracer';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import middy from '@middy/core';
import type {
  APIGatewayProxyEventV2,
  APIGatewayProxyStructuredResultV2,
  Context,
} from 'aws-lambda';
import type * as z from '../core/zod';
import { runInDbScope, type DbScope } from '../adapters/postgres/db-scope';
import {
  AppError,
  ConfigError,
  PayloadTooLargeError,
  toErrorResponse,
  ValidationError,
} from '../core/errors';
import { findUnstorable, type UnstorableValue } from '../core/text/storable';
import { MAX_BODY_BYTES, MAX_JSON_DEPTH } from './request-limits';
import { API_ROUTES, type ErrorStatuses } from './api-routes';
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
  /** The body's bytes, on an upload route of the table (its JSON `body` is then `{}`). */
  readonly rawBody?: Buffer;
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
  /** X-Ray: a subsegment for the handler, under which calls record theirs; absent: no tracing. */
  readonly tracer?: Tracer | undefined;
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

/** The 422 for a value {@link findUnstorable} found, naming the field (`where` for the root). */
function unstorableError(found: UnstorableValue, where: string): ValidationError {
  // The field's name may itself hold the character: JSON escapes it (and a lone surrogate).
  const field = JSON.stringify(found.path).slice(1, -1);
  const name = field === '' ? where : field;
  return new ValidationError(
    found.reason === 'too_deep'
      ? `${name}: nested more than ${MAX_JSON_DEPTH} levels deep`
      : `${name}: contains a character that cannot be stored (NUL or an unpaired UTF-16 surrogate)`,
  );
}

/**
 * Refuses a request value holding text PostgreSQL cannot store, or nested too deeply, with a 422
 * naming the field; `where` names the value itself (`body`, a query parameter's name).
 */
export function assertStorable(value: unknown, where = 'body'): void {
  const found = findUnstorable(value, MAX_JSON_DEPTH);
  if (found) throw unstorableError(found, where);
}

/**
 * Parses with a zod schema, throwing a 422 ValidationError that names the field. The value is
 * checked for unstorable text and depth first, so no schema (the recursive metadata filter
 * included) ever walks a hostile value.
 */
export function parseOrThrow<S extends z.ZodMiniType>(schema: S, value: unknown): z.infer<S> {
  assertStorable(value);
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

/**
 * A request body as JSON: empty is `{}`, more than MAX_BODY_BYTES is a 413, anything that does
 * not parse a 422. Shared by every handler that reads a body (the streaming ones included).
 */
export function parseJsonBody(event: { body?: string | null; isBase64Encoded?: boolean }): unknown {
  if (event.body === undefined || event.body === null || event.body === '') return {};
  const bytes = event.isBase64Encoded
    ? Buffer.from(event.body, 'base64')
    : Buffer.from(event.body, 'utf8');
  if (bytes.byteLength > MAX_BODY_BYTES) throw new PayloadTooLargeError(MAX_BODY_BYTES);
  try {
    return JSON.parse(bytes.toString('utf8'));
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
 * The status a route's contract gives an error (ErrorStatuses): a validation error, a dependency
 * outage (UnavailableError) and a used-up quota may be answered with other statuses than the
 * error model's 422, 503 and 403. Other errors (a cost cap's 503 among them) keep theirs.
 */
export function contractStatus(
  status: number,
  code: string,
  statuses: ErrorStatuses | undefined,
): number {
  if (code === 'validation_error' && statuses?.validation) return statuses.validation;
  if (code === 'quota_exceeded' && statuses?.quotaExceeded) return statuses.quotaExceeded;
  if (code === 'unavailable' && statuses?.unavailable) return statuses.unavailable;
  return status;
}

/**
 * A route's body read as bytes, not JSON (a multipart upload), with its own size limit; larger
 * is a 413 naming it.
 */
export function rawRequestBody(
  event: { body?: string | null; isBase64Encoded?: boolean },
  maxBytes: number,
): Buffer {
  if (event.body === undefined || event.body === null) return Buffer.alloc(0);
  // The encoded length bounds the decoded one: a hostile body is refused before it is decoded.
  const bound = event.isBase64Encoded ? Math.floor((event.body.length * 3) / 4) : 0;
  if (bound > maxBytes + 2) throw new PayloadTooLargeError(maxBytes);
  const bytes = event.isBase64Encoded
    ? Buffer.from(event.body, 'base64')
    : Buffer.from(event.body, 'utf8');
  if (bytes.byteLength > maxBytes) throw new PayloadTooLargeError(maxBytes);
  return bytes;
}

export interface HttpHandlerOptions<S extends z.ZodMiniType> {
  /**
   * The handler's name in the route table (API_ROUTES), which gives its metric dimension, its
   * quota class, its contract's error statuses and, for an upload route, its body limit.
   */
  readonly route: string;
  /** Validates the JSON body (use `z.object({})` for bodiless routes). */
  readonly schema: S;
  readonly authenticated?: boolean;
  /**
   * The limiter's quota class when it depends on the request, over the table's `quota`: one of
   * the entry's `otherQuotas` (GET /api/search with `rag=true` draws on `answer`).
   */
  readonly quota?: string;
}

/** Builds an API handler from its options and the function that does the route's work. */
export function createHttpHandler<S extends z.ZodMiniType>(
  deps: HttpHandlerDeps,
  options: HttpHandlerOptions<S>,
  fn: (req: HttpRequest<z.infer<S>>) => Promise<HttpResponse>,
) {
  const entry = API_ROUTES.find((r) => r.name === options.route);
  if (options.quota !== undefined && !(entry?.otherQuotas ?? []).includes(options.quota)) {
    throw new ConfigError(
      `route ${options.route}: quota class "${options.quota}" is not among its otherQuotas`,
    );
  }
  const quota = options.quota ?? entry?.quota ?? options.route;
  // An upload route reads its body as bytes, with its own limit, instead of JSON.
  const rawBodyLimit = entry?.upload?.maxBytes;
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
        admission = await deps.limiter.admit(identity, quota);
        attachAdmission(event, admission);
      }
      const pathParameters = event.pathParameters ?? {};
      const query = event.queryStringParameters ?? {};
      for (const [name, value] of Object.entries(pathParameters)) assertStorable(value, name);
      assertStorable(query, 'query');
      const rawBody = rawBodyLimit === undefined ? undefined : rawRequestBody(event, rawBodyLimit);
      const body = parseOrThrow(options.schema, rawBody ? {} : parseJsonBody(event));
      const response = await runInDbScope(requestDbScope(identity), () =>
        fn({ body, identity, event, pathParameters, query, ...(rawBody ? { rawBody } : {}) }),
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
      status = contractStatus(errorStatus, body.error.code, entry?.statuses);
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
  const handler = middy(base);
  // First, so that its subsegment spans the other middlewares; responses are callers' data.
  if (deps.tracer) handler.use(captureLambdaHandler(deps.tracer, { captureResponse: false }));
  return handler.use(injectLambdaContext(deps.logger)).use(logMetrics(deps.metrics));
}
