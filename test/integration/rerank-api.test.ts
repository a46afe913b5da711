/**
 * POST /api/rag/search through the local server with the rerank stage chosen by the embedded default's
 * settings (`GROUNDWORK_RERANKER=http`): the response says whether the reranker was applied or
 * the fused order kept.
 */
import type { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { lambdaEnvSchema, parseEnv } from '../../lambdas/adapters/aws/lambda-env';
import { rerankFromEnv } from '../../lambdas/adapters/rerank/rerank-factory';
import { DEFAULT_RERANK_SETTINGS } from '../../lambdas/core/retrieval/rerank';
import { startLocalApi, type LocalApi } from '../../local/api';
import { loadLocalEnv, rerankFromLocalEnv } from '../../local/config';
import { startLocalStack, type LocalStack } from '../../local/stack';
import { startFakeRerank, type FakeRerankServer } from '../support/fake-rerank';
import { createHashEmbedder } from '../support/hash-embedder';

process.env.POWERTOOLS_METRICS_DISABLED = 'true';

describe('POST /api/rag/search with a reranker from the settings', () => {
  let fake: FakeRerankServer;
  let stack: LocalStack;
  let api: LocalApi;
  let token: string;

  beforeAll(async () => {
    fake = await startFakeRerank();
    const rerank = await rerankFromLocalEnv(
      loadLocalEnv({
        GROUNDWORK_RERANKER: 'http',
        GROUNDWORK_RERANK_BASE_URL: fake.url,
        GROUNDWORK_RERANK_MODEL_ID: 'bge-reranker-v2-m3',
        GROUNDWORK_RERANK_CANDIDATES: '10',
        GROUNDWORK_RERANK_TIMEOUT_MS: '300',
      }),
    );
    stack = await startLocalStack({
      embedder: createHashEmbedder(),
      logLevel: 'SILENT',
      reranker: rerank.reranker,
      search: { rerank: rerank.settings },
    });
    api = await startLocalApi(stack);
    token = api.issuer.issueToken({ sub: 'alice', tenantId: 'acme' });
    const put = (key: string, body: string) =>
      stack.s3.client.send(new PutObjectCommand({ Bucket: stack.s3.bucket, Key: key, Body: body }));
    await put('tenants/acme/refunds.md', '# Refunds\n\nRefunds are issued within 14 days.');
    await put('tenants/acme/shipping.md', '# Shipping\n\nShipping takes three business days.');
    await stack.queue.idle();
  });
  afterEach(() => fake.reset());
  afterAll(async () => {
    await api?.close();
    await stack?.stop();
    await fake?.close();
  });

  const search = async () => {
    const res = await fetch(`${api.server.url}/api/rag/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query_text: 'how long do refunds take', top_k: 2 }),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as {
      results: { source_title: string }[];
      rerank?: { model: string; status: string; candidates: number };
    };
  };

  it('reports an applied rerank with its model and candidate count', async () => {
    const body = await search();

    expect(body.rerank).toMatchObject({
      model: 'rerank/bge-reranker-v2-m3',
      status: 'applied',
      candidates: 2,
    });
    expect(body.results[0]?.source_title).toBe('Refunds');
    expect(fake.requests).toHaveLength(1);
  });

  it('answers 200 in fused order and says the reranker timed out', async () => {
    fake.setBehaviour({ kind: 'stall' });

    const body = await search();

    expect(body.rerank).toMatchObject({ status: 'timed_out' });
    expect(body.results.map((r) => r.source_title)).toEqual(['Refunds', 'Shipping']);
  });

  it('answers 200 in fused order and says the reranker failed', async () => {
    fake.setBehaviour({ kind: 'always-fail', status: 503 });

    const body = await search();

    expect(body.rerank).toMatchObject({ status: 'failed' });
    expect(body.results).toHaveLength(2);
  });
});

describe('the Lambdas rerank settings', () => {
  const BASE = {
    AWS_REGION: 'us-east-1',
    DB_SECRET_ARN: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:db',
  };
  const noClient = () => ({}) as BedrockRuntimeClient;

  it('has no rerank stage by default', () => {
    const env = parseEnv(lambdaEnvSchema, BASE);
    expect(rerankFromEnv(env.RERANK_PROVIDER, env, 'RERANK_', { bedrockClient: noClient })).toEqual(
      {
        reranker: null,
        settings: DEFAULT_RERANK_SETTINGS,
      },
    );
  });

  it('selects a Bedrock rerank model with its candidate count and timeout', () => {
    const env = parseEnv(lambdaEnvSchema, {
      ...BASE,
      RERANK_PROVIDER: 'bedrock',
      RERANK_MODEL_ID: 'cohere.rerank-v3-5:0',
      RERANK_CANDIDATES: '40',
      RERANK_TIMEOUT_MS: '800',
    });
    const { reranker, settings } = rerankFromEnv(env.RERANK_PROVIDER, env, 'RERANK_', {
      bedrockClient: noClient,
    });
    expect(reranker?.modelId).toBe('bedrock/cohere.rerank-v3-5:0');
    expect(settings).toEqual({ candidates: 40, timeoutMs: 800 });
  });

  it('names the variables an http reranker is missing, and refuses a bad candidate count', () => {
    const env = parseEnv(lambdaEnvSchema, { ...BASE, RERANK_PROVIDER: 'http' });
    expect(() =>
      rerankFromEnv(env.RERANK_PROVIDER, env, 'RERANK_', { bedrockClient: noClient }),
    ).toThrow(/needs RERANK_BASE_URL and RERANK_MODEL_ID/);
    expect(() => parseEnv(lambdaEnvSchema, { ...BASE, RERANK_CANDIDATES: '0' })).toThrow(
      /RERANK_CANDIDATES/,
    );
  });
});
