/**
 * The embedded default's API Gateway: a node:http server that matches routes, verifies bearer
 * tokens like the REST API's Cognito authorizer, builds the same REST API proxy event (payload
 * format 1.0) API Gateway sends to Lambda (lambdas/http/api-event.ts), and invokes the same
 * handlers. Errors it raises itself use the one error model.
 */
import { randomUUID } from 'node:crypto';
import { createServer, STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Context } from 'aws-lambda';
import type { TokenVerifier } from '../lambdas/adapters/auth/jwt-verifier';
import {
  AppError,
  AuthenticationError,
  ConfigError,
  NotFoundError,
  PayloadTooLargeError,
  toErrorResponse,
} from '../lambdas/core/errors';
import {
  CORS_ALLOW_HEADERS,
  CORS_MAX_AGE_SECONDS,
  corsResponseHeaders,
  DEFAULT_CORS_ORIGINS,
} from '../lambdas/http/cors';
import { MAX_BODY_BYTES } from '../lambdas/http/request-limits';
import { buildApiEvent, isBinaryMediaType, type ApiEvent } from '../lambdas/http/api-event';
import { lambdaContext } from './ingest-queue';

type HttpMethod = 'GET' | 'POST' | 'DELETE' | 'PUT' | 'PATCH';
const METHODS: readonly string[] = ['GET', 'POST', 'DELETE', 'PUT', 'PATCH'];

/** The REST API proxy event; `authorizer.claims` is present on authenticated routes only, as in AWS. */
type LocalApiEvent = ApiEvent;

/** The proxy integration result a Lambda returns to API Gateway. */
interface LocalApiResult {
  statusCode: number;
  headers?: Record<string, string | number | boolean>;
  body?: string;
  isBase64Encoded?: boolean;
}

export type LocalHandler = (event: LocalApiEvent, context: Context) => Promise<LocalApiResult>;

/** The writable side of a streamed response (Server-Sent Events). */
interface LocalStreamResponse {
  /** Sends the status line and headers; must come before the first `write`. */
  start(status: number, headers: Record<string, string>): void;
  write(chunk: string): void;
  end(): void;
  /** Aborted when the client disconnects. */
  readonly signal: AbortSignal;
}

/**
 * A streaming route, tried before the buffered handler: it returns false to decline (the
 * request does not ask for a stream), and the buffered handler answers instead.
 */
export type LocalStreamHandler = (
  event: LocalApiEvent,
  response: LocalStreamResponse,
) => Promise<boolean>;

export interface LocalRoute {
  readonly method: HttpMethod;
  /** Literal segments and `{name}` parameters, e.g. `/api/threads/{id}`. */
  readonly path: string;
  readonly handler: LocalHandler;
  /** Require a verified bearer token. @default true */
  readonly auth?: boolean;
  /** The Lambda function name the handler sees in its context. @default 'groundwork-api' */
  readonly functionName?: string;
  /**
   * Answers cross-origin requests from the configured origins (the API's routes, as API
   * Gateway's CORS does). Development routes (token issuing, the playground) never do.
   * @default false
   */
  readonly cors?: boolean;
  /** Extension point for streaming routes; see LocalStreamHandler. */
  readonly stream?: LocalStreamHandler;
  /** This route's largest accepted body (an upload's). @default the server's maxBodyBytes */
  readonly maxBodyBytes?: number;
}

/**
 * Powertools Logger satisfies this. `error` is for the server's own failures; what a client did
 * (went away, stalled, sent something that is not HTTP) is `info` or `warn`, with a short reason.
 */
interface LocalServerLogger {
  error(message: string, ...extra: Record<string, unknown>[]): void;
  warn(message: string, ...extra: Record<string, unknown>[]): void;
  info(message: string, ...extra: Record<string, unknown>[]): void;
}

export interface LocalHttpServerOptions {
  readonly routes: readonly LocalRoute[];
  readonly verifier: TokenVerifier;
  /** @default console */
  readonly logger?: LocalServerLogger;
  /** 0 picks a free port. @default 0 */
  readonly port?: number;
  /** @default '127.0.0.1' */
  readonly host?: string;
  /**
   * Origins allowed by CORS (`*` for any) on the routes that ask for it (`cors: true`).
   * @default DEFAULT_CORS_ORIGINS (lambdas/http/cors.ts)
   */
  readonly corsOrigins?: readonly string[];
  /** Largest accepted request body. @default MAX_BODY_BYTES (1 MiB, as the handlers) */
  readonly maxBodyBytes?: number;
  /** How long a request body may take to arrive in all. @default BODY_DEADLINE_MS (60 s) */
  readonly bodyDeadlineMs?: number;
}

