/**
 * Cohere on Bedrock through the real AWS SDK client against the local fake of the Bedrock
 * Runtime API: Embed v3 (English and multilingual, `search_document` / `search_query`, 96 texts
 * per call, 2,048 characters per text), Titan v2 at each output size chosen by settings, and
 * Command R answering through the same Converse adapter as every other Bedrock model.
 */
import { InvokeModelCommand, type BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { embedderFromEnv } from '../../lambdas/adapters/aws/embedder-from-env';
import { lambdaEnvSchema, parseEnv } from '../../lambdas/adapters/aws/lambda-env';
import { createCohereEmbedder } from '../../lambdas/adapters/embeddings/bedrock-embedder';
import { createBedrockRuntimeClient } from '../../lambdas/adapters/embeddings/bedrock-runtime-client';
import { createBedrockLlm } from '../../lambdas/adapters/llm/bedrock-converse';
import type { GenerationEvent } from '../../lambdas/core/answer/llm';
import { ConfigError, UnavailableError, ValidationError } from '../../lambdas/core/errors';
import {
  fakeCohereEmbedding,
  fakeTitanEmbedding,
  startFakeBedrock,
  type FakeBedrock,
} from '../support/fake-bedrock';

const ENGLISH = 'cohere.embed-english-v3';
const MULTILINGUAL = 'cohere.embed-multilingual-v3';
const COMMAND_R = 'cohere.command-r-v1:0';

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

type CohereBody = { texts: string[]; input_type: string; truncate?: string };

function bodies(): CohereBody[] {
  return fake.requests.map((request) => request.body as CohereBody);
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
  fake = await startFakeBedrock();
});

afterEach(() => {
  fake.reset();
});

afterAll(async () => {
  for (const created of clients) created.destroy();
  await fake.close();
});

describe('Cohere Embed v3 on Bedrock', () => {
  it('embeds documents with input_type search_document, in one call, vectors in order', async () => {
    const embedder = createCohereEmbedder({ client: client() });
    const texts = ['first passage', 'second passage', 'third passage'];

    const vectors = await embedder.embed(texts);

    expect(embedder.modelId).toBe(`${ENGLISH}/1024`);
    expect(embedder.dimension).toBe(1024);
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]?.path).toBe(`/model/${ENGLISH}/invoke`);
    expect(fake.requests[0]?.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 /);
    expect(bodies()).toEqual([{ texts, input_type: 'search_document', truncate: 'END' }]);
    texts.forEach((text, i) =>
      expectVector(vectors[i], fakeCohereEmbedding(text, 'search_document')),
    );
  });

  it('embeds queries with input_type search_query, which gives another vector', async () => {
    const embedder = createCohereEmbedder({ client: client(), modelId: MULTILINGUAL });

    const [query] = await embedder.embed(['Wo ist mein Paket?'], 'query');
    const [document] = await embedder.embed(['Wo ist mein Paket?'], 'document');

    expect(embedder.modelId).toBe(`${MULTILINGUAL}/1024`);
    expect(fake.requests.map((r) => r.modelId)).toEqual([MULTILINGUAL, MULTILINGUAL]);
    expect(bodies().map((b) => b.input_type)).toEqual(['search_query', 'search_document']);
    expectVector(query, fakeCohereEmbedding('Wo ist mein Paket?', 'search_query'));
    expect(query).not.toEqual(document);
  });

  it('sends at most 96 texts per call and keeps the order across calls', async () => {
    const embedder = createCohereEmbedder({ client: client(), concurrency: 2 });
    const texts = Array.from({ length: 200 }, (_, i) => `chunk number ${i}`);

    const vectors = await embedder.embed(texts);

    expect(
      bodies()
        .map((b) => b.texts.length)
        .sort((a, b) => a - b),
    ).toEqual([8, 96, 96]);
    expect(vectors).toHaveLength(200);
    texts.forEach((text, i) =>
      expectVector(vectors[i], fakeCohereEmbedding(text, 'search_document')),
    );
  });

  it('the fake refuses 97 texts and texts over 2,048 characters, as Bedrock does', async () => {
    const invoke = (body: unknown) =>
      client(1).send(
        new InvokeModelCommand({
          modelId: ENGLISH,
          contentType: 'application/json',
          body: JSON.stringify(body),
        }),
      );

    await expect(
      invoke({ texts: Array(97).fill('x'), input_type: 'search_document' }),
    ).rejects.toMatchObject({ name: 'ValidationException' });
    await expect(
      invoke({ texts: ['y'.repeat(2049)], input_type: 'search_document' }),
    ).rejects.toMatchObject({ name: 'ValidationException' });
    await expect(invoke({ texts: ['z'] })).rejects.toMatchObject({ name: 'ValidationException' });
  });

  it('clips a text to 2,048 characters instead of failing the batch', async () => {
    const long = `${'word '.repeat(600)}`;
    const embedder = createCohereEmbedder({ client: client() });

    const [vector] = await embedder.embed([long]);

    expect(bodies()[0]?.texts[0]).toBe(long.slice(0, 2048));
    expectVector(vector, fakeCohereEmbedding(long.slice(0, 2048), 'search_document'));
  });

  it('succeeds after throttling, retried by the SDK, and gives up with an UnavailableError', async () => {
    fake.setBehaviour({ kind: 'throttle', times: 1 });
    await expect(createCohereEmbedder({ client: client(2) }).embed(['a'])).resolves.toHaveLength(1);
    expect(fake.requests).toHaveLength(2);

    fake.setBehaviour({ kind: 'always-throttle' });
    const error = await failure(createCohereEmbedder({ client: client(2) }).embed(['b']));
    expect(error).toBeInstanceOf(UnavailableError);
    expect(error.message).toMatch(/throttling cohere.embed-english-v3/);
  });

  it.each([
    ['missing-embedding', /malformed embedding reply/],
    ['wrong-dimension', /dimension 512 .* expected 1024/],
    ['not-json', /not JSON/],
  ] as const)('rejects a %s reply with an UnavailableError', async (reply, message) => {
    fake.setBehaviour({ kind: 'malformed', reply });

    const error = await failure(createCohereEmbedder({ client: client() }).embed(['anything']));

    expect(error).toBeInstanceOf(UnavailableError);
    expect(error.message).toMatch(message);
  });

  it('refuses an empty text before any call, and a batch size over 96 at construction', async () => {
    await expect(
      createCohereEmbedder({ client: client() }).embed(['fine', '']),
    ).rejects.toBeInstanceOf(ValidationError);
    expect(fake.requests).toHaveLength(0);
    expect(() => createCohereEmbedder({ client: client(), batchSize: 97 })).toThrow(ConfigError);
    expect(() =>
      createCohereEmbedder({ client: client(), modelId: 'amazon.titan-embed-text-v2:0' }),
    ).toThrow(/not a Cohere Embed model/);
  });
});

