/**
 * The embedded default's API: the same Lambda handlers as in AWS, behind the local HTTP server,
 * which verifies tokens against the local issuer like API Gateway's Cognito authorizer would;
 * the handlers check the token's client (audience) as they do in AWS.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createJwtVerifier } from '../lambdas/adapters/auth/jwt-verifier';
import { createLocalIssuer, type LocalIssuer } from '../lambdas/adapters/auth/local-issuer';
import { createLogger, createMetrics } from '../lambdas/adapters/observability/powertools';
import { adminRouteHandlers } from '../lambdas/admin/routes';
import { documentsRoutes } from '../lambdas/documents/routes';
import {
  ConfigError,
  NotFoundError,
  toErrorResponse,
  ValidationError,
} from '../lambdas/core/errors';
import { TENANT_ID_PATTERN } from '../lambdas/core/ingestion/object-attributes';
import { buildOpenApi } from '../lambdas/http/openapi';
import { API_ROUTES, routeKey } from '../lambdas/http/api-routes';
import { bindRoutes } from '../lambdas/http/route-dispatch';
import { DEFAULT_IDENTITY_CONFIG } from '../lambdas/http/identity';
import { describeZodError, type HttpHandlerDeps } from '../lambdas/http/http-handler';
import { runStreamedRequest } from '../lambdas/http/request-lifecycle';
import { CHAT_ROUTE, streamChat } from '../lambdas/rag-answer/chat';
import { asksForStream, streamAnswer } from '../lambdas/rag-answer/handler';
import { ragAnswerRoutes } from '../lambdas/rag-answer/routes';
import { answerRequestSchema } from '../lambdas/rag-answer/schema';
import { searchRouteHandlers } from '../lambdas/rag-search/handler';
import { usageRouteHandlers } from '../lambdas/usage/handler';
import { DEVELOPER_PLAN, localKeyDir } from './commands/token';
import {
  createLocalHttpServer,
  type LocalHandler,
  type LocalHttpServer,
  type LocalRoute,
  type LocalStreamHandler,
} from './http-server';
import type { LocalStack } from './stack';
import * as z from 'zod';

export interface LocalApi {
  readonly server: LocalHttpServer;
  readonly issuer: LocalIssuer;
  close(): Promise<void>;
}

/** The API's routes (lambdas/http/api-routes.ts), each a production handler wired to the local stack. */
export function localRoutes(
  stack: LocalStack,
  overrides: {
    answering?: LocalStack['answering'];
    lexybrainRagEnabled?: boolean;
    /** The app clients whose tokens the handlers accept (the local issuer's audience). */
    audiences?: readonly string[];
  } = {},
): LocalRoute[] {
  const answering = overrides.answering ?? stack.answering;
  const logger = createLogger({
    serviceName: 'groundwork-api',
    logLevel: stack.logger.getLevelName(),
  });
  // Metrics are off in the embedded default: Powertools' notice that there is nothing to
  // publish, after every request, is not shown.
  const metrics = createMetrics(
    'groundwork-api',
    createLogger({ serviceName: 'groundwork-api', logLevel: 'ERROR' }),
  );
  const deps = {
    logger,
    metrics,
    limiter: stack.limiter,
    identity: {
      ...DEFAULT_IDENTITY_CONFIG,
      ...(overrides.audiences ? { audiences: [...overrides.audiences] } : {}),
    },
  };
  // Each function's route handlers, composed as its Lambda entry composes them.
  const handlers: Record<string, LocalHandler> = {
    ...bindRoutes('usage', usageRouteHandlers(deps)),
    ...bindRoutes('rag-search', searchRouteHandlers({ ...deps, search: stack.search })),
    ...bindRoutes(
      'rag-answer',
      ragAnswerRoutes({
        ...deps,
        answering,
        conversations: stack.conversations,
        search: stack.search,
        lexybrainRagEnabled: overrides.lexybrainRagEnabled ?? true,
      }),
    ),
    ...bindRoutes(
      'documents',
      documentsRoutes({ ...deps, db: stack.db, documents: stack.documents }),
    ),
    ...bindRoutes('admin', adminRouteHandlers({ ...deps, admin: stack.admin })),
  };
  const apiRoutes = API_ROUTES.map((route): LocalRoute => {
    const key = routeKey(route);
    const handler = handlers[key];
    if (!handler) throw new ConfigError(`The local server has no handler for ${key}`);
    return {
      method: route.method,
      path: route.path,
      handler,
      auth: route.auth,
      cors: true,
      functionName: `groundwork-${route.function}`,
      ...(route.name === 'answer' ? { stream: answerStream(answering, deps) } : {}),
      ...(route.name === CHAT_ROUTE ? { stream: chatStream(answering, deps) } : {}),
      ...(route.upload ? { maxBodyBytes: route.upload.maxBytes } : {}),
    };
  });
  return [
    ...apiRoutes,
    {
      // Local only: the ingest queue's depth, as SQS would report it, so `groundwork ingest` can
      // wait for a running server to finish indexing what it uploaded.
      method: 'GET',
      path: '/local/ingest-queue',
      handler: async () => jsonResult(200, stack.queue.stats()),
    },
  ];
}

const jsonResult = (statusCode: number, body: unknown) => ({
  statusCode,
  headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' },
  body: JSON.stringify(body),
});

/**
 * POST /api/rag/answer with `"stream": true`: Server-Sent Events as the answer is produced (`delta`
 * events, then one `done` event with citations, usage and ids), through the same request
 * lifecycle as every route. Declines other requests, which the buffered handler answers.
 */
