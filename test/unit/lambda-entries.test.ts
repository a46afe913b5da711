/**
 * Each API Lambda's production entry serves exactly the routes the API table assigns to it
 * (the table the local server, the OpenAPI document and the CDK API are built from).
 */
import { buildApiEvent } from '../../lambdas/http/api-event';
import { API_ROUTES, type ApiFunction } from '../../lambdas/http/api-routes';

const ENV = {
  AWS_REGION: 'eu-west-1',
  DB_SECRET_ARN: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:db',
  LIMITS_TABLE: 'limits',
  DOCUMENTS_BUCKET: 'documents-bucket',
  TOKEN_AUDIENCES: '["our-client"]',
  CORS_ORIGINS: '[]',
  POWERTOOLS_METRICS_DISABLED: 'true',
};

const ENTRIES: Record<Exclude<ApiFunction, 'rag-search'>, string> = {
  'rag-answer': '../../lambdas/rag-answer/index',
  documents: '../../lambdas/documents/index',
  admin: '../../lambdas/admin/index',
  usage: '../../lambdas/usage/index',
};

describe('Lambda entries', () => {
  beforeAll(() => Object.assign(process.env, ENV));

  it.each(Object.entries(ENTRIES))('%s serves its routes of the API table', async (fn, entry) => {
    const { routes } = (await import(entry)) as { routes: Record<string, unknown> };
    const expected = API_ROUTES.filter((r) => r.function === fn).map(
      (r) => `${r.method} ${r.path}`,
    );
    expect(Object.keys(routes).sort()).toEqual(expected.sort());
  });

  it('rag-search serves exactly POST /api/rag/search', () => {
    expect(API_ROUTES.filter((r) => r.function === 'rag-search').map((r) => r.path)).toEqual([
      '/api/rag/search',
    ]);
  });

  it('answers an unknown route with a 404, not a crash', async () => {
    const { handler } = (await import('../../lambdas/admin/index')) as {
      handler: (e: unknown, c: unknown) => Promise<{ statusCode: number; body: string }>;
    };
    const res = await handler(buildApiEvent({ method: 'GET', resource: '/nope' }), {});
    expect(res.statusCode).toBe(404);
    expect(JSON.parse(res.body)).toMatchObject({ error: { code: 'not_found' } });
  });
});
