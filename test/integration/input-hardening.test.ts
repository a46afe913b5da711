/**
 * Input PostgreSQL cannot store or the server cannot afford, through the real local server on
 * PGlite and on PostgreSQL: each request below was a 5xx (or blocked the event loop) before the
 * edge refused it, and is now a 4xx in the error model naming the field. Also: the store errors
 * both drivers raise for such values are classified as the caller's fault, not an outage.
 */
import { errorStatus } from '../support/route-statuses';
import type { Database } from '../../lambdas/adapters/postgres/database';
import { toErrorResponse } from '../../lambdas/core/errors';
import { parseLimitsConfig } from '../../lambdas/core/limits/config';
import { API_ROUTES } from '../../lambdas/http/api-routes';
import { MAX_BODY_BYTES } from '../../lambdas/http/request-limits';
import { startLocalApi, type LocalApi } from '../../local/api';
import { startLocalStack, type LocalStack } from '../../local/stack';
import { ENGINES, openTestDatabase } from '../support/databases';
import { createHashEmbedder } from '../support/hash-embedder';

process.env.POWERTOOLS_METRICS_DISABLED = 'true';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** `depth` levels of andAll around one comparison. */
const nested = (depth: number): unknown => {
  let filter: unknown = { equals: { key: 'team', value: 'a' } };
  for (let i = 1; i < depth; i++) filter = { andAll: [filter] };
  return filter;
};
/** 20,000 comparisons in 1,000 groups: under 1 MiB. */
const wide = {
  orAll: Array.from({ length: 1000 }, (_, g) => ({
    andAll: Array.from({ length: 20 }, (_, i) => ({ equals: { key: `k${i}`, value: g } })),
  })),
};

