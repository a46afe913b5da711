/**
 * One request lifecycle for every API response, buffered (createHttpHandler) or streamed (the
 * embedded default's stream handlers and the response-streaming Lambda): the caller's identity,
 * admission by the limiter, the input limits and the body's schema, the request's database scope,
 * errors in the one error model with the route's contract statuses, settling the admission (a
 * 5xx is refunded) and the route's metrics. Transports differ only in how they write: `work`
 * writes the success, `fail` the error.
 */
import type { ErrorBody } from '../core/errors';
import { AppError, ConfigError, ForbiddenError, toErrorResponse } from '../core/errors';
import type { Admission } from '../core/limits/limiter';
import type * as z from '../core/zod';
import { runInDbScope } from '../adapters/postgres/db-scope';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { API_ROUTES, type ErrorStatuses } from './api-routes';
import {
  assertStorable,
  contractStatus,
  parseJsonBody,
  parseOrThrow,
  rawRequestBody,
  requestCors,
  requestDbScope,
  type HttpHandlerDeps,
} from './http-handler';
import { DEFAULT_IDENTITY_CONFIG, identityFromEvent, type Identity } from './identity';
import { withLimitHeaders } from './limits-middleware';
import { normaliseEvent, type ApiEventFields } from './api-event';

/** What the lifecycle reads of an event: a REST API proxy event's request fields (api-event.ts). */
export type RequestEvent = ApiEventFields;

export interface LifecycleRequest<B, E> {
  readonly body: B;
  readonly identity: Identity;
  readonly event: E;
  readonly pathParameters: Readonly<Record<string, string | undefined>>;
  /** Query parameters, a repeated name's values joined by commas (api-event.ts). */
  readonly query: Readonly<Record<string, string | undefined>>;
  /** Each query parameter's values, repeats included. */
  readonly queryValues: Readonly<Record<string, readonly string[]>>;
  /** Header names in lower case. */
  readonly headers: Readonly<Record<string, string>>;
  /** The limiter's admission (absent without a limiter or on an unauthenticated route). */
  readonly admission: Admission | undefined;
  /** The body's bytes, on an upload route of the table (its JSON `body` is then `{}`). */
  readonly rawBody?: Buffer;
}

export interface LifecycleOptions<S extends z.ZodMiniType, E> {
  /** The route's name in the table (metrics dimension; quota class and statuses from its entry). */
  readonly route: string;
  readonly schema: S;
  /** @default true */
  readonly authenticated?: boolean;
  /**
   * The quota class when it depends on the request: one of the entry's `otherQuotas` (GET
   * /api/search with `rag=true` draws on `answer`). @default the table entry's, else `route`
   */
  readonly quota?: string;
  /** @default the table entry's */
  readonly statuses?: ErrorStatuses;
  /** Who is calling. @default identityFromEvent with the deps' identity config */
  readonly identify?: (event: E) => Identity;
}

/**
 * Writes an error response: `headers` carry the error's own (Retry-After, ...) and the limiter's.
 * A streaming transport that has already started writes an error event instead.
 */
export type FailureWriter = (
  status: number,
  body: ErrorBody,
  headers: Record<string, string>,
) => void;

const ANONYMOUS: Identity = {
  userId: 'anonymous',
  tenantId: 'anonymous',
  groups: [],
  plan: null,
  isAdmin: false,
};

/**
 * The quota class a handler of `route` admits its requests against: `quota` when given, which
 * must be the table entry's own or one of its `otherQuotas`, else the entry's, else the name.
 * @throws ConfigError for a class the table does not declare (called when a handler is built).
 */
export function quotaClass(route: string, quota?: string): string {
  const entry = API_ROUTES.find((r) => r.name === route);
  if (
    entry &&
    quota !== undefined &&
    quota !== (entry.quota ?? entry.name) &&
    !(entry.otherQuotas ?? []).includes(quota)
  ) {
    throw new ConfigError(`route ${route}: quota class "${quota}" is not among its otherQuotas`);
  }
  return quota ?? entry?.quota ?? route;
}

/**
 * Runs one request: `work` does it and writes the success, returning its status; any error
 * (before or during `work`) goes to `fail`. Resolves with the final status.
 */
