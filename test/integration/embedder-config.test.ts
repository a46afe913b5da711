/**
 * Choosing the embedding model by settings: the embedded default (`GROUNDWORK_EMBEDDER`,
 * `GROUNDWORK_EMBED_*`) and the Lambdas (`EMBEDDING_PROVIDER`, `EMBEDDING_*`) build the same
 * adapters, and an index built through an OpenAI-compatible server at its own dimension (768)
 * answers vector searches on both databases.
 */
import type { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { embedderFromEnv as lambdaEmbedderFromEnv } from '../../lambdas/adapters/aws/embedder-from-env';
import { lambdaEnvSchema, parseEnv } from '../../lambdas/adapters/aws/lambda-env';
import type { Database } from '../../lambdas/adapters/postgres/database';
import { ensureEmbeddingModel } from '../../lambdas/adapters/postgres/embedding-guard';
import { createSearchRepository } from '../../lambdas/adapters/postgres/search-repository';
import { ConfigError } from '../../lambdas/core/errors';
import { createSearch } from '../../lambdas/core/retrieval/search';
import { loadLocalEnv, stackOptionsFromEnv } from '../../local/config';
import { ENGINES, openTestDatabase } from '../support/databases';
import {
  startFakeOpenAiEmbeddings,
  type FakeEmbeddingsServer,
} from '../support/fake-openai-embeddings';
import { seedDocuments } from '../support/seed';

const LAMBDA_BASE = {
  AWS_REGION: 'eu-west-1',
  DB_SECRET_ARN: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:db',
};

let fake: FakeEmbeddingsServer;
beforeAll(async () => {
  fake = await startFakeOpenAiEmbeddings();
});
afterEach(() => fake.reset());
afterAll(() => fake.close());

function noBedrock(): BedrockRuntimeClient {
  throw new Error('the Bedrock client must not be created for this provider');
}

describe('embedding model settings', () => {
  it('the embedded default selects the OpenAI-compatible embedder with GROUNDWORK_EMBED_*', async () => {
    const options = await stackOptionsFromEnv(
      loadLocalEnv({
        GROUNDWORK_EMBEDDER: 'openai',
        GROUNDWORK_EMBED_BASE_URL: fake.url,
        GROUNDWORK_EMBED_MODEL_ID: 'nomic-embed-text',
        GROUNDWORK_EMBED_DIMENSION: '768',
        GROUNDWORK_EMBED_API_KEY: 'local-key',
        GROUNDWORK_EMBED_BATCH_SIZE: '2',
        GROUNDWORK_EMBED_QUERY_PREFIX: 'search_query: ',
      }),
    );
    const embedder = options.embedder!;

    await embedder.embed(['a', 'b', 'c']);
    await embedder.embed(['q'], 'query');

    expect(embedder.modelId).toBe('openai/nomic-embed-text/768');
    expect(fake.requests.map((r) => (r.body as { input: string[] }).input)).toEqual([
      ['a', 'b'],
      ['c'],
      ['search_query: q'],
    ]);
    expect(fake.requests[0]?.headers.authorization).toBe('Bearer local-key');
  });

  it('the embedded default keeps its local model unless told otherwise', async () => {
    expect(await stackOptionsFromEnv(loadLocalEnv({}))).not.toHaveProperty('embedder');
  });

  it('the embedded default names the variables an openai embedder is missing', async () => {
    await expect(
      stackOptionsFromEnv(
        loadLocalEnv({ GROUNDWORK_EMBEDDER: 'openai', GROUNDWORK_EMBED_MODEL_ID: 'm' }),
      ),
    ).rejects.toThrow(
      /needs GROUNDWORK_EMBED_BASE_URL, GROUNDWORK_EMBED_MODEL_ID and GROUNDWORK_EMBED_DIMENSION/,
    );
    expect(() => loadLocalEnv({ GROUNDWORK_EMBED_BATCH_SIZE: 'many' })).toThrow(
      /GROUNDWORK_EMBED_BATCH_SIZE/,
    );
    expect(() => loadLocalEnv({ GROUNDWORK_EMBED_BASE_URL: 'ftp://x/v1' })).toThrow(
      /GROUNDWORK_EMBED_BASE_URL/,
    );
  });

  it('a Lambda selects the OpenAI-compatible embedder with EMBEDDING_PROVIDER=openai', async () => {
    const env = parseEnv(lambdaEnvSchema, {
      ...LAMBDA_BASE,
      EMBEDDING_PROVIDER: 'openai',
      EMBEDDING_BASE_URL: fake.url,
      EMBEDDING_MODEL_ID: 'text-embedding-3-small',
      EMBEDDING_DIMENSION: '512',
      EMBEDDING_SEND_DIMENSIONS: 'true',
    });
    fake.setModel({ nativeDimension: 1536 });
    const embedder = lambdaEmbedderFromEnv(env, noBedrock);

    const [vector] = await embedder.embed(['hello']);

    expect(embedder.modelId).toBe('openai/text-embedding-3-small/512');
    expect(vector).toHaveLength(512);
    expect(fake.requests[0]?.body).toMatchObject({ dimensions: 512 });
  });

  it('a Lambda keeps Titan v2 at 512 dimensions by default and refuses a size Titan lacks', () => {
    const titan = lambdaEmbedderFromEnv(
      parseEnv(lambdaEnvSchema, LAMBDA_BASE),
      () => ({}) as BedrockRuntimeClient,
    );
    expect(titan.modelId).toBe('amazon.titan-embed-text-v2:0/512');

    const env = parseEnv(lambdaEnvSchema, { ...LAMBDA_BASE, EMBEDDING_DIMENSION: '768' });
    expect(() => lambdaEmbedderFromEnv(env, () => ({}) as BedrockRuntimeClient)).toThrow(
      ConfigError,
    );
    expect(() => lambdaEmbedderFromEnv(env, () => ({}) as BedrockRuntimeClient)).toThrow(
      /EMBEDDING_DIMENSION must be 256, 512 or 1024/,
    );
    expect(() =>
      parseEnv(lambdaEnvSchema, { ...LAMBDA_BASE, EMBEDDING_PROVIDER: 'ollama' }),
    ).toThrow(/EMBEDDING_PROVIDER/);
  });
});

describe.each(ENGINES)('an index built with an OpenAI-compatible model on %s', (engine) => {
  let db: Database;
  beforeEach(async () => {
    db = await openTestDatabase(engine);
  });
  afterEach(() => db?.close());

  it('fits the columns to 768 dimensions and finds a document by vector search', async () => {
    const embedder = (
      await stackOptionsFromEnv(
        loadLocalEnv({
          GROUNDWORK_EMBEDDER: 'openai',
          GROUNDWORK_EMBED_BASE_URL: fake.url,
          GROUNDWORK_EMBED_MODEL_ID: 'nomic-embed-text',
          GROUNDWORK_EMBED_DIMENSION: '768',
        }),
      )
    ).embedder!;
    await ensureEmbeddingModel(db, embedder);
    const texts = [
      'Returns are accepted within 30 days.',
      'Parcels ship from Rotterdam daily.',
      'Warranty claims need the receipt.',
    ];
    const ids = await seedDocuments(
      db,
      embedder,
      texts.map((text, i) => ({ tenantId: 'acme', key: `acme/${i}`, texts: [text] })),
    );
    const search = createSearch({ store: createSearchRepository(db), embedder });

    // The fake's vectors are hashes of the text: only the identical text is near.
    const { hits } = await search.search(
      { tenantId: 'acme', userId: 'u' },
      { queryText: texts[1]!, topK: 3, mode: 'vector', filters: {} },
    );

    expect(hits[0]?.documentId).toBe(ids[1]);
    expect(hits[0]?.score).toBeGreaterThan(0.99);
    expect((fake.requests.at(-1)?.body as { input: string[] }).input).toEqual([texts[1]]);
  });
});
