/**
 * The embedded default's HTTP server for real: a listening node:http server, tokens signed by
 * the local issuer and verified with aws-jwt-verify, handlers built with createHttpHandler, and
 * the `groundwork token` command whose output the server accepts.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { request, STATUS_CODES, type ClientRequest } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { createJwtVerifier, type TokenVerifier } from '../../lambdas/adapters/auth/jwt-verifier';
import { createLocalIssuer, type LocalIssuer } from '../../lambdas/adapters/auth/local-issuer';
import type { ErrorBody } from '../../lambdas/core/errors';
import * as z from '../../lambdas/core/zod';
import { createHttpHandler } from '../../lambdas/http/http-handler';
import type { Identity } from '../../lambdas/http/identity';
import { localKeyDir, tokenCommand } from '../../local/commands/token';
import {
  BODY_IDLE_TIMEOUT_MS,
  createLocalHttpServer,
  type LocalHttpServer,
  type LocalRoute,
} from '../../local/http-server';

process.env.POWERTOOLS_METRICS_DISABLED = 'true';

const INTERNAL_ERROR_BODY =
  '{"error":{"code":"internal_error","message":"Internal error","retryable":false}}';

const deps = {
  logger: new Logger({ serviceName: 'groundwork-test', logLevel: 'SILENT' }),
  metrics: new Metrics({ namespace: 'groundwork-test', serviceName: 'groundwork-test' }),
};

const echoSchema = z.object({ message: z.string().check(z.minLength(1)) });

const routes: LocalRoute[] = [
  {
    method: 'POST',
    path: '/echo',
    cors: true,
    handler: createHttpHandler(deps, { route: 'echo', schema: echoSchema }, async (req) => ({
      body: { identity: req.identity, message: req.body.message },
    })),
  },
  {
    method: 'GET',
    path: '/api/threads/{id}',
    handler: createHttpHandler(
      deps,
      { route: 'get-thread', schema: z.object({}) },
      async (req) => ({
        body: {
          id: req.pathParameters.id,
          query: req.query,
          queryValues: req.queryValues,
          resource: req.event.resource,
          rawId: req.event.pathParameters?.id,
          multiTag: req.event.multiValueQueryStringParameters?.tag,
        },
      }),
    ),
  },
  {
    method: 'POST',
    path: '/boom',
    handler: createHttpHandler(deps, { route: 'boom', schema: z.object({}) }, async () => {
      throw new Error('connection to postgres://admin:s3cret@db failed');
    }),
  },
  {
    method: 'GET',
    path: '/raw-boom',
    handler: async () => {
      throw new Error('raw handler exploded with s3cret');
    },
  },
];

describe('local HTTP server', () => {
  let dataDir: string;
  let issuer: LocalIssuer;
  let verifier: TokenVerifier;
  let server: LocalHttpServer;
  /** What the server logged at ERROR level: its own failures. */
  const logged: { message: string; extra: Record<string, unknown>[] }[] = [];
  /** What it logged at INFO and WARN: what clients did. */
  const clientEvents: { level: string; message: string; extra: Record<string, unknown>[] }[] = [];

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'groundwork-http-'));
    issuer = await createLocalIssuer({ keyDir: localKeyDir(dataDir) });
    verifier = createJwtVerifier({
      issuer: issuer.issuer,
      audience: issuer.audience,
      jwks: issuer.jwks(),
    });
    server = await createLocalHttpServer({
      routes,
      verifier,
      corsOrigins: ['http://localhost:5173'],
      logger: {
        error: (message, ...extra) => logged.push({ message, extra }),
        warn: (message, ...extra) => clientEvents.push({ level: 'warn', message, extra }),
        info: (message, ...extra) => clientEvents.push({ level: 'info', message, extra }),
      },
    });
  });

  afterAll(async () => {
    await server?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  beforeEach(() => {
    logged.length = 0;
    clientEvents.length = 0;
  });

  function call(
    method: string,
    urlPath: string,
    options: { token?: string; body?: string; headers?: Record<string, string> } = {},
  ) {
    return fetch(`${server.url}${urlPath}`, {
      method,
      headers: {
        ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
        ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...options.headers,
      },
      ...(options.body === undefined ? {} : { body: options.body }),
    });
  }

  async function errorOf(res: Response): Promise<ErrorBody['error']> {
    return ((await res.json()) as ErrorBody).error;
  }

  const token = (extra: Partial<Parameters<LocalIssuer['issueToken']>[0]> = {}) =>
    issuer.issueToken({ sub: 'user-1', tenantId: 'acme', ...extra });

  it("hands the handler the caller's identity from a valid token", async () => {
    const res = await call('POST', '/echo', {
      token: token({ plan: 'pro', groups: ['editors'], admin: true }),
      body: JSON.stringify({ message: 'hello' }),
    });

    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toEqual({
      identity: {
        userId: 'user-1',
        tenantId: 'acme',
        groups: ['editors', 'admin'],
        isAdmin: true,
        plan: 'pro',
      },
      message: 'hello',
    });
  });

  it('builds the REST API proxy event API Gateway sends, and handlers read it normalised', async () => {
    const res = await call('GET', '/api/threads/t%201?limit=5&tag=a&tag=b', { token: token() });

    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      id: 't 1',
      query: { limit: '5', tag: 'a,b' },
      queryValues: { limit: ['5'], tag: ['a', 'b'] },
      resource: '/api/threads/{id}',
      rawId: 't%201',
      multiTag: ['a', 'b'],
    });
  });

  it('passes query parameters named like Object.prototype members to the handler as names', async () => {
    const health = await call('GET', '/api/health?constructor=1&__proto__=2');
    expect(health.status).toBe(200);

    const res = await call(
      'GET',
      '/api/threads/t?__proto__=a&constructor=b&toString=c&toString=d',
      {
        token: token(),
      },
    );
    expect(res.status).toBe(200);
    const body = (await res.json()) as { queryValues: Record<string, string[]> };
    expect(Object.entries(body.queryValues)).toEqual([
      ['__proto__', ['a']],
      ['constructor', ['b']],
      ['toString', ['c', 'd']],
    ]);
    expect(logged).toEqual([]);
  });

  /** Sends `raw` on a new connection and reads until the server closes it. */
  function rawRequest(raw: string): Promise<string> {
    const { hostname, port } = new URL(server.url);
    return new Promise((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => socket.write(raw));
      const parts: Buffer[] = [];
      socket.on('data', (d: Buffer) => parts.push(d));
      socket.on('error', reject);
      socket.on('close', () => resolve(Buffer.concat(parts).toString('utf8')));
    });
  }

  it('answers requests the HTTP parser refuses in the error model, and goes on serving', async () => {
    const cases: [string, number, string][] = [
      ['GET /api/health HTTP/1.1\r\nHost: x\r\nX-Bad: a\0b\r\n\r\n', 400, 'bad_request'],
      ['FOO /api/health HTTP/1.1\r\nHost: x\r\n\r\n', 400, 'bad_request'],
      [
        'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}',
        400,
        'bad_request',
      ],
      [
        `GET /api/health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
        431,
        'request_header_too_large',
      ],
      ['GET /api/health HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\n\r\n', 417, 'expectation_failed'],
    ];
    for (const [raw, status, code] of cases) {
      const response = await rawRequest(raw);
      expect(response.split('\r\n')[0]).toBe(`HTTP/1.1 ${status} ${STATUS_CODES[status]}`);
      expect(response).toMatch(/content-type: application\/json/i);
      const body = JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4)) as ErrorBody;
      expect(body.error).toEqual(expect.objectContaining({ code, retryable: false }));
    }
    expect((await call('GET', '/api/health')).status).toBe(200);
  });

  /** The start of a POST /echo that announces 100 bytes of body: 13 of them. */
  const partialHead = () =>
    [
      'POST /echo HTTP/1.1',
      'Host: x',
      `Authorization: Bearer ${token()}`,
      'Content-Type: application/json',
      'Content-Length: 100',
      '',
      '',
    ].join('\r\n');
  const PARTIAL_BODY = '{"message":"h';

  /** POSTs to `/echo` declaring 100 bytes, lets `feed` send what it will, and reads the answer. */
  const incompletePost = (url: string, feed: (req: ClientRequest) => void) =>
    new Promise<{ status?: number; type?: string; body: string }>((resolve, reject) => {
      const req = request(
        `${url}/echo`,
        {
          method: 'POST',
          headers: {
            authorization: `Bearer ${token()}`,
            'content-type': 'application/json',
            'content-length': 100,
          },
        },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (body += chunk));
          res.on('end', () => {
            resolve({ status: res.statusCode, type: res.headers['content-type'], body });
            req.destroy();
          });
        },
      );
      req.on('error', reject);
      feed(req);
    });

  it(
    'answers 408 request_timeout to a body that stops arriving, and logs it as a client event',
    async () => {
      const response = await incompletePost(server.url, (req) => req.write(PARTIAL_BODY));

      expect(response.status).toBe(408);
      expect(response.type).toMatch(/^application\/json/);
      expect(JSON.parse(response.body)).toEqual({
        error: {
          code: 'request_timeout',
          message: `The request body stopped arriving: no data for ${BODY_IDLE_TIMEOUT_MS / 1000} s`,
          retryable: false,
        },
      });
      expect(logged).toEqual([]);
      expect(clientEvents).toEqual([
        expect.objectContaining({ level: 'warn', message: 'request body stalled' }),
      ]);
    },
    // A functional bound, not a latency measurement: Node's own limit takes over 5 minutes.
    BODY_IDLE_TIMEOUT_MS + 30_000,
  );

  it('answers 408 request_timeout to a body that trickles in past the deadline', async () => {
    const events: string[] = [];
    const bounded = await createLocalHttpServer({
      routes,
      verifier,
      bodyDeadlineMs: 1_500,
      logger: {
        error: (message) => events.push(`error ${message}`),
        warn: (message) => events.push(`warn ${message}`),
        info: () => undefined,
      },
    });
    let trickle: NodeJS.Timeout | undefined;
    try {
      // A byte every 200 ms: never idle for the idle bound, never done (100 bytes take 20 s).
      const response = await incompletePost(bounded.url, (req) => {
        trickle = setInterval(() => req.write(' '), 200);
      });

      expect(response.status).toBe(408);
      expect(JSON.parse(response.body)).toEqual({
        error: {
          code: 'request_timeout',
          message: 'The request body took longer than 1.5 s to arrive',
          retryable: false,
        },
      });
      expect(events).toEqual(['warn request body stalled']);
    } finally {
      clearInterval(trickle);
      await bounded.close();
    }
  });

  it(
    'answers 408 request_timeout to headers that stop arriving, within the body idle bound',
    async () => {
      const started = performance.now();
      // The request line and one header, then nothing: the blank line never comes.
      const response = await rawRequest('GET /api/health HTTP/1.1\r\nHost: x\r\n');
      const waited = performance.now() - started;

      expect(response.split('\r\n')[0]).toBe(`HTTP/1.1 408 ${STATUS_CODES[408]}`);
      const body = JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4)) as ErrorBody;
      expect(body.error).toEqual({
        code: 'request_timeout',
        message: 'The request was not received in time',
        retryable: false,
      });
      // Node's default would wait 60 s and check every 30 s: a functional bound, not a latency figure.
      expect(waited).toBeLessThan(BODY_IDLE_TIMEOUT_MS + 10_000);
      expect(logged).toEqual([]);
      expect(clientEvents).toEqual([
        expect.objectContaining({
          level: 'warn',
          message: 'request refused',
          extra: [{ status: 408, reason: 'ERR_HTTP_REQUEST_TIMEOUT' }],
        }),
      ]);
      expect((await call('GET', '/api/health')).status).toBe(200);
    },
    BODY_IDLE_TIMEOUT_MS + 30_000,
  );

  it('logs a client that goes away mid-body as a client event, not an error', async () => {
    const { hostname, port } = new URL(server.url);
    const socket = connect(Number(port), hostname, () =>
      socket.write(partialHead() + PARTIAL_BODY),
    );
    // Long enough for the server to be reading the body, then the client resets.
    await new Promise((resolve) => setTimeout(resolve, 200));
    socket.resetAndDestroy();

    for (let i = 0; i < 100 && clientEvents.length + logged.length === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(logged).toEqual([]);
    expect(clientEvents).toEqual([
      expect.objectContaining({
        level: 'info',
        message: 'connection closed before the request body arrived',
      }),
    ]);
    expect((await call('GET', '/api/health')).status).toBe(200);
  });

  it('answers 401 authentication_required without a token', async () => {
    const res = await call('POST', '/echo', { body: JSON.stringify({ message: 'hello' }) });

    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
    expect(await res.json()).toEqual({
      error: {
        code: 'authentication_required',
        message: 'Authentication is required',
        retryable: false,
      },
    });
  });

  it('answers 401 for an expired token', async () => {
    const past = await createLocalIssuer({
      keyDir: localKeyDir(dataDir),
      now: () => Date.now() - 24 * 60 * 60 * 1000,
    });

    const res = await call('POST', '/echo', {
      token: past.issueToken({ sub: 'user-1', tenantId: 'acme' }),
      body: JSON.stringify({ message: 'hello' }),
    });

    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({
      error: {
        code: 'authentication_required',
        message: 'The token has expired',
        retryable: false,
      },
    });
  });

  it('answers 401 for a token signed with another key', async () => {
    const stranger = await createLocalIssuer();

    const res = await call('POST', '/echo', {
      token: stranger.issueToken({ sub: 'user-1', tenantId: 'acme' }),
      body: JSON.stringify({ message: 'hello' }),
    });

    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({
      error: { code: 'authentication_required', message: 'The token is invalid', retryable: false },
    });
  });

  it('does not invoke the handler when the token does not verify', async () => {
    let invoked = false;
    const guarded = await createLocalHttpServer({
      verifier,
      routes: [
        {
          method: 'GET',
          path: '/guarded',
          handler: async () => {
            invoked = true;
            return { statusCode: 200 };
          },
        },
      ],
    });
    try {
      const res = await fetch(`${guarded.url}/guarded`, {
        headers: { authorization: 'Bearer not.a.token' },
      });

      expect(res.status).toBe(401);
      expect(invoked).toBe(false);
    } finally {
      await guarded.close();
    }
  });

  it('answers 403 forbidden, naming the claim, for a token without a tenant', async () => {
    const res = await call('POST', '/echo', {
      token: token({ extraClaims: { 'custom:tenant_id': undefined } }),
      body: JSON.stringify({ message: 'hello' }),
    });

    expect(res.status).toBe(403);
    const error = await errorOf(res);
    expect(error.code).toBe('forbidden');
    expect(error.message).toContain('no usable tenant (claim "custom:tenant_id")');
  });

  it('answers 422 validation_error for a body that is not JSON', async () => {
    const res = await call('POST', '/echo', { token: token(), body: '{"message": ' });

    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({
      error: { code: 'validation_error', message: 'body: is not valid JSON', retryable: false },
    });
  });

  it('answers 422 naming the field for a body that fails the schema', async () => {
    const res = await call('POST', '/echo', {
      token: token(),
      body: JSON.stringify({ message: 42 }),
    });

    expect(res.status).toBe(422);
    const error = await errorOf(res);
    expect(error.code).toBe('validation_error');
    expect(error.message).toBe('message: Invalid input: expected string, received number');
  });

  it('answers 404 not_found for an unknown route, without asking for a token', async () => {
    const res = await call('GET', '/nowhere');

    expect(res.status).toBe(404);
    expect((await errorOf(res)).code).toBe('not_found');
  });

  it('answers 405 with Allow for a known path and another method', async () => {
    const res = await call('DELETE', '/echo', { token: token() });

    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    expect((await errorOf(res)).code).toBe('method_not_allowed');
  });

  it('answers 413 for a body over 1 MB', async () => {
    const res = await call('POST', '/echo', {
      token: token(),
      body: JSON.stringify({ message: 'x'.repeat(1024 * 1024 + 1) }),
    });

    expect(res.status).toBe(413);
    expect((await errorOf(res)).code).toBe('payload_too_large');
  });

  it('answers a generic 500 and leaks nothing when a createHttpHandler use case throws', async () => {
    const res = await call('POST', '/boom', { token: token(), body: '{}' });

    expect(res.status).toBe(500);
    expect(await res.text()).toBe(INTERNAL_ERROR_BODY);
  });

  it('answers a generic 500, and logs the error, when a handler itself throws', async () => {
    const res = await call('GET', '/raw-boom', { token: token() });

    expect(res.status).toBe(500);
    expect(await res.text()).toBe(INTERNAL_ERROR_BODY);
    expect(logged).toHaveLength(1);
    const err = logged[0]?.extra[0]?.err as Error;
    expect((err.cause as Error).message).toBe('raw handler exploded with s3cret');
  });

  it('answers /api/health without a token', async () => {
    const res = await call('GET', '/api/health');

    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });

  it('answers CORS preflight for a configured origin only, on the routes that ask for it', async () => {
    const allowed = await call('OPTIONS', '/echo', {
      headers: { origin: 'http://localhost:5173', 'access-control-request-method': 'POST' },
    });
    const other = await call('OPTIONS', '/echo', {
      headers: { origin: 'http://evil.example', 'access-control-request-method': 'POST' },
    });
    const get = await call('GET', '/api/health', { headers: { origin: 'http://localhost:5173' } });

    expect(allowed.status).toBe(204);
    expect(allowed.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    expect(allowed.headers.get('access-control-allow-methods')).toBe('POST, OPTIONS');
    expect(allowed.headers.get('access-control-allow-headers')).toContain('authorization');
    expect(other.status).toBe(204);
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    expect(get.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    expect(get.headers.get('access-control-expose-headers')).toContain('x-ratelimit-remaining');
    // A development route (token issuing, the playground) is never open to other origins.
    const local = await call('OPTIONS', '/boom', {
      headers: { origin: 'http://localhost:5173', 'access-control-request-method': 'POST' },
    });
    expect(local.headers.get('access-control-allow-origin')).toBeNull();
  });

  describe('groundwork token', () => {
    function capture() {
      const out = { stdout: '', stderr: '' };
      return {
        out,
        options: {
          dataDir,
          stdout: { write: (text: string) => (out.stdout += text) },
          stderr: { write: (text: string) => (out.stderr += text) },
        },
      };
    }

    it('prints only a token that verifies and that the server accepts', async () => {
      const { out, options } = capture();

      const code = await tokenCommand(
        ['--user', 'alice', '--tenant', 'acme', '--plan', 'pro', '--admin', '--expires', '600'],
        options,
      );

      expect(code).toBe(0);
      expect(out.stderr).toBe('');
      expect(out.stdout).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+\n$/);
      const printed = out.stdout.trim();
      const claims = await verifier.verify(printed);
      expect(claims).toMatchObject({
        sub: 'alice',
        'custom:tenant_id': 'acme',
        'custom:plan': 'pro',
        'cognito:groups': ['admin'],
      });
      expect(Number(claims.exp) - Number(claims.iat)).toBe(600);
      const res = await call('POST', '/echo', {
        token: printed,
        body: JSON.stringify({ message: 'hi' }),
      });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { identity: Identity }).identity).toMatchObject({
        userId: 'alice',
        isAdmin: true,
        plan: 'pro',
      });
    });

    it.each([
      [['--tenant', 'acme']],
      [['--user', 'alice']],
      [['--user', 'alice', '--tenant', 'not a tenant!']],
      [['--user', 'victim/x', '--tenant', 'acme']],
      [['--user', 'alice', '--tenant', 'acme', '--expires', '-5']],
      [['--user', 'alice', '--tenant', 'acme', '--bogus']],
    ])('refuses %j with exit code 2 and usage on stderr', async (args) => {
      const { out, options } = capture();

      const code = await tokenCommand(args, options);

      expect(code).toBe(2);
      expect(out.stdout).toBe('');
      expect(out.stderr).toContain('Usage: groundwork token');
    });
  });
});