export async function runRequest<S extends z.ZodMiniType, E extends RequestEvent>(
  deps: HttpHandlerDeps,
  options: LifecycleOptions<S, E>,
  event: E,
  work: (req: LifecycleRequest<z.infer<S>, E>) => Promise<number>,
  fail: FailureWriter,
): Promise<number> {
  const entry = API_ROUTES.find((r) => r.name === options.route);
  const quota = quotaClass(options.route, options.quota);
  // An upload route reads its body as bytes, with its own limit, instead of JSON.
  const rawBodyLimit = entry?.upload?.maxBytes;
  const statuses = options.statuses ?? entry?.statuses;
  const authenticated = options.authenticated !== false;
  const started = performance.now();
  let status = 500;
  let admission: Admission | undefined;
  try {
    const identity = !authenticated
      ? ANONYMOUS
      : options.identify
        ? options.identify(event)
        : identityFromEvent(event, deps.identity ?? DEFAULT_IDENTITY_CONFIG);
    deps.logger.appendKeys({
      tenantId: identity.tenantId,
      userId: identity.userId,
      route: options.route,
    });
    if (deps.limiter && authenticated) admission = await deps.limiter.admit(identity, quota);
    // An admin route is refused to others before its input is read (the use case checks too).
    if (entry?.admin && !identity.isAdmin)
      throw new ForbiddenError('This route is for members of the admin group.');
    const request = normaliseEvent(event);
    const { pathParameters, query, queryValues, headers } = request;
    for (const [name, value] of Object.entries(pathParameters)) assertStorable(value, name);
    assertStorable(query, 'query');
    const rawBody = rawBodyLimit === undefined ? undefined : rawRequestBody(request, rawBodyLimit);
    const body = parseOrThrow(options.schema, rawBody ? {} : parseJsonBody(request));
    const admitted = admission;
    status = await runInDbScope(requestDbScope(identity), () =>
      work({
        body,
        identity,
        event,
        pathParameters,
        query,
        queryValues,
        headers,
        admission: admitted,
        ...(rawBody ? { rawBody } : {}),
      }),
    );
  } catch (err) {
    const rendered = toErrorResponse(err);
    status = contractStatus(rendered.status, rendered.body.error.code, statuses);
    if (status >= 500) deps.logger.error('request failed', { err, route: options.route });
    else deps.logger.info('request rejected', { code: rendered.body.error.code, status });
    fail(
      status,
      rendered.body,
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
  return status;
}

/** Formats one Server-Sent Event. */
export function sseEvent(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
};

/** The writable side of a streamed response, whatever the transport. */
export interface EventStream {
  start(status: number, headers: Record<string, string>): void;
  write(chunk: string): void;
  end(): void;
}

/** The event that reports an error after the first event (POST /api/rag/answer's `error` event). */
const errorSseEvent = (body: ErrorBody): string => sseEvent('error', body);

/**
 * A streamed request on `stream`. The status line (200) leaves with the first event, so an error
 * before it (validation, a thread that is not the caller's, limits) is a JSON response with its
 * status; after it, `errorEvent` (the `error` event by default) ends the stream. `work` writes
 * events and returns when done.
 */
export async function runStreamedRequest<S extends z.ZodMiniType, E extends RequestEvent>(
  deps: HttpHandlerDeps,
  options: LifecycleOptions<S, E> & { readonly errorEvent?: (body: ErrorBody) => string },
  event: E,
  stream: EventStream,
  work: (req: LifecycleRequest<z.infer<S>, E>, write: (chunk: string) => void) => Promise<void>,
): Promise<number> {
  let started = false;
  const errorEvent = options.errorEvent ?? errorSseEvent;
  const cors = deps.corsOrigins ? requestCors(deps.corsOrigins, event) : {};
  return runRequest(
    deps,
    options,
    event,
    async (req) => {
      const start = () => {
        if (started) return;
        stream.start(200, withLimitHeaders({ ...SSE_HEADERS, ...cors }, req.admission));
        started = true;
      };
      await work(req, (chunk) => {
        start();
        stream.write(chunk);
      });
      start();
      stream.end();
      return 200;
    },
    (status, body, headers) => {
      if (started) {
        deps.logger.error('stream failed after it started', { status, code: body.error.code });
        stream.write(errorEvent(body));
      } else {
        stream.start(status, {
          'content-type': 'application/json; charset=utf-8',
          ...cors,
          ...headers,
        });
        stream.write(JSON.stringify(body));
      }
      stream.end();
    },
  );
}