function answerStream(
  answering: LocalStack['answering'],
  deps: HttpHandlerDeps,
): LocalStreamHandler {
  return async (event, response) => {
    if (!asksForStream(event)) return false;
    await runStreamedRequest(
      deps,
      { route: 'answer', schema: answerRequestSchema },
      event,
      response,
      ({ body, identity, admission }, write) =>
        streamAnswer(answering, identity, body, write, response.signal, admission),
    );
    return true;
  };
}

/**
 * Seed 003's chat route: its events as the answer is produced, through the same request
 * lifecycle (lambdas/rag-answer/chat.ts). It always streams.
 */
function chatStream(answering: LocalStack['answering'], deps: HttpHandlerDeps): LocalStreamHandler {
  return async (event, response) => {
    await streamChat({ ...deps, answering }, event, response, { signal: response.signal });
    return true;
  };
}

/** The playground's sign-in: a development token, on the developer plan unless `plan` names one. */
const tokenRequestSchema = z
  .object({
    user_id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9@._-]{0,127}$/),
    tenant_id: z.string().regex(TENANT_ID_PATTERN),
    admin: z.boolean().default(false),
    plan: z
      .string()
      .regex(/^[a-z][a-z0-9_-]{0,31}$/)
      .optional(),
  })
  .strict();

const PLAYGROUND_DIR = path.join(__dirname, 'playground');
const PLAYGROUND_FILES: Readonly<Record<string, string>> = {
  'app.js': 'text/javascript; charset=utf-8',
  'style.css': 'text/css; charset=utf-8',
};

/**
 * The playground's own content security policy: its script and style only, requests to this
 * server and to loopback (the S3 emulator's presigned uploads), and no framing by other pages.
 */
const PLAYGROUND_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self' http://127.0.0.1:* http://localhost:*",
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; '),
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

/**
 * What only the embedded default serves: the playground at `/`, the OpenAPI document, and
 * development tokens from the local issuer (the playground's sign-in; in AWS, Cognito's).
 */
function developmentRoutes(issuer: LocalIssuer): LocalRoute[] {
  const file = (name: string, contentType: string) => async () => ({
    statusCode: 200,
    headers: {
      'content-type': contentType,
      'cache-control': 'no-cache',
      ...PLAYGROUND_SECURITY_HEADERS,
    },
    body: await readFile(path.join(PLAYGROUND_DIR, name), 'utf8'),
  });
  return [
    {
      method: 'GET',
      path: '/',
      auth: false,
      handler: file('index.html', 'text/html; charset=utf-8'),
    },
    {
      method: 'GET',
      path: '/playground/{file}',
      auth: false,
      handler: async (event) => {
        const name = event.pathParameters?.file ?? '';
        if (name === 'config.json') return jsonResult(200, { apiUrl: '', auth: { mode: 'local' } });
        const type = Object.hasOwn(PLAYGROUND_FILES, name) ? PLAYGROUND_FILES[name] : undefined;
        if (!type) return jsonResult(404, toErrorResponse(new NotFoundError('No such file')).body);
        return file(name, type)();
      },
    },
    {
      method: 'GET',
      path: '/openapi.json',
      auth: false,
      handler: async () => jsonResult(200, buildOpenApi()),
    },
    {
      method: 'POST',
      path: '/local/token',
      auth: false,
      handler: async (event) => {
        let raw: unknown;
        try {
          raw = JSON.parse(event.body ?? '{}');
        } catch {
          raw = null;
        }
        const parsed = tokenRequestSchema.safeParse(raw);
        if (!parsed.success) {
          const error = new ValidationError(describeZodError(parsed.error));
          return jsonResult(422, toErrorResponse(error).body);
        }
        const { user_id, tenant_id, admin, plan } = parsed.data;
        const token = issuer.issueToken({
          sub: user_id,
          tenantId: tenant_id,
          admin,
          plan: plan ?? DEVELOPER_PLAN,
        });
        return jsonResult(200, { token, token_type: 'Bearer' });
      },
    },
  ];
}

export async function startLocalApi(
  stack: LocalStack,
  options: {
    dataDir?: string;
    port?: number;
    host?: string;
    corsOrigins?: readonly string[];
    answering?: LocalStack['answering'];
    /** `LEXYBRAIN_RAG_ENABLED`: false answers POST /api/lexybrain/rag with 503. @default true */
    lexybrainRagEnabled?: boolean;
  } = {},
): Promise<LocalApi> {
  const issuer = await createLocalIssuer(
    options.dataDir ? { keyDir: localKeyDir(options.dataDir) } : {},
  );
  const verifier = createJwtVerifier({
    issuer: issuer.issuer,
    audience: issuer.audience,
    jwks: issuer.jwks(),
  });
  const server = await createLocalHttpServer({
    routes: [
      ...localRoutes(stack, {
        audiences: [issuer.audience],
        ...(options.answering ? { answering: options.answering } : {}),
        ...(options.lexybrainRagEnabled === undefined
          ? {}
          : { lexybrainRagEnabled: options.lexybrainRagEnabled }),
      }),
      ...developmentRoutes(issuer),
    ],
    verifier,
    logger: stack.logger,
    port: options.port ?? 0,
    ...(options.host ? { host: options.host } : {}),
    ...(options.corsOrigins ? { corsOrigins: options.corsOrigins } : {}),
  });
  // The playground, served here, uploads straight to the S3 emulator (its only CORS origin).
  const served = new URL(server.url);
  stack.s3.allowOrigin(served.origin);
  if (served.hostname === '127.0.0.1') stack.s3.allowOrigin(`http://localhost:${served.port}`);
  return { server, issuer, close: () => server.close() };
}