export interface LocalHttpServer {
  /** e.g. `http://127.0.0.1:3000` */
  readonly url: string;
  /** Stops accepting connections and resolves once in-flight requests have finished. */
  close(): Promise<void>;
}

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

interface CompiledRoute {
  readonly route: LocalRoute;
  /** A literal segment, or `{ param }` for a `{name}` segment. */
  readonly segments: readonly (string | { param: string })[];
  readonly literalCount: number;
}

function compileRoute(route: LocalRoute): CompiledRoute {
  if (!METHODS.includes(route.method)) {
    throw new ConfigError(`Route ${route.method} ${route.path}: unsupported method`);
  }
  if (!route.path.startsWith('/')) {
    throw new ConfigError(`Route ${route.method} ${route.path}: the path must start with /`);
  }
  const segments = route.path
    .slice(1)
    .split('/')
    .map((segment) => {
      if (!segment.includes('{')) return segment;
      const param = /^\{([A-Za-z_][A-Za-z0-9_]*)\}$/.exec(segment)?.[1];
      if (!param) {
        throw new ConfigError(`Route ${route.method} ${route.path}: bad parameter "${segment}"`);
      }
      return { param };
    });
  return {
    route,
    segments,
    literalCount: segments.filter((s) => typeof s === 'string').length,
  };
}

/** Path parameters when `rawPath` fits the route's template, else null. */
function matchPath(
  compiled: CompiledRoute,
  parts: readonly string[],
): Record<string, string> | null {
  if (parts.length !== compiled.segments.length) return null;
  const params: Record<string, string> = {};
  for (const [i, segment] of compiled.segments.entries()) {
    const part = parts[i] ?? '';
    if (typeof segment === 'string') {
      if (segment !== part) return null;
      continue;
    }
    if (part === '') return null;
    try {
      decodeURIComponent(part);
    } catch {
      return null;
    }
    // As sent: API Gateway passes path parameters percent-encoded (api-event.ts decodes them).
    params[segment.param] = part;
  }
  return params;
}

/**
 * API Gateway's Cognito authorizer hands claims to Lambda as strings, lists joined by commas;
 * doing the same here keeps handlers honest about what they will receive in AWS.
 */
function toApiGatewayClaims(claims: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(claims)) {
    if (value === undefined || value === null) continue;
    if (typeof value === 'string') out[name] = value;
    else if (typeof value === 'number' || typeof value === 'boolean') out[name] = String(value);
    else if (Array.isArray(value)) out[name] = value.map((v) => String(v)).join(',');
    else out[name] = JSON.stringify(value);
  }
  return out;
}

function bearerToken(header: string | undefined): string | null {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return match?.[1] ?? null;
}

/**
 * How long a request body may stop arriving (no byte for this long) before the request is
 * answered 408 `request_timeout` and its connection closed, and how long a request's headers may
 * take in all. Loopback and local networks deliver a request in well under a second; a client
 * that stalls longer holds a connection for nothing.
 */
export const BODY_IDLE_TIMEOUT_MS = 15_000;

/**
 * How long a request body may take to arrive in all (408 `request_timeout`): a body that trickles
 * in, a byte now and then inside the idle bound, would otherwise hold its connection until Node's
 * own `requestTimeout` of 5 minutes. The largest body, an upload's `MAX_UPLOAD_BODY_BYTES` (about
 * 4.45 MiB), takes a second or two on a local network; API Gateway gives a whole request 29 s.
 */
const BODY_DEADLINE_MS = 60_000;

/** The client went away (reset or closed the connection) before its request body arrived. */
class ClientGoneError extends Error {
  override name = 'ClientGoneError';
}

/**
 * Reads the body, refusing more than `limit` bytes (413) before or while it arrives, and a body
 * that stops arriving for BODY_IDLE_TIMEOUT_MS or is not all there after `deadlineMs` (408). A
 * client that goes away rejects with ClientGoneError: there is nobody left to answer.
 */
