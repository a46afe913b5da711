/**
 * The embedded default's API: the same Lambda handlers as in AWS, behind the local HTTP server,
 * which verifies tokens against the local issuer like API Gateway's JWT authorizer would.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { createJwtVerifier } from '../lambdas/adapters/auth/jwt-verifier';
import { createLocalIssuer, type LocalIssuer } from '../lambdas/adapters/auth/local-issuer';
import { METRICS_NAMESPACE } from '../lambdas/adapters/observability/powertools';
import { makeListHandler as makeListDocumentsHandler } from '../lambdas/documents/handler';
import { toErrorResponse } from '../lambdas/core/errors';
import { parseOrThrow } from '../lambdas/http/http-handler';
import { withLimitHeaders } from '../lambdas/http/limits-middleware';
import { identityFromEvent } from '../lambdas/http/identity';
import { makeAnswerHandler, makeThreadHandlers, streamAnswer } from '../lambdas/rag-answer/handler';
import { answerRequestSchema } from '../lambdas/rag-answer/schema';
import { makeHandler as makeSearchHandler } from '../lambdas/rag-search/handler';
import { makeHandler as makeUsageHandler } from '../lambdas/usage/handler';
import { localKeyDir } from './commands/token';
import {
  createLocalHttpServer,
  type LocalHttpServer,
  type LocalRoute,
  type LocalStreamHandler,
} from './http-server';
import type { LocalStack } from './stack';

export interface LocalApi {
  readonly server: LocalHttpServer;
  readonly issuer: LocalIssuer;
  close(): Promise<void>;
}

/** The routes, each a production handler wired to the local stack's adapters. */
export function localRoutes(
  stack: LocalStack,
  overrides: { answering?: LocalStack['answering'] } = {},
): LocalRoute[] {
  const answering = overrides.answering ?? stack.answering;
  const logger = new Logger({
    serviceName: 'groundwork-api',
    logLevel: stack.logger.getLevelName(),
  });
  const metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName: 'groundwork-api' });
  const deps = { logger, metrics, limiter: stack.limiter };
  const threads = makeThreadHandlers({ ...deps, conversations: stack.conversations });
  return [
    {
      method: 'POST',
      path: '/answer',
      handler: makeAnswerHandler({ ...deps, answering }),
      stream: answerStream(answering, stack.limiter),
      functionName: 'groundwork-rag-answer',
    },
    {
      method: 'GET',
      path: '/threads',
      handler: threads.list,
      functionName: 'groundwork-rag-answer',
    },
    {
      method: 'GET',
      path: '/threads/{id}',
      handler: threads.get,
      functionName: 'groundwork-rag-answer',
    },
    {
      method: 'DELETE',
      path: '/threads/{id}',
      handler: threads.archive,
      functionName: 'groundwork-rag-answer',
    },
    {
      method: 'POST',
      path: '/messages/{id}/feedback',
      handler: threads.feedback,
      functionName: 'groundwork-rag-answer',
    },
    {
      method: 'POST',
      path: '/search',
      handler: makeSearchHandler({ ...deps, search: stack.search }),
      functionName: 'groundwork-rag-search',
    },
    {
      method: 'GET',
      path: '/usage',
      handler: makeUsageHandler({ ...deps, limiter: stack.limiter }),
      functionName: 'groundwork-usage',
    },
    {
      method: 'GET',
      path: '/documents',
      handler: makeListDocumentsHandler({ ...deps, db: stack.db }),
      functionName: 'groundwork-documents',
    },
    {
      // Local only: the ingest queue's depth, as SQS would report it, so `groundwork ingest` can
      // wait for a running server to finish indexing what it uploaded.
      method: 'GET',
      path: '/local/ingest-queue',
      handler: async () => ({
        statusCode: 200,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(stack.queue.stats()),
      }),
    },
  ];
}

/**
 * POST /answer with `"stream": true`: Server-Sent Events as the answer is produced (`delta`
 * events, then one `done` event with citations, usage and ids). Declines other requests, which
 * the buffered handler answers.
 */
function answerStream(
  answering: LocalStack['answering'],
  limiter: LocalStack['limiter'],
): LocalStreamHandler {
  return async (event, response) => {
    let raw: unknown;
    try {
      raw = JSON.parse(event.body ?? '{}');
    } catch {
      return false; // the buffered handler reports the invalid JSON
    }
    if (typeof raw !== 'object' || raw === null || (raw as { stream?: unknown }).stream !== true)
      return false;
    const identity = identityFromEvent(event);
    // Same order as the buffered handler: limits after authentication, before validation and work.
    const admission = await limiter.admit(identity, 'answer');
    let status = 200;
    try {
      const body = parseOrThrow(answerRequestSchema, raw);
      response.start(
        200,
        withLimitHeaders(
          {
            'content-type': 'text/event-stream; charset=utf-8',
            'cache-control': 'no-cache',
            connection: 'keep-alive',
          },
          admission,
        ),
      );
      try {
        await streamAnswer(
          answering,
          identity,
          body,
          (chunk) => response.write(chunk),
          response.signal,
          (usage, model) => admission.recordUsage(usage, model),
        );
      } catch (err) {
        const { status: errorStatus, body: error } = toErrorResponse(err);
        status = errorStatus;
        response.write(`event: error\ndata: ${JSON.stringify(error)}\n\n`);
      }
      response.end();
      return true;
    } catch (err) {
      status = toErrorResponse(err).status;
      throw err;
    } finally {
      await limiter.settle(admission, { status });
    }
  };
}

export async function startLocalApi(
  stack: LocalStack,
  options: {
    dataDir?: string;
    port?: number;
    host?: string;
    corsOrigins?: readonly string[];
    answering?: LocalStack['answering'];
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
    routes: localRoutes(stack, options.answering ? { answering: options.answering } : {}),
    verifier,
    logger: stack.logger,
    port: options.port ?? 0,
    ...(options.host ? { host: options.host } : {}),
    ...(options.corsOrigins ? { corsOrigins: options.corsOrigins } : {}),
  });
  return { server, issuer, close: () => server.close() };
}
