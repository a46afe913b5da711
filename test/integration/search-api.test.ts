/**
 * POST /api/rag/search end to end: the real local HTTP server verifying real tokens, the rag-search
 * handler, the search core and PGlite, with documents indexed through the S3 emulator.
 */
import { generateKeyPairSync, createSign } from 'node:crypto';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { startLocalApi, type LocalApi } from '../../local/api';
import { startLocalStack, type LocalStack } from '../../local/stack';
import { createHashEmbedder, type CountingEmbedder } from '../support/hash-embedder';

process.env.POWERTOOLS_METRICS_DISABLED = 'true';

describe('POST /api/rag/search through the local server', () => {
  let stack: LocalStack;
  let api: LocalApi;
  let embedder: CountingEmbedder;
  let token: string;

  beforeAll(async () => {
    embedder = createHashEmbedder();
    stack = await startLocalStack({ embedder, logLevel: 'SILENT' });
    api = await startLocalApi(stack);
    token = api.issuer.issueToken({ sub: 'alice', tenantId: 'acme' });
    const put = (key: string, body: string) =>
      stack.s3.client.send(new PutObjectCommand({ Bucket: stack.s3.bucket, Key: key, Body: body }));
    await put(
      'tenants/acme/refunds.md',
      '# Refunds\n\nRefunds are issued within 14 days after the return arrives.',
    );
    await put(
      'tenants/acme/shipping.md',
      '# Shipping\n\nStandard shipping takes three to five business days.',
    );
    await put('tenants/globex/refunds.md', '# Globex refunds\n\nGlobex refunds take 60 days.');
    await stack.queue.idle();
  });
  afterAll(async () => {
    await api?.close();
    await stack?.stop();
  });

  const post = (body: unknown, auth: string | null = token) =>
    fetch(`${api.server.url}/api/rag/search`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(auth ? { authorization: `Bearer ${auth}` } : {}),
      },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  it('returns ranked results with snippets, offsets and citations from the caller tenant only', async () => {
    const res = await post({ query_text: 'how long do refunds take', top_k: 5 });
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      status: string;
      results: {
        source_uri: string;
        rank: number;
        snippet: string;
        score: number;
        source_title: string;
      }[];
      total_found: number;
    };
    expect(body.status).toBe('success');
    expect(body.results[0]).toMatchObject({
      rank: 1,
      source_title: 'Refunds',
      source_uri: expect.stringContaining('tenants/acme/refunds.md'),
    });
    expect(body.results.every((r) => r.source_uri.includes('tenants/acme/'))).toBe(true);
    expect(body.results[0]!.snippet.length).toBeLessThanOrEqual(200);
    expect(body.total_found).toBe(body.results.length);
  });

  it('401 without a token, with an expired one, or with a forged signature', async () => {
    const missing = await post({ query_text: 'refunds' }, null);
    expect(missing.status).toBe(401);
    expect(await missing.json()).toMatchObject({ error: { code: 'authentication_required' } });

    const past = Math.floor(Date.now() / 1000) - 3600;
    const expired = api.issuer.issueToken({
      sub: 'alice',
      tenantId: 'acme',
      extraClaims: { iat: past - 60, exp: past },
    });
    expect((await post({ query_text: 'refunds' }, expired)).status).toBe(401);

    const [header, payload] = token.split('.');
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const forged = `${header}.${payload}.${createSign('RSA-SHA256').update(`${header}.${payload}`).sign(privateKey).toString('base64url')}`;
    const res = await post({ query_text: 'refunds' }, forged);
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({
      error: { code: 'authentication_required', retryable: false },
    });
  });

  it('403 for a token without a tenant claim, and for org_id of another tenant', async () => {
    const noTenant = api.issuer.issueToken({
      sub: 'bob',
      tenantId: 'acme',
      extraClaims: { 'custom:tenant_id': undefined },
    });
    const res = await post({ query_text: 'refunds' }, noTenant);
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/tenant/);
    const other = await post({ query_text: 'refunds', filters: { org_id: 'globex' } });
    expect(other.status).toBe(403);
    expect(await other.json()).toMatchObject({ error: { code: 'forbidden' } });
  });

  it('400 (seed 001) naming the field for invalid input, including an unknown filter operator', async () => {
    const cases: [unknown, RegExp][] = [
      [{ query_text: '' }, /query_text/],
      [{ query_text: 'x'.repeat(501) }, /query_text/],
      [{ query_text: 'refunds', top_k: 51 }, /top_k/],
      [{ query_text: 'refunds', mode: 'semantic' }, /mode/],
      [
        { query_text: 'refunds', filters: { metadata: { regex: { key: 'a', value: '.*' } } } },
        /filters\.metadata/,
      ],
      [{ query_text: 'refunds', unexpected: true }, /unexpected|body/],
      ['{not json', /JSON/],
    ];
    for (const [body, message] of cases) {
      const res = await post(body);
      expect(res.status).toBe(400);
      const json = (await res.json()) as { error: { code: string; message: string } };
      expect(json.error.code).toBe('validation_error');
      expect(json.error.message).toMatch(message);
    }
  });

  it('500 (seed 001) retryable when the embedding model is unavailable, with nothing leaked', async () => {
    embedder.failNext = 1;
    const res = await post({ query_text: 'refunds' });
    expect(res.status).toBe(500);
    const body = (await res.json()) as {
      error: { code: string; retryable: boolean; message: string };
    };
    expect(body.error).toMatchObject({ code: 'unavailable', retryable: true });
    expect(body.error.message).not.toMatch(/injected|stack|Error:/);
  });
});