function readBody(req: IncomingMessage, limit: number, deadlineMs: number): Promise<Buffer> {
  // The rest of the body is not read, so the connection cannot be reused.
  const tooLarge = () => new PayloadTooLargeError(limit, { connection: 'close' });
  if (Number(req.headers['content-length'] ?? 0) > limit) return Promise.reject(tooLarge());
  // Listeners rather than `for await`: leaving that loop early destroys the socket, and with it
  // the chance to answer 413 or 408.
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const timedOut = (message: string) =>
      new AppError('request_timeout', message, 408, { headers: { connection: 'close' } });
    const stop = (err: Error) => {
      clearTimeout(timer);
      clearTimeout(deadline);
      req.off('data', onData);
      req.off('end', onEnd);
      reject(err);
    };
    const timer = setTimeout(
      () =>
        stop(
          timedOut(
            `The request body stopped arriving: no data for ${BODY_IDLE_TIMEOUT_MS / 1000} s`,
          ),
        ),
      BODY_IDLE_TIMEOUT_MS,
    );
    const deadline = setTimeout(
      () => stop(timedOut(`The request body took longer than ${deadlineMs / 1000} s to arrive`)),
      deadlineMs,
    );
    const onData = (chunk: Buffer) => {
      timer.refresh();
      size += chunk.length;
      if (size <= limit) {
        chunks.push(chunk);
        return;
      }
      stop(tooLarge());
      req.resume();
    };
    const onEnd = () => {
      clearTimeout(timer);
      clearTimeout(deadline);
      resolve(Buffer.concat(chunks));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    // Node reports a connection reset or closed mid-body as `aborted` (ECONNRESET).
    req.once('error', (err) => stop(new ClientGoneError(err.message, { cause: err })));
  });
}

/** Builds the REST API proxy event API Gateway would send for this request. */
function toApiGatewayEvent(
  req: IncomingMessage,
  request: {
    route: LocalRoute;
    params: Record<string, string>;
    rawPath: string;
    rawQueryString: string;
    body: Buffer;
    claims: Record<string, unknown> | null;
    requestId: string;
    received: Date;
  },
): LocalApiEvent {
  const { route, params, rawPath, rawQueryString, body, claims, requestId, received } = request;
  const headers: Record<string, string[]> = {};
  for (const [name, values] of Object.entries(req.headersDistinct)) {
    if (values !== undefined) headers[name] = values;
  }
  // A Map, not an object: a parameter may be named `constructor` or `__proto__`.
  const query = new Map<string, string[]>();
  for (const [name, value] of new URLSearchParams(rawQueryString)) {
    query.set(name, [...(query.get(name) ?? []), value]);
  }
  // A binary media type (the upload's multipart body) arrives base64-encoded, the rest as text.
  const binary = isBinaryMediaType(req.headers['content-type']);
  return buildApiEvent({
    method: route.method,
    resource: route.path,
    path: rawPath,
    headers,
    query: Object.fromEntries(query),
    pathParameters: params,
    body: body.length > 0 ? body.toString(binary ? 'base64' : 'utf8') : null,
    isBase64Encoded: body.length > 0 && binary,
    claims: claims ? toApiGatewayClaims(claims) : null,
    requestId,
    sourceIp: (req.socket.remoteAddress ?? '').replace(/^::ffff:/, ''),
    received,
  });
}

/** What a request Node's HTTP parser refused is answered with, by status. */
const REFUSED: Record<400 | 408 | 417 | 431, { code: string; message: string }> = {
  400: { code: 'bad_request', message: 'The request is not valid HTTP/1.1' },
  408: { code: 'request_timeout', message: 'The request was not received in time' },
  417: { code: 'expectation_failed', message: 'Only Expect: 100-continue is understood' },
  431: {
    code: 'request_header_too_large',
    message: 'The request headers are larger than the server accepts',
  },
};

/**
 * The raw response to a request Node's HTTP parser refused (a malformed request line, header or
 * chunk; headers over its size limit; a request not received in time; an unknown expectation), in
 * the one error model. The connection closes after it: the rest of its bytes cannot be read as
 * requests.
 */
