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
import { makeHandler as makeSearchHandler } from '../lambdas/rag-search/handler';
import { localKeyDir } from './commands/token';
import { createLocalHttpServer, type LocalHttpServer, type LocalRoute } from './http-server';
import type { LocalStack } from './stack';

export interface LocalApi {
  readonly server: LocalHttpServer;
  readonly issuer: LocalIssuer;
  close(): Promise<void>;
}

/** The routes, each a production handler wired to the local stack's adapters. */
export function localRoutes(stack: LocalStack): LocalRoute[] {
  const logger = new Logger({ serviceName: 'groundwork-api', logLevel: stack.logger.getLevelName() });
  const metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName: 'groundwork-api' });
  const deps = { logger, metrics };
  return [
    { method: 'POST', path: '/search', handler: makeSearchHandler({ ...deps, search: stack.search }), functionName: 'groundwork-rag-search' },
    { method: 'GET', path: '/documents', handler: makeListDocumentsHandler({ ...deps, db: stack.db }), functionName: 'groundwork-documents' },
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

export async function startLocalApi(
  stack: LocalStack,
  options: { dataDir?: string; port?: number; host?: string; corsOrigins?: readonly string[] } = {},
): Promise<LocalApi> {
  const issuer = await createLocalIssuer(options.dataDir ? { keyDir: localKeyDir(options.dataDir) } : {});
  const verifier = createJwtVerifier({ issuer: issuer.issuer, audience: issuer.audience, jwks: issuer.jwks() });
  const server = await createLocalHttpServer({
    routes: localRoutes(stack),
    verifier,
    logger: stack.logger,
    port: options.port ?? 0,
    ...(options.host ? { host: options.host } : {}),
    ...(options.corsOrigins ? { corsOrigins: options.corsOrigins } : {}),
  });
  return { server, issuer, close: () => server.close() };
}
