/**
 * The OpenAI-compatible embedder over real HTTP against a local fake of `POST /v1/embeddings`:
 * request shape, batching, order, prefixes, retries, timeouts and the error mapping.
 */
import { ConfigError, UnavailableError, ValidationError } from '../../lambdas/core/errors';
import {
  createOpenAiCompatibleEmbedder,
  type OpenAiCompatibleEmbedderOptions,
} from '../../lambdas/adapters/embeddings/openai-compatible-embedder';
import {
  fakeOpenAiEmbedding,
  startFakeOpenAiEmbeddings,
  type FakeEmbeddingsServer,
} from '../support/fake-openai-embeddings';

let fake: FakeEmbeddingsServer;

function embedder(options: Partial<OpenAiCompatibleEmbedderOptions> = {}) {
  return createOpenAiCompatibleEmbedder({
    baseUrl: fake.url,
    model: 'nomic-embed-text',
    dimension: 768,
    retryDelayMs: 1,
    ...options,
  });
}

function inputs(): unknown[] {
  return fake.requests.map((request) => (request.body as { input: unknown }).input);
}

function norm(vector: number[]): number {
  return Math.sqrt(vector.reduce((sum, x) => sum + x * x, 0));
}

function expectVector(actual: number[] | undefined, expected: number[]): void {
  expect(actual).toHaveLength(expected.length);
  expect(actual!.every((x, i) => Math.abs(x - expected[i]!) < 1e-12)).toBe(true);
}

async function failure(promise: Promise<unknown>): Promise<Error> {
  return promise.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (err: unknown) => err as Error,
  );
}

beforeAll(async () => {
  fake = await startFakeOpenAiEmbeddings();
});

afterEach(() => {
  fake.reset();
});

afterAll(async () => {
  await fake.close();
});