describe('Bedrock embedding models chosen by settings', () => {
  const BASE = {
    AWS_REGION: 'us-east-1',
    DB_SECRET_ARN: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:db',
  };

  it('EMBEDDING_MODEL_ID=cohere.embed-multilingual-v3 selects Cohere Embed at 1,024 dimensions', async () => {
    const embedder = embedderFromEnv(
      parseEnv(lambdaEnvSchema, { ...BASE, EMBEDDING_MODEL_ID: MULTILINGUAL }),
      () => client(),
    );

    await embedder.embed(['hola'], 'query');

    expect(embedder.modelId).toBe(`${MULTILINGUAL}/1024`);
    expect(bodies()).toEqual([{ texts: ['hola'], input_type: 'search_query', truncate: 'END' }]);
    expect(() =>
      embedderFromEnv(
        parseEnv(lambdaEnvSchema, {
          ...BASE,
          EMBEDDING_MODEL_ID: ENGLISH,
          EMBEDDING_DIMENSION: '512',
        }),
        () => client(),
      ),
    ).toThrow(/EMBEDDING_DIMENSION must be 1024 \(or unset\) for cohere.embed-english-v3/);
  });

  it.each([256, 512, 1024])(
    'EMBEDDING_DIMENSION=%i asks Titan v2 for that size',
    async (dimension) => {
      const embedder = embedderFromEnv(
        parseEnv(lambdaEnvSchema, { ...BASE, EMBEDDING_DIMENSION: String(dimension) }),
        () => client(),
      );

      const [vector] = await embedder.embed(['sized']);

      expect(embedder.modelId).toBe(`amazon.titan-embed-text-v2:0/${dimension}`);
      expect(fake.requests[0]?.body).toEqual({
        inputText: 'sized',
        dimensions: dimension,
        normalize: true,
      });
      expectVector(vector, fakeTitanEmbedding('sized', dimension));
    },
  );
});

describe('Cohere Command R through the Converse adapter', () => {
  const REQUEST = {
    system: 'Answer only from the context. <context>Parcels ship from Rotterdam.</context>',
    messages: [{ role: 'user' as const, content: 'Where do parcels ship from?' }],
    maxTokens: 200,
    temperature: 0.1,
  };
  const ANSWER = 'Parcels ship from Rotterdam [1].';

  it('generates an answer with the Converse request every Bedrock model takes', async () => {
    fake.setAnswer({ text: ANSWER });
    const llm = createBedrockLlm({ client: client(), modelId: COMMAND_R });

    const generation = await llm.generate(REQUEST);

    expect(llm.modelId).toBe(`bedrock/${COMMAND_R}`);
    expect(generation.text).toBe(ANSWER);
    expect(generation.stopReason).toBe('end_turn');
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]?.path).toBe(`/model/${encodeURIComponent(COMMAND_R)}/converse`);
    expect(fake.requests[0]?.body).toEqual({
      system: [{ text: REQUEST.system }],
      messages: [{ role: 'user', content: [{ text: REQUEST.messages[0]!.content }] }],
      inferenceConfig: { maxTokens: 200, temperature: 0.1 },
    });
  });

  it('streams the answer through ConverseStream', async () => {
    fake.setAnswer({ text: ANSWER });
    const llm = createBedrockLlm({ client: client(), modelId: COMMAND_R });

    const events: GenerationEvent[] = [];
    for await (const event of llm.stream(REQUEST)) events.push(event);

    expect(fake.requests[0]?.operation).toBe('converse-stream');
    expect(fake.requests[0]?.modelId).toBe(COMMAND_R);
    expect(events.flatMap((e) => (e.type === 'delta' ? [e.text] : [])).join('')).toBe(ANSWER);
    expect(events.at(-1)).toMatchObject({ type: 'done', stopReason: 'end_turn' });
  });
});