function refusedRequest(status: keyof typeof REFUSED): string {
  const body = JSON.stringify({ error: { ...REFUSED[status], retryable: false } });
  return [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}`,
    `content-type: ${JSON_CONTENT_TYPE}`,
    `content-length: ${Buffer.byteLength(body)}`,
    'connection: close',
    '',
    body,
  ].join('\r\n');
}

function isValidResult(result: unknown): result is LocalApiResult {
  if (typeof result !== 'object' || result === null) return false;
  const r = result as Partial<LocalApiResult>;
  return (
    Number.isInteger(r.statusCode) &&
    (r.statusCode ?? 0) >= 100 &&
    (r.statusCode ?? 0) <= 599 &&
    (r.body === undefined || typeof r.body === 'string')
  );
}

const healthRoute: LocalRoute = {
  method: 'GET',
  path: '/api/health',
  auth: false,
  cors: true,
  functionName: 'groundwork-health',
  handler: async () => ({
    statusCode: 200,
    headers: { 'content-type': JSON_CONTENT_TYPE },
    body: JSON.stringify({ status: 'ok' }),
  }),
};

const consoleLogger: LocalServerLogger = {
  error: (message, ...extra) => console.error(message, ...extra),
  warn: (message, ...extra) => console.warn(message, ...extra),
  info: (message, ...extra) => console.info(message, ...extra),
};

/** Starts the server; resolves once it listens. */
export async function createLocalHttpServer(
  options: LocalHttpServerOptions,
): Promise<LocalHttpServer> {
  const logger = options.logger ?? consoleLogger;
  const maxBodyBytes = options.maxBodyBytes ?? MAX_BODY_BYTES;
  const bodyDeadlineMs = options.bodyDeadlineMs ?? BODY_DEADLINE_MS;
  const corsOrigins = options.corsOrigins ?? DEFAULT_CORS_ORIGINS;
  // The built-in liveness route, unless the routes bring their own (the API's GET /api/health).
  const ownHealth = options.routes.some((r) => r.method === 'GET' && r.path === '/api/health');
  const routes = [...(ownHealth ? [] : [healthRoute]), ...options.routes].map(compileRoute);
  const seen = new Set<string>();
  for (const { route, segments } of routes) {
    const shape = `${route.method} /${segments.map((s) => (typeof s === 'string' ? s : '{}')).join('/')}`;
    if (seen.has(shape))
      throw new ConfigError(`Route ${route.method} ${route.path} is defined twice`);
    seen.add(shape);
  }

  const corsHeaders = (origin: string | undefined) => corsResponseHeaders(corsOrigins, origin);

  function send(
    res: ServerResponse,
    status: number,
    headers: Record<string, string>,
    body: Buffer | string | undefined,
  ): void {
    res.writeHead(status, headers);
    res.end(body);
  }

  /** Renders any error with the one error model; 5xx detail goes to the log only. */
  function sendError(
    res: ServerResponse,
    err: unknown,
    headers: Record<string, string>,
    log: Record<string, unknown>,
  ): void {
    const { status, body } = toErrorResponse(err);
    if (status >= 500) logger.error('request failed', { err, ...log });
    send(
      res,
      status,
      {
        ...headers,
        ...(err instanceof AppError ? err.options.headers : {}),
        ...(status === 401 ? { 'www-authenticate': 'Bearer' } : {}),
        'content-type': JSON_CONTENT_TYPE,
      },
      JSON.stringify(body),
    );
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const requestId = randomUUID();
    const received = new Date();
    const method = (req.method ?? 'GET').toUpperCase();
    const url = req.url ?? '/';
    const queryAt = url.indexOf('?');
    const rawPath = queryAt === -1 ? url : url.slice(0, queryAt);
    const rawQueryString = queryAt === -1 ? '' : url.slice(queryAt + 1);
    const origin = typeof req.headers.origin === 'string' ? req.headers.origin : undefined;
    const baseHeaders: Record<string, string> = {
      'apigw-requestid': requestId,
      'x-content-type-options': 'nosniff',
    };
    const log = { requestId, method, path: rawPath };

    try {
      const parts = rawPath.slice(1).split('/');
      const matches = routes
        .map((compiled) => ({ compiled, params: matchPath(compiled, parts) }))
        .filter(
          (m): m is { compiled: CompiledRoute; params: Record<string, string> } =>
            m.params !== null,
        );
      if (matches.length === 0) throw new NotFoundError(`No route matches ${rawPath}`);
      const allowed = [...new Set(matches.map((m) => m.compiled.route.method))];
      if (matches.some((m) => m.compiled.route.cors))
        Object.assign(baseHeaders, corsHeaders(origin));

      if (method === 'OPTIONS') {
        const preflight: Record<string, string> = baseHeaders['access-control-allow-origin']
          ? {
              'access-control-allow-methods': [...allowed, 'OPTIONS'].join(', '),
              'access-control-allow-headers': CORS_ALLOW_HEADERS.join(', '),
              'access-control-max-age': String(CORS_MAX_AGE_SECONDS),
            }
          : {};
        send(
          res,
          204,
          { ...baseHeaders, ...preflight, allow: [...allowed, 'OPTIONS'].join(', ') },
          undefined,
        );
        return;
      }

      // The most literal template wins, as in API Gateway: /api/threads/new before /api/threads/{id}.
      const match = matches
        .filter((m) => m.compiled.route.method === method)
        .sort((a, b) => b.compiled.literalCount - a.compiled.literalCount)[0];
      if (!match) {
        throw new AppError('method_not_allowed', `${method} is not allowed on ${rawPath}`, 405, {
          headers: { allow: allowed.join(', ') },
        });
      }
      const { route } = match.compiled;

      let claims: Record<string, unknown> | null = null;
      if (route.auth !== false) {
        const token = bearerToken(req.headers.authorization);
        if (!token) throw new AuthenticationError();
        claims = await options.verifier.verify(token);
      }

      const body = await readBody(req, route.maxBodyBytes ?? maxBodyBytes, bodyDeadlineMs);

      const event = toApiGatewayEvent(req, {
        route,
        params: match.params,
        rawPath,
        rawQueryString,
        body,
        claims,
        requestId,
        received,
      });

      if (route.stream) {
        const abort = new AbortController();
        res.on('close', () => abort.abort());
        let started = false;
        const streamed = await route
          .stream(event, {
            start(status, headers) {
              started = true;
              res.writeHead(status, { ...baseHeaders, ...headers });
              res.flushHeaders();
            },
            write(chunk) {
              res.write(chunk);
            },
            end() {
              res.end();
            },
            signal: abort.signal,
          })
          .catch((err: unknown) => {
            if (!started) throw err;
            logger.error('stream failed after it started', { err, ...log });
            res.end();
            return true;
          });
        if (streamed) return;
      }

      let result: unknown;
      try {
        result = await route.handler(event, lambdaContext(route.functionName ?? 'groundwork-api'));
      } catch (err) {
        // In AWS a thrown error is a 500 from API Gateway whatever its type, so it is not
        // rendered as the AppError it may be.
        sendError(res, new Error('the handler threw', { cause: err }), baseHeaders, log);
        return;
      }
      if (!isValidResult(result)) {
        sendError(res, new Error('the handler returned an invalid response'), baseHeaders, log);
        return;
      }
      const responseHeaders: Record<string, string> = {};
      for (const [name, value] of Object.entries(result.headers ?? {})) {
        responseHeaders[name.toLowerCase()] = String(value);
      }
      const payload =
        result.body === undefined
          ? undefined
          : result.isBase64Encoded
            ? Buffer.from(result.body, 'base64')
            : result.body;
      send(res, result.statusCode, { ...responseHeaders, ...baseHeaders }, payload);
    } catch (err) {
      if (err instanceof ClientGoneError) {
        // Nobody is left to answer: a client event, not a server failure.
        logger.info('connection closed before the request body arrived', {
          reason: err.message,
          ...log,
        });
        res.destroy();
        return;
      }
      if (err instanceof AppError && err.code === 'request_timeout') {
        logger.warn('request body stalled', { reason: err.message, ...log });
      }
      sendError(res, err, baseHeaders, log);
    }
  }

  // Headers that stop arriving get the body's bound too (408 in the error model, from the
  // `clientError` handler below), checked every second: Node's own defaults wait 60 s, checked
  // every 30 s.
  const server = createServer(
    { headersTimeout: BODY_IDLE_TIMEOUT_MS, connectionsCheckingInterval: 1_000 },
    (req, res) => {
      handle(req, res).catch((err: unknown) => {
        logger.error('response failed', { err });
        if (!res.headersSent) res.writeHead(500);
        res.destroy();
      });
    },
  );
  // Requests the HTTP parser refuses before any route sees them get the error model too.
  // Each is the client's doing, logged as a client event with the parser's reason.
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    // A reset mid-request is logged where the request is read; between requests it is routine.
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const status =
      err.code === 'HPE_HEADER_OVERFLOW'
        ? 431
        : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? 408
          : 400;
    logger.warn('request refused', { status, reason: err.code ?? err.message });
    socket.end(refusedRequest(status));
  });
  // An expectation other than 100-continue: refused in the error model, the connection closed
  // (the client may already be sending the body it was waiting to send).
  server.on('checkExpectation', (req: IncomingMessage) => req.socket.end(refusedRequest(417)));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  let closing: Promise<void> | null = null;
  return {
    url: `http://${host}:${address.port}`,
    close() {
      closing ??= new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeIdleConnections();
      });
      return closing;
    },
  };
}
