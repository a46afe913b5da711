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
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import type { Tracer } from '@aws-lambda-powertools/tracer';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import type * as z from '../core/zod';
import type { DbScope } from '../adapters/postgres/db-scope';
import { PayloadTooLargeError, ValidationError } from '../core/errors';
import { findUnstorable, type UnstorableValue } from '../core/text/storable';
import { MAX_BODY_BYTES, MAX_JSON_DEPTH } from './request-limits';
import type { ErrorStatuses } from './api-routes';
import type { Limiter } from '../core/limits/limiter';
import type { Identity, IdentityConfig } from './identity';
import { withLimitHeaders } from './limits-middleware';
import { quotaClass, runRequest, type LifecycleRequest } from './request-lifecycle';
import { normaliseEvent, type ApiEvent, type ApiEventFields } from './api-event';
import { corsResponseHeaders } from './cors';

export type { ApiEvent };
/** A REST API proxy integration's result. */
export interface ApiResult {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
  isBase64Encoded?: boolean;
}

/** What a handler gets: the parsed body, the caller, the event and the limiter's admission. */
export type HttpRequest<B> = LifecycleRequest<B, ApiEvent>;

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
  /**
   * Browser origins the responses allow (cors.ts `corsResponseHeaders`); unset: no CORS headers
   * (the local server adds its own).
   */
  readonly corsOrigins?: readonly string[];
}

/** Problems a 422 lists at most in `details`: a hostile body can hold one per key. */
const MAX_LISTED_ISSUES = 20;
/**
 * Characters of a field's path or of a problem a 422 repeats at most: a key may be a megabyte
 * long, and zod names every unknown key in one message.
 */
const MAX_LISTED_CHARS = 300;

function clip(text: string): string {
  if (text.length <= MAX_LISTED_CHARS) return text;
  // Never between the two halves of a character outside the BMP (an emoji).
  const end = /[\uD800-\uDBFF]/.test(text[MAX_LISTED_CHARS - 1]!)
    ? MAX_LISTED_CHARS - 1
    : MAX_LISTED_CHARS;
  return `${text.slice(0, end)}…`;
}

/** The field an issue is about: its path, or `where` (the value itself) for the root. */
function fieldOf(issue: z.core.$ZodIssue, where: string): string {
  return clip(issue.path.length > 0 ? issue.path.join('.') : where);
}

/**
 * Turns the first zod issue into a message that names the field; `where` names the value itself
 * (`body`, or `query` for the query string).
 */
export function describeZodError(error: z.core.$ZodError, where = 'body'): string {
  const issue = error.issues[0];
  if (!issue) return 'Invalid request';
  return `${fieldOf(issue, where)}: ${clip(issue.message)}`;
}

/** The first problems of a failed parse, each naming its field, and how many were left out. */
function listIssues(error: z.core.$ZodError, where: string): { path: string; message: string }[] {
  const listed = error.issues
    .slice(0, MAX_LISTED_ISSUES)
    .map((i) => ({ path: fieldOf(i, where), message: clip(i.message) }));
  const more = error.issues.length - listed.length;
  const problems = more === 1 ? 'problem' : 'problems';
  return more > 0
    ? [...listed, { path: '', message: `${more} more ${problems} not listed` }]
    : listed;
}

/** The 422 for a value {@link findUnstorable} found, naming the field (`where` for the root). */
function unstorableError(found: UnstorableValue, where: string): ValidationError {
  // The field's name may itself hold the character: JSON escapes it (and a lone surrogate).
  const field = JSON.stringify(found.path).slice(1, -1);
  const name = clip(field === '' ? where : field);
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
 * Parses with a zod schema, throwing a 422 ValidationError that names the field; `where` names
 * the value itself (a problem with the whole of it, such as an unknown key). The value is checked
 * for unstorable text and depth first, so no schema (the recursive metadata filter included)
 * ever walks a hostile value.
 */
export function parseOrThrow<S extends z.ZodMiniType>(
  schema: S,
  value: unknown,
  where = 'body',
): z.infer<S> {
  assertStorable(value, where);
  const result = schema.safeParse(value);
  if (!result.success) {
    throw new ValidationError(
      describeZodError(result.error, where),
      listIssues(result.error, where),
    );
  }
  return result.data;
}

/**
 * Parses a request's query parameters with their route's schema (api-routes.ts): a 422 names
 * the parameter, or `query` for the query string as a whole (an unknown parameter).
 */
export function parseQuery<S extends z.ZodMiniType>(
  schema: S,
  query: Readonly<Record<string, string | undefined>>,
): z.infer<S> {
  return parseOrThrow(schema, query, 'query');
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
const API_RESPONSE_HEADERS: Readonly<Record<string, string>> = {
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

/** The CORS headers of the response to `event` under `origins`. */
export function requestCors(
  origins: readonly string[],
  event: ApiEventFields,
): Record<string, string> {
  return corsResponseHeaders(origins, normaliseEvent(event).headers.origin);
}

/**
 * Builds an API handler: `schema` validates the body (use `z.object({})` for bodiless routes);
 * `route` is the handler's name in the route table (API_ROUTES), which gives its metric
 * dimension, its quota class and its contract's error statuses.
 */
export function createHttpHandler<S extends z.ZodMiniType>(
  deps: HttpHandlerDeps,
  options: { route: string; schema: S; authenticated?: boolean; quota?: string },
  fn: (req: HttpRequest<z.infer<S>>) => Promise<HttpResponse>,
) {
  // A quota class the table does not declare for the route fails here, at start.
  quotaClass(options.route, options.quota);
  const base = async (event: ApiEvent, _context: Context): Promise<ApiResult> => {
    let result: ApiResult | undefined;
    await runRequest(
      deps,
      options,
      event,
      async (req) => {
        const response = await fn(req);
        const status = response.status ?? 200;
        const headers = withLimitHeaders(response.headers, req.admission);
        result = response.raw
          ? {
              statusCode: status,
              headers: { ...headers, ...API_RESPONSE_HEADERS },
              body: String(response.body),
            }
          : json(status, response.body, headers);
        return status;
      },
      (status, body, headers) => {
        result = json(status, body, headers);
      },
    );
    // runRequest calls `work` or `fail`, and each sets the result.
    const done = result as ApiResult;
    return deps.corsOrigins
      ? { ...done, headers: { ...done.headers, ...requestCors(deps.corsOrigins, event) } }
      : done;
  };
  const handler = middy(base);
  // First, so that its subsegment spans the other middlewares; responses are callers' data.
  if (deps.tracer) handler.use(captureLambdaHandler(deps.tracer, { captureResponse: false }));
  return handler.use(injectLambdaContext(deps.logger)).use(logMetrics(deps.metrics));
}
