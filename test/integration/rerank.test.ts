/**
 * The rerank stage after fusion, on both databases: a Cohere-style `/rerank` server and Bedrock's
 * Amazon and Cohere rerank models (through the real AWS SDK client), each a local fake speaking
 * the protocol. When the reranker fails or times out the fused order is kept and the result,
 * and POST /api/rag/search's response, say so.
 */
import type { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { createBedrockRuntimeClient } from '../../lambdas/adapters/embeddings/bedrock-runtime-client';
import type { Database } from '../../lambdas/adapters/postgres/database';
import { createSearchRepository } from '../../lambdas/adapters/postgres/search-repository';
import { createBedrockReranker } from '../../lambdas/adapters/rerank/bedrock-reranker';
import { createHttpReranker } from '../../lambdas/adapters/rerank/http-reranker';
import type { Reranker } from '../../lambdas/core/retrieval/rerank';
import { createSearch, type SearchRequest } from '../../lambdas/core/retrieval/search';
import { ENGINES, openTestDatabase } from '../support/databases';
import { startFakeBedrock, type FakeBedrock } from '../support/fake-bedrock';
import { fakeRerankResults, startFakeRerank, type FakeRerankServer } from '../support/fake-rerank';
import { createHashEmbedder } from '../support/hash-embedder';
import { seedDocuments } from '../support/seed';

const IDENTITY = { tenantId: 'acme', userId: 'u' };
const QUERY = 'how long do refunds take for damaged parcels';
const REQUEST: SearchRequest = { queryText: QUERY, topK: 3, mode: 'hybrid', filters: {} };

/** Notes sharing some of the query's words, in different measure, so rerank order is known. */
const NOTES = [
  'Refunds are paid within five days.',
  'Damaged parcels: refunds take ten days; how long depends on the carrier.',
  'Parcels ship daily from Rotterdam.',
  'Damaged goods are replaced, not refunded.',
  'Opening hours of the Rotterdam office.',
  'How long do parcels take? Two days in the Netherlands.',
  // Every query word, diluted in a long text: low in fused order, first for the reranker.
  'Claims handbook, chapter four, on every claim the warehouse sees in a year, from lost pallets ' +
    'and broken seals to mislabelled crates, customs holds, courier strikes, address errors, ' +
    'weather delays and missing signatures, with forms, deadlines, contacts and escalation paths ' +
    'for each region; it also says how long refunds for damaged parcels do take.',
];

let rerankServer: FakeRerankServer;
let bedrock: FakeBedrock;
const clients: BedrockRuntimeClient[] = [];

function bedrockClient(): BedrockRuntimeClient {
  const client = createBedrockRuntimeClient({
    region: 'us-east-1',
    endpoint: bedrock.url,
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    maxAttempts: 1,
  });
  clients.push(client);
  return client;
}

beforeAll(async () => {
  rerankServer = await startFakeRerank();
  bedrock = await startFakeBedrock();
});
afterEach(() => {
  rerankServer.reset();
  bedrock.reset();
});
afterAll(async () => {
  for (const client of clients) client.destroy();
  await rerankServer.close();
  await bedrock.close();
});

describe.each(ENGINES)('the rerank stage on %s', (engine) => {
  let db: Database;
  const embedder = createHashEmbedder();
  // The tests only read: one database, seeded once, per engine.
  beforeAll(async () => {
    db = await openTestDatabase(engine);
    await seedDocuments(
      db,
      embedder,
      NOTES.map((text, i) => ({ tenantId: 'acme', key: `acme/note-${i}`, texts: [text] })),
    );
  });
  afterAll(() => db?.close());

  function search(reranker: Reranker | null, rerank = { candidates: 10, timeoutMs: 2_000 }) {
    return createSearch({
      store: createSearchRepository(db),
      embedder,
      reranker,
      settings: { rerank },
    });
  }

  it('sends the fused candidates to /rerank and returns its top_k, best first', async () => {
    const fused = await search(null).search(IDENTITY, { ...REQUEST, topK: 10 });
    const reranker = createHttpReranker({
      baseUrl: rerankServer.url,
      model: 'bge-reranker-v2-m3',
      apiKey: 'k',
    });

    const result = await search(reranker).search(IDENTITY, REQUEST);

    const [request] = rerankServer.requests;
    expect(request?.headers.authorization).toBe('Bearer k');
    expect(request?.body).toEqual({
      model: 'bge-reranker-v2-m3',
      query: QUERY,
      documents: fused.hits.map((h) => h.text),
      top_n: 3,
    });
    const expected = fakeRerankResults(
      QUERY,
      fused.hits.map((h) => h.text),
      3,
    );
    expect(result.hits.map((h) => h.chunkId)).toEqual(
      expected.map((r) => fused.hits[r.index]!.chunkId),
    );
    expect(result.hits.map((h) => h.rerankScore)).toEqual(expected.map((r) => r.relevance_score));
    expect(result.rerank).toMatchObject({
      model: 'rerank/bge-reranker-v2-m3',
      status: 'applied',
      candidates: NOTES.length,
    });
    // The reranker changed the fused order (otherwise this test could not tell them apart).
    expect(result.hits.map((h) => h.chunkId)).not.toEqual(
      fused.hits.slice(0, 3).map((h) => h.chunkId),
    );
  });

  it.each([
    ['an HTTP 500', { kind: 'always-fail', status: 500 }, 'failed'],
    ['a malformed reply', { kind: 'malformed', reply: 'missing-results' }, 'failed'],
    ['an index past the candidates', { kind: 'malformed', reply: 'bad-index' }, 'failed'],
    ['a reranker that never answers', { kind: 'stall' }, 'timed_out'],
  ] as const)('keeps the fused order after %s and says so', async (_, behaviour, status) => {
    rerankServer.setBehaviour(behaviour);
    const fused = await search(null).search(IDENTITY, REQUEST);
    const reranker = createHttpReranker({ baseUrl: rerankServer.url, model: 'm' });

    const result = await search(reranker, { candidates: 10, timeoutMs: 300 }).search(
      IDENTITY,
      REQUEST,
    );

    expect(result.rerank).toMatchObject({ status, candidates: NOTES.length });
    expect(result.hits.map((h) => h.chunkId)).toEqual(fused.hits.map((h) => h.chunkId));
    expect(result.hits.every((h) => h.rerankScore === undefined)).toBe(true);
    expect(rerankServer.requests).toHaveLength(1);
  });

  it.each([
    ['amazon.rerank-v1:0', undefined],
    ['cohere.rerank-v3-5:0', 2],
  ])('reranks with Bedrock %s through InvokeModel', async (modelId, apiVersion) => {
    const fused = await search(null).search(IDENTITY, { ...REQUEST, topK: 10 });
    const reranker = createBedrockReranker({ client: bedrockClient(), modelId });

    const result = await search(reranker).search(IDENTITY, REQUEST);

    expect(bedrock.requests).toHaveLength(1);
    expect(bedrock.requests[0]?.path).toBe(`/model/${encodeURIComponent(modelId)}/invoke`);
    expect(bedrock.requests[0]?.body).toEqual({
      query: QUERY,
      documents: fused.hits.map((h) => h.text),
      top_n: 3,
      ...(apiVersion ? { api_version: apiVersion } : {}),
    });
    const expected = fakeRerankResults(
      QUERY,
      fused.hits.map((h) => h.text),
      3,
    );
    expect(result.hits.map((h) => h.chunkId)).toEqual(
      expected.map((r) => fused.hits[r.index]!.chunkId),
    );
    expect(result.rerank).toMatchObject({ model: `bedrock/${modelId}`, status: 'applied' });
  });

  it('keeps the fused order when Bedrock refuses the rerank call', async () => {
    bedrock.setBehaviour({
      kind: 'error',
      status: 403,
      errorType: 'AccessDeniedException',
      message: 'no access',
    });
    const fused = await search(null).search(IDENTITY, REQUEST);
    const reranker = createBedrockReranker({
      client: bedrockClient(),
      modelId: 'cohere.rerank-v3-5:0',
    });

    const result = await search(reranker).search(IDENTITY, REQUEST);

    expect(result.rerank).toMatchObject({
      status: 'failed',
      model: 'bedrock/cohere.rerank-v3-5:0',
    });
    expect(result.hits.map((h) => h.chunkId)).toEqual(fused.hits.map((h) => h.chunkId));
  });
});