describe('OpenAI-compatible embedder', () => {
  it('posts model and input to {baseUrl}/embeddings and returns unit vectors in input order', async () => {
    // The server lists vectors last first and does not normalise them; the spec allows both.
    fake.setModel({ reverseOrder: true, scale: 3, apiKey: 'sk-test' });
    const texts = ['first passage', 'second passage', 'third passage'];

    const vectors = await embedder({ apiKey: 'sk-test' }).embed(texts);

    expect(fake.requests).toHaveLength(1);
    const [request] = fake.requests;
    expect(request?.path).toBe('/v1/embeddings');
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.headers.authorization).toBe('Bearer sk-test');
    expect(request?.body).toEqual({ model: 'nomic-embed-text', input: texts });
    texts.forEach((text, i) => {
      expect(norm(vectors[i]!)).toBeCloseTo(1, 10);
      expectVector(vectors[i], fakeOpenAiEmbedding(text, 768));
    });
  });

  it('reports modelId with the model and dimension, and sends no key when none is set', async () => {
    const e = embedder();
    await e.embed(['x']);
    expect(e.modelId).toBe('openai/nomic-embed-text/768');
    expect(e.dimension).toBe(768);
    expect(fake.requests[0]?.headers.authorization).toBeUndefined();
  });

  it('cuts a batch to batchSize texts per request and keeps the order across requests', async () => {
    fake.setModel({ maxInputs: 4 });
    const texts = Array.from({ length: 10 }, (_, i) => `text number ${i}`);

    const vectors = await embedder({ batchSize: 4, concurrency: 2 }).embed(texts);

    expect(
      inputs()
        .map((input) => (input as string[]).length)
        .sort(),
    ).toEqual([2, 4, 4]);
    expect(inputs().flat().sort()).toEqual([...texts].sort());
    texts.forEach((text, i) => expectVector(vectors[i], fakeOpenAiEmbedding(text, 768)));
  });

  it('never has more requests in flight than the concurrency bound', async () => {
    fake.setBehaviour({ kind: 'succeed' }, { latencyMs: 200 });
    const texts = Array.from({ length: 12 }, (_, i) => `text ${i}`);

    await embedder({ batchSize: 2, concurrency: 3 }).embed(texts);

    expect(fake.requests).toHaveLength(6);
    expect(fake.maxInFlight).toBe(3);
  });

  it('surfaces the server batch limit as a ValidationError when batchSize exceeds it', async () => {
    fake.setModel({ maxInputs: 2 });

    const error = await failure(embedder({ batchSize: 3 }).embed(['a', 'b', 'c']));

    expect(error).toBeInstanceOf(ValidationError);
    expect(error.message).toMatch(/HTTP 400: 'input' : maximum 2 inputs per request, got 3/);
  });

  it('sends dimensions when asked, for models that shorten their vectors', async () => {
    fake.setModel({ nativeDimension: 1536 });

    const e = embedder({ model: 'text-embedding-3-small', dimension: 512, sendDimensions: true });
    const [vector] = await e.embed(['shorter']);

    expect(fake.requests[0]?.body).toEqual({
      model: 'text-embedding-3-small',
      input: ['shorter'],
      dimensions: 512,
    });
    expectVector(vector, fakeOpenAiEmbedding('shorter', 1536, 512));
    expect(e.modelId).toBe('openai/text-embedding-3-small/512');
  });

  it('refuses vectors of another size than configured with a ConfigError naming both', async () => {
    fake.setModel({ nativeDimension: 1024 });

    const error = await failure(embedder({ dimension: 768 }).embed(['x']));

    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toMatch(/dimension 1024, but the configured dimension is 768/);
  });

  it('prefixes queries and documents with the configured model prefixes', async () => {
    const e = embedder({ queryPrefix: 'search_query: ', documentPrefix: 'search_document: ' });

    const [doc] = await e.embed(['returns policy']);
    const [query] = await e.embed(['returns policy'], 'query');

    expect(inputs()).toEqual([
      ['search_document: returns policy'],
      ['search_query: returns policy'],
    ]);
    expectVector(doc, fakeOpenAiEmbedding('search_document: returns policy', 768));
    expectVector(query, fakeOpenAiEmbedding('search_query: returns policy', 768));
  });

  it.each([429, 500, 503])('retries HTTP %i and succeeds', async (status) => {
    fake.setBehaviour({ kind: 'fail', status, times: 2 });

    const [vector] = await embedder({ maxRetries: 2 }).embed(['eventually']);

    expect(fake.requests).toHaveLength(3);
    expectVector(vector, fakeOpenAiEmbedding('eventually', 768));
  });

  it('waits for a short Retry-After instead of its own backoff before retrying a 429', async () => {
    fake.setBehaviour({ kind: 'fail', status: 429, times: 1, retryAfterSeconds: 0.05 });

    // Its own first backoff would be 30-60 s, past this test's 10 s timeout.
    await embedder({ maxRetries: 1, retryDelayMs: 60_000 }).embed(['later']);

    expect(fake.requests).toHaveLength(2);
  }, 10_000);

  it('turns throttling that outlasts the retries into a retryable UnavailableError', async () => {
    fake.setBehaviour({ kind: 'always-fail', status: 429 });

    const error = await failure(embedder({ maxRetries: 2 }).embed(['always throttled']));

    expect(error).toBeInstanceOf(UnavailableError);
    expect((error as UnavailableError).retryable).toBe(true);
    expect(error.message).toMatch(/HTTP 429: Rate limit reached .*gave up after 3 attempts/);
    expect(fake.requests).toHaveLength(3);
  });

  it('times out a stalled attempt and retries it', async () => {
    fake.setBehaviour({ kind: 'stall', times: 1 });

    const [vector] = await embedder({ timeoutMs: 200, maxRetries: 1 }).embed(['slow once']);

    expect(fake.requests).toHaveLength(2);
    expectVector(vector, fakeOpenAiEmbedding('slow once', 768));
  });

  it('gives up on a server that never answers with an UnavailableError naming the timeout', async () => {
    fake.setBehaviour({ kind: 'stall', times: 100 });

    const error = await failure(embedder({ timeoutMs: 100, maxRetries: 1 }).embed(['never']));

    expect(error).toBeInstanceOf(UnavailableError);
    expect(error.message).toMatch(/did not answer within 100 ms \(gave up after 2 attempts\)/);
  });

  it('reports an unreachable server as a retryable UnavailableError', async () => {
    const closed = await startFakeOpenAiEmbeddings();
    await closed.close();
    const e = createOpenAiCompatibleEmbedder({
      baseUrl: closed.url,
      model: 'm',
      dimension: 8,
      maxRetries: 0,
    });

    const error = await failure(e.embed(['x']));

    expect(error).toBeInstanceOf(UnavailableError);
    expect(error.message).toMatch(
      /Embeddings call to m at http:\/\/127.0.0.1:\d+\/v1\/embeddings failed: .*ECONNREFUSED/,
    );
  });

  it.each([
    [401, ConfigError, /check the API key/],
    [404, ConfigError, /check the base URL and the model name/],
    [400, ValidationError, /HTTP 400/],
    [413, ValidationError, /HTTP 413/],
  ] as const)('maps HTTP %i to %p without retrying', async (status, type, message) => {
    fake.setBehaviour({ kind: 'always-fail', status });

    const error = await failure(embedder({ maxRetries: 3 }).embed(['x']));

    expect(error).toBeInstanceOf(type);
    expect(error.message).toMatch(message);
    expect(fake.requests).toHaveLength(1);
  });

  it('maps a wrong API key to a ConfigError', async () => {
    fake.setModel({ apiKey: 'sk-right' });

    const error = await failure(embedder({ apiKey: 'sk-wrong' }).embed(['x']));

    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toMatch(/HTTP 401: Incorrect API key provided/);
  });

  it.each([
    ['not-json', /not JSON/],
    ['missing-data', /malformed reply/],
    ['too-few', /returned 1 vectors for 2 inputs/],
  ] as const)('rejects a %s reply with an UnavailableError', async (reply, message) => {
    fake.setBehaviour({ kind: 'malformed', reply });

    const error = await failure(embedder().embed(['a', 'b']));

    expect(error).toBeInstanceOf(UnavailableError);
    expect(error.message).toMatch(message);
  });

  it('refuses an empty text before any request, and makes no request for an empty batch', async () => {
    await expect(embedder().embed(['fine', ' '])).rejects.toBeInstanceOf(ValidationError);
    await expect(embedder().embed([])).resolves.toEqual([]);
    expect(fake.requests).toHaveLength(0);
  });

  it.each([
    [{ baseUrl: 'not a url' }, /not a URL/],
    [{ baseUrl: 'ftp://host/v1' }, /http or https/],
    [{ dimension: 0 }, /dimension must be a whole number >= 1/],
    [{ batchSize: 1.5 }, /batchSize/],
    [{ timeoutMs: 0 }, /timeoutMs must be > 0/],
  ] as const)('refuses invalid options %p with a ConfigError', (options, message) => {
    expect(() => embedder(options)).toThrow(ConfigError);
    expect(() => embedder(options)).toThrow(message);
  });
});
