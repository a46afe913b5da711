/**
 * The Titan embedder through the real AWS SDK client (signing, retries, error parsing) against
 * a local fake of the Bedrock Runtime API.
 */
import type { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { ConfigError, UnavailableError, ValidationError } from '../../lambdas/core/errors';
import { createBedrockEmbedder } from '../../lambdas/adapters/embeddings/bedrock-embedder';
import { createBedrockRuntimeClient } from '../../lambdas/adapters/embeddings/bedrock-runtime-client';
import { fakeTitanEmbedding, startFakeBedrock, type FakeBedrock } from '../support/fake-bedrock';

const TITAN = 'amazon.titan-embed-text-v2:0';

let fake: FakeBedrock;
const clients: BedrockRuntimeClient[] = [];

function client(maxAttempts?: number): BedrockRuntimeClient {
  const created = createBedrockRuntimeClient({
    region: 'us-east-1',
    endpoint: fake.url,
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    ...(maxAttempts !== undefined ? { maxAttempts } : {}),
  });
  clients.push(created);
  return created;
}

function inputTexts(): string[] {
  return fake.requests.map((request) => (request.body as { inputText: string }).inputText);
}

function norm(vector: number[]): number {
  return Math.sqrt(vector.reduce((sum, x) => sum + x * x, 0));
}

beforeAll(async () => {
  fake = await startFakeBedrock();
});

afterEach(() => {
  fake.reset();
});

afterAll(async () => {
  for (const created of clients) created.destroy();
  await fake.close();
});

describe('Bedrock Titan v2 embedder', () => {
  it('sends inputText, dimensions and normalize to /model/{id}/invoke and returns vectors in order', async () => {
    const embedder = createBedrockEmbedder({ client: client() });
    const texts = ['first passage', 'second passage', 'third passage'];

    const vectors = await embedder.embed(texts);

    expect(embedder.modelId).toBe(`${TITAN}/512`);
    expect(embedder.dimension).toBe(512);
    expect(fake.requests).toHaveLength(3);
    for (const request of fake.requests) {
      expect(request.operation).toBe('invoke');
      expect(request.modelId).toBe(TITAN);
      expect(request.path).toBe(`/model/${encodeURIComponent(TITAN)}/invoke`);
      expect(request.headers['content-type']).toBe('application/json');
      expect(request.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=test\//);
    }
    expect(fake.requests.map((request) => request.body)).toEqual(
      expect.arrayContaining(
        texts.map((inputText) => ({ inputText, dimensions: 512, normalize: true })),
      ),
    );
    expect(vectors).toHaveLength(3);
    vectors.forEach((vector, i) => {
      expect(vector).toHaveLength(512);
      expect(norm(vector)).toBeCloseTo(1, 10);
      const expected = fakeTitanEmbedding(texts[i]!, 512);
      expect(vector.every((x, j) => Math.abs(x - expected[j]!) < 1e-12)).toBe(true);
    });
  });

  it('asks for the configured dimension and reports it in modelId', async () => {
    const embedder = createBedrockEmbedder({ client: client(), dimension: 256 });

    const [vector] = await embedder.embed(['short']);

    expect(embedder.modelId).toBe(`${TITAN}/256`);
    expect(vector).toHaveLength(256);
    expect(fake.requests[0]?.body).toEqual({
      inputText: 'short',
      dimensions: 256,
      normalize: true,
    });
  });

  it('never has more calls in flight than the concurrency bound, and keeps order', async () => {
    fake.setBehaviour({ kind: 'succeed' }, { latencyMs: 40 });
    const embedder = createBedrockEmbedder({ client: client(), concurrency: 3 });
    const texts = Array.from({ length: 12 }, (_, i) => `text number ${i}`);

    const vectors = await embedder.embed(texts);

    expect(fake.requests).toHaveLength(12);
    expect(fake.maxInFlight).toBe(3);
    vectors.forEach((vector, i) => {
      expect(vector[0]).toBeCloseTo(fakeTitanEmbedding(texts[i]!, 512)[0]!, 12);
    });
  });

  it('succeeds after two throttled attempts, retried by the SDK', async () => {
    fake.setBehaviour({ kind: 'throttle', times: 2 });
    const embedder = createBedrockEmbedder({ client: client(3) });

    const [vector] = await embedder.embed(['throttled at first']);

    expect(fake.requests).toHaveLength(3);
    expect(inputTexts()).toEqual(Array(3).fill('throttled at first'));
    expect(vector).toHaveLength(512);
  });

  it('turns throttling that outlasts the retries into a retryable UnavailableError', async () => {
    fake.setBehaviour({ kind: 'always-throttle' });
    const embedder = createBedrockEmbedder({ client: client(2) });
    const started = Date.now();

    const error: unknown = await embedder.embed(['always throttled']).catch((err: unknown) => err);

    expect(error).toBeInstanceOf(UnavailableError);
    expect((error as UnavailableError).retryable).toBe(true);
    expect((error as UnavailableError).message).toMatch(/throttling .* 2 attempts/);
    expect(fake.requests).toHaveLength(2);
    // One retry, backed off by the SDK (full jitter under a 1 s ceiling for throttling).
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it.each([
    ['missing-embedding', /malformed embedding reply/],
    ['wrong-dimension', /dimension 256 .* expected 512/],
    ['not-json', /not JSON/],
  ] as const)('rejects a %s reply with an UnavailableError', async (reply, message) => {
    fake.setBehaviour({ kind: 'malformed', reply });
    const embedder = createBedrockEmbedder({ client: client() });

    const error: unknown = await embedder.embed(['anything']).catch((err: unknown) => err);

    expect(error).toBeInstanceOf(UnavailableError);
    expect((error as Error).message).toMatch(message);
    expect(fake.requests).toHaveLength(1);
  });

  it('refuses an empty text with a ValidationError before calling Bedrock', async () => {
    const embedder = createBedrockEmbedder({ client: client() });

    await expect(embedder.embed(['fine', '  '])).rejects.toBeInstanceOf(ValidationError);
    expect(fake.requests).toHaveLength(0);
  });

  it('maps Bedrock validation and access errors to ValidationError and ConfigError', async () => {
    const embedder = createBedrockEmbedder({ client: client() });

    fake.setBehaviour({
      kind: 'error',
      status: 400,
      errorType: 'ValidationException',
      message: 'Too many input tokens',
    });
    await expect(embedder.embed(['long'])).rejects.toThrow(ValidationError);

    fake.setBehaviour({
      kind: 'error',
      status: 403,
      errorType: 'AccessDeniedException',
      message: "You don't have access to the model",
    });
    await expect(embedder.embed(['denied'])).rejects.toThrow(ConfigError);
  });

  it('returns no vectors and makes no call for an empty batch', async () => {
    const embedder = createBedrockEmbedder({ client: client() });

    await expect(embedder.embed([])).resolves.toEqual([]);
    expect(fake.requests).toHaveLength(0);
  });
});