describe.each(ENGINES)('input hardening on %s', (engine) => {
  let db: Database;
  let stack: LocalStack;
  let api: LocalApi;
  let user: string;
  let admin: string;

  beforeAll(async () => {
    db = await openTestDatabase(engine);
    stack = await startLocalStack({
      db,
      embedder: createHashEmbedder(),
      llm: null,
      logLevel: 'SILENT',
      limits: parseLimitsConfig({
        plans: { free: { requestsPerMinute: 100_000 }, admin: { requestsPerMinute: 100_000 } },
      }),
    });
    api = await startLocalApi(stack);
    user = api.issuer.issueToken({ sub: 'u1', tenantId: 'acme' });
    admin = api.issuer.issueToken({ sub: 'a1', tenantId: 'acme', admin: true });
  });
  afterAll(async () => {
    await api?.close();
    await stack?.stop();
    await db?.close();
  });

  const call = async (method: string, path: string, body?: unknown, token = user) => {
    const res = await fetch(`${api.server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body === undefined
        ? {}
        : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as Json };
  };

  const upload = { filename: 'a.txt', content_type: 'text/plain', size_bytes: 10 };

  it.each<[string, string, string, unknown, string, string?]>([
    [
      'a NUL in query_text (search)',
      'POST',
      '/api/rag/search',
      { query_text: 'a\u0000b' },
      'query_text',
    ],
    [
      'a NUL in query_text (answer)',
      'POST',
      '/api/rag/answer',
      { query_text: 'a\u0000b' },
      'query_text',
    ],
    [
      'a NUL in query_text (streamed answer)',
      'POST',
      '/api/rag/answer',
      { query_text: 'a\u0000b', stream: true },
      'query_text',
    ],
    [
      'a lone surrogate in query_text',
      'POST',
      '/api/rag/search',
      { query_text: 'q\uD800' },
      'query_text',
    ],
    [
      'a NUL in a metadata filter value',
      'POST',
      '/api/rag/search',
      { query_text: 'q', filters: { metadata: { equals: { key: 'k', value: 'a\u0000' } } } },
      'filters.metadata.equals.value',
    ],
    ['a NUL in a title', 'POST', '/api/documents', { ...upload, title: 't\u0000' }, 'title'],
    [
      'a NUL in a metadata value',
      'POST',
      '/api/documents',
      { ...upload, metadata: { region: 'em\u0000ea' } },
      'metadata.region',
    ],
    [
      'a lone surrogate in a metadata key',
      'POST',
      '/api/documents',
      { ...upload, metadata: { 're\uDC00gion': 'emea' } },
      'metadata.re\\udc00gion',
    ],
    [
      'a NUL in a prompt',
      'POST',
      '/api/admin/prompts',
      { profile: 'general', name: 'n', instructions: 'be \u0000 brief' },
      'instructions',
      'admin',
    ],
    ['a NUL in ?prefix=', 'GET', '/api/documents?prefix=s3%3A%2F%2Fb%00', undefined, 'prefix'],
    ['a NUL in a path parameter', 'GET', '/api/documents/a%00b', undefined, 'id'],
    [
      'year 0 in date_from',
      'POST',
      '/api/rag/search',
      { query_text: 'q', filters: { date_from: '0000-01-01' } },
      'filters.date_from',
    ],
    [
      'a filter nested 1,000 deep',
      'POST',
      '/api/rag/search',
      { query_text: 'q', filters: { metadata: nested(1000) } },
      'filters.metadata',
    ],
    [
      'a filter nested 6 deep',
      'POST',
      '/api/rag/answer',
      { query_text: 'q', filters: { metadata: nested(6) } },
      'filters.metadata',
    ],
    [
      'a filter of 20,000 comparisons',
      'POST',
      '/api/rag/search',
      { query_text: 'q', filters: { metadata: wide } },
      'filters.metadata',
    ],
  ])(
    'refuses %s with a 4xx (422, or 400 on seed 001 routes) naming the field',
    async (_case, method, path, body, field, ...[who]) => {
      // (`who` as a rest element: jest-each hands a `done` callback to a function of more declared
      // parameters than the row has.)
      const res = await call(method, path, body, who === 'admin' ? admin : user);

      expect(res.status).toBe(errorStatus(method, path, 'validation'));
      expect(res.body.error).toMatchObject({ code: 'validation_error', retryable: false });
      // The field, or a place inside it (a filter too deep is named down to where it is too deep).
      expect(res.body.error.message).toMatch(new RegExp(`^${field.replace(/[.\\]/g, '\\$&')}[.:]`));
    },
  );

  it('refuses a body over 1 MiB with a 413 and answers one just under it', async () => {
    const over = await call('POST', '/api/rag/search', {
      query_text: 'q',
      pad: 'x'.repeat(MAX_BODY_BYTES),
    });
    expect(over.status).toBe(413);
    expect(over.body.error).toMatchObject({ code: 'payload_too_large', retryable: false });

    // At the limit the body is read and validated (the unknown key is the only fault).
    const text = JSON.stringify({ query_text: 'q', pad: '' });
    const at = await call(
      'POST',
      '/api/rag/search',
      text.replace('""', `"${'x'.repeat(MAX_BODY_BYTES - text.length)}"`),
    );
    expect(at.status).toBe(errorStatus('POST', '/api/rag/search', 'validation'));
    expect(at.body.error.message).toMatch(/pad/);
  });

  it('refuses an in filter of 101 values naming the limit, and searches with 100', async () => {
    const values = (n: number) => Array.from({ length: n }, (_, i) => `v${i}`);
    const search = (n: number) =>
      call('POST', '/api/rag/search', {
        query_text: 'x',
        filters: { metadata: { in: { key: 'a', value: values(n) } } },
      });

    const over = await search(101);
    expect(over.status).toBe(errorStatus('POST', '/api/rag/search', 'validation'));
    expect(over.body.error.message).toBe('filters.metadata: in.value: at most 100 values');
    expect((await search(100)).status).toBe(200);
  });

  // Every route that reads a query string (API_ROUTES `query`), so a new one is covered too.
  it.each(API_ROUTES.filter((r) => r.query).map((r) => [r.method, r.path] as const))(
    'names an unknown parameter of %s %s as part of the query, not the body',
    async (method, path) => {
      const url = `${path.replace(/\{\w+\}/g, '00000000-0000-4000-8000-000000000000')}?tenant=acme`;

      const res = await call(method, url, undefined, admin);

      expect(res.status).toBe(errorStatus(method, path, 'validation'));
      expect(res.body.error.code).toBe('validation_error');
      // A route with a required parameter names that one first; the unknown one is still listed.
      const problems = [
        res.body.error.message,
        ...(res.body.error.details ?? []).map(
          (d: { path: string; message: string }) => `${d.path}: ${d.message}`,
        ),
      ];
      expect(problems).toContain('query: Unrecognized key: "tenant"');
      expect(problems.join('\n')).not.toMatch(/^body:/m);
    },
  );

  it('still searches, with a filter at the caps', async () => {
    const atCaps = {
      orAll: [19, 19, 19, 19, 18].map((n) => ({
        andAll: Array.from({ length: n }, (_, i) => ({ equals: { key: `k${i}`, value: i } })),
      })),
    };
    const res = await call('POST', '/api/rag/search', {
      query_text: 'warranty',
      filters: { date_from: '0001-01-01', metadata: atCaps },
    });
    expect(res.status).toBe(200);
  });

  it.each<[string, string, unknown[], number, boolean]>([
    ['a NUL in text (22021)', 'SELECT $1::text AS t', ['a\u0000b'], 422, false],
    ['a date out of range (22008)', `SELECT '0000-01-01'::date AS d`, [], 422, false],
    ['an integer out of range (22003)', 'SELECT 2147483648::int AS i', [], 422, false],
    ['an undefined table (42P01, a bug)', 'SELECT * FROM no_such_table', [], 500, false],
  ])("classifies the driver's error for %s", async (_case, sql, params, status, retryable) => {
    const err = await db.query(sql, params).then(
      () => null,
      (e: unknown) => e,
    );

    expect(err).not.toBeNull();
    const rendered = toErrorResponse(err);
    expect(rendered.status).toBe(status);
    expect(rendered.body.error.retryable).toBe(retryable);
  });
});
