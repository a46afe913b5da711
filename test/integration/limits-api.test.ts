/**
 * Quotas and rate limits through the local server with real tokens of different plans: the
 * production limiter on dynalite (real SDK), in front of the real /api/rag/search and /api/usage handlers.
 */
import { parseLimitsConfig } from '../../lambdas/core/limits/config';
import { startLocalApi, type LocalApi } from '../../local/api';
import { startLocalStack, type LocalStack } from '../../local/stack';
import { createHashEmbedder } from '../support/hash-embedder';

process.env.POWERTOOLS_METRICS_DISABLED = 'true';

describe('limits through the local server', () => {
  let stack: LocalStack;
  let api: LocalApi;

  beforeAll(async () => {
    stack = await startLocalStack({
      embedder: createHashEmbedder(),
      logLevel: 'SILENT',
      limits: parseLimitsConfig({
        plans: {
          free: { searchesPerMonth: 3, requestsPerMinute: 100 },
          basic: { searchesPerMonth: 100, requestsPerMinute: 4 },
        },
      }),
    });
    api = await startLocalApi(stack);
  });
  afterAll(async () => {
    await api?.close();
    await stack?.stop();
  });

  const search = (token: string) =>
    fetch(`${api.server.url}/api/rag/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query_text: 'anything at all' }),
    });

  it('free plan: rate-limit headers on success, then 403 quota_exceeded with the reset date', async () => {
    const token = api.issuer.issueToken({ sub: 'free-user', tenantId: 'acme', plan: 'free' });
    for (let i = 0; i < 3; i++) {
      // The reset is the next minute as the server saw the request: a whole second, and the
      // minute may turn while the request is in flight.
      const sent = Math.floor(Date.now() / 1000);
      const res = await search(token);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-limit')).toBe('100');
      expect(Number(res.headers.get('x-ratelimit-remaining'))).toBe(100 - (i + 1));
      expect(Number(res.headers.get('x-ratelimit-reset'))).toBeGreaterThan(sent);
    }
    const refused = await search(token);
    expect(refused.status).toBe(403);
    const body = (await refused.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('quota_exceeded');
    expect(body.error.message).toMatch(/\d{4}-\d{2}-\d{2}/);
  });

  it('basic plan: 429 rate_limit_exceeded with Retry-After once the minute is used up', async () => {
    const token = api.issuer.issueToken({ sub: 'basic-user', tenantId: 'acme', plan: 'basic' });
    const statuses: number[] = [];
    let limited: Response | undefined;
    // Up to two windows' worth: the minute may turn while the requests are sent.
    for (let i = 0; i < 10 && !limited; i++) {
      const res = await search(token);
      statuses.push(res.status);
      if (res.status === 429) limited = res;
    }
    expect(statuses.slice(0, 4)).toEqual([200, 200, 200, 200]);
    expect(limited).toBeDefined();
    expect(Number(limited!.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(
      ((await limited!.json()) as { error: { code: string; retryable: boolean } }).error,
    ).toMatchObject({ code: 'rate_limit_exceeded', retryable: true });
  });

  it('a plan claim cannot be raised by the request, and GET /api/usage reports the caller plan', async () => {
    const token = api.issuer.issueToken({ sub: 'pro-user', tenantId: 'acme', plan: 'pro' });
    const res = await fetch(`${api.server.url}/api/usage?plan=admin`, {
      headers: { authorization: `Bearer ${token}`, 'x-plan': 'admin' },
    });
    expect(res.status).toBe(200);
    const usage = (await res.json()) as {
      plan: string;
      quotas: { answers: { limit: number | null } };
    };
    expect(usage.plan).toBe('pro');
    expect(usage.quotas.answers.limit).toBe(2000);
  });
});
