/**
 * Switching embedding models without downtime, end to end on both databases: a stack configured
 * with another model begins a switch and keeps serving the live model; documents ingested
 * meanwhile are re-embedded too; a crash halfway loses nothing; the restarted switch completes,
 * swaps in one step and leaves every chunk with the vector a fresh index would hold.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { Database } from '../../lambdas/adapters/postgres/database';
import { reconcileExactScanIndex } from '../../lambdas/adapters/postgres/exact-scan-index';
import { DEFAULT_CALIBRATION } from '../../lambdas/core/answer/confidence';
import { startLocalStack, type LocalStack } from '../../local/stack';
import { ENGINES, openTestDatabase, type EngineName } from '../support/databases';
import { createHashEmbedder } from '../support/hash-embedder';

process.env.POWERTOOLS_METRICS_DISABLED = 'true';

const DOCS: Record<string, string> = {
  'tenants/acme/refunds.md':
    '# Refunds\n\nRefunds are paid within fourteen days of the return. ' +
    'A refund goes back to the card that paid. Store credit is offered for late returns. '.repeat(
      4,
    ),
  'tenants/acme/shipping.md':
    '# Shipping\n\nParcels ship from the warehouse each weekday. ' +
    'Express shipping arrives the next day; standard shipping takes three days. '.repeat(4),
  'tenants/acme/security.md':
    '# Security\n\nPasswords are rotated every ninety days. ' +
    'Laptops use full disk encryption and lock after five idle minutes. '.repeat(4),
};
const LATE_KEY = 'tenants/acme/holidays.md';
const LATE_DOC =
  '# Holidays\n\nStaff take twenty five days of leave a year. ' +
  'Public holidays are added on top and carry over to the next year. '.repeat(3);

const SCOPE = { tenantId: 'acme', userId: 'u' };
/** Model A has a calibration of its own; model B has none (the uncalibrated gate). */
const CALIBRATED_A = { ...DEFAULT_CALIBRATION, high: 0.91, medium: 0.81 };
const ask = (stack: LocalStack) =>
  stack.answering.answer(SCOPE, {
    queryText: 'How long do refunds take?',
    filters: {},
    useMemory: true,
    memory: { limit: 3, tokenBudget: 500 },
    maxTokens: 300,
    temperature: 0,
    debug: false,
    greetings: false,
    onRetrievalFailure: 'fail',
  });
const query = (queryText: string) => ({ queryText, topK: 3, mode: 'vector', filters: {} }) as const;

describe.each(ENGINES)('embedding model switch on %s', (engine: EngineName) => {
  let dataDir: string;
  let freshDir: string;
  let db: Database | undefined;
  let freshDb: Database | undefined;
  const modelA = createHashEmbedder(512, 'test/model-a');
  const modelB = createHashEmbedder(256, 'test/model-b');

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'gw-switch-'));
    freshDir = await mkdtemp(path.join(os.tmpdir(), 'gw-switch-fresh-'));
    // PostgreSQL is shared by every process of the test; PGlite lives in the data folder.
    db = engine === 'postgres' ? await openTestDatabase('postgres') : undefined;
    freshDb = engine === 'postgres' ? await openTestDatabase('postgres') : undefined;
  });
  afterAll(async () => {
    await db?.close();
    await freshDb?.close();
    await rm(dataDir, { recursive: true, force: true });
    await rm(freshDir, { recursive: true, force: true });
  });

  const start = (
    embedder: typeof modelA,
    extra: Parameters<typeof startLocalStack>[0] = {},
    dir = dataDir,
    database = db,
  ) =>
    startLocalStack({
      dataDir: dir,
      ...(database ? { db: database } : {}),
      embedder,
      // The live model of a switch, built from the index's record as a real process would.
      recordedEmbedder: async (record) => {
        if (record.modelId === modelA.modelId) return modelA;
        throw new Error(`unexpected recorded model ${record.modelId}`);
      },
      logLevel: 'SILENT',
      ingestion: { chunking: { targetTokens: 24, overlapTokens: 0 } },
      answer: { calibrationByModel: { 'test/model-a': CALIBRATED_A } },
      ...extra,
    });

  const put = (stack: LocalStack, key: string, body: string) =>
    stack.s3.client.send(new PutObjectCommand({ Bucket: stack.s3.bucket, Key: key, Body: body }));

  const vectors = async (stack: LocalStack) =>
    (
      await stack.db.query<{ source_uri: string; chunk_index: number; embedding: string }>(
        `SELECT d.source_uri, c.chunk_index, c.embedding::text AS embedding
           FROM chunks c JOIN documents d ON d.id = c.document_id
          ORDER BY d.source_uri, c.chunk_index`,
      )
    ).rows;

  const embeddingColumns = async (stack: LocalStack) =>
    (
      await stack.db.query<{ table: string; column: string; type: string; not_null: boolean }>(
        `SELECT c.relname AS table, a.attname AS column,
                format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS not_null
           FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
          WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r'
            AND a.attnum > 0 AND NOT a.attisdropped AND a.atttypid IN ('vector'::regtype, 'halfvec'::regtype)
          ORDER BY 1, 2`,
      )
    ).rows;

  it('serves the live model during the switch, survives a crash halfway, then swaps', async () => {
    // The index as model A built it.
    const first = await start(modelA);
    for (const [key, body] of Object.entries(DOCS)) await put(first, key, body);
    await first.queue.idle();
    const chunkCount = (await vectors(first)).length;
    expect(chunkCount).toBeGreaterThan(6);
    await first.stop();

    // Model B configured: the switch begins; this process re-embeds only when told to.
    const second = await start(modelB, { modelSwitch: { background: false, batchChunks: 3 } });
    const began = await second.modelSwitch.status();
    expect(began.live?.modelId).toBe('test/model-a');
    expect(began.target?.modelId).toBe('test/model-b');
    expect(began.chunksDone).toBe(0);
    expect(began.chunksTotal).toBe(chunkCount);
    expect(second.embedder.modelId).toBe('test/model-a');

    expect(await second.modelSwitch.step()).toBe(3);
    // Search during the switch: the query is embedded by model A, and finds model A's vectors.
    const aCalls = modelA.calls;
    const bCalls = modelB.calls;
    const during = await second.search.search(SCOPE, query('How long do refunds take?'));
    expect(during.hits[0]?.sourceUri).toMatch(/refunds\.md$/);
    expect(modelA.calls).toBe(aCalls + 1);
    expect(modelB.calls).toBe(bCalls);
    // Answers gate with the live model's calibration, and remember with its vectors.
    const answered = await ask(second);
    expect(answered.thresholds).toEqual({ high: 0.91, medium: 0.81 });
    expect(modelB.calls).toBe(bCalls);

    // A document ingested during the switch is written with the live model...
    await put(second, LATE_KEY, LATE_DOC);
    await second.queue.idle();
    const late = await second.db.query<{ embedding_model: string; status: string }>(
      'SELECT embedding_model, status FROM documents WHERE source_uri LIKE $1',
      ['%holidays.md'],
    );
    expect(late.rows).toEqual([{ embedding_model: 'test/model-a', status: 'indexed' }]);
    const withLate = (await vectors(second)).length;
    expect(withLate).toBeGreaterThan(chunkCount);

    // ...and a crash halfway: the embedding call of a batch fails, its transaction is lost.
    expect(await second.modelSwitch.step()).toBe(3);
    modelB.failNext = 1;
    await expect(second.modelSwitch.step()).rejects.toThrow(/injected/);
    const halfway = await second.modelSwitch.status();
    expect(halfway.chunksDone).toBe(6);
    expect(halfway.chunksTotal).toBe(withLate);
    // Nothing swapped yet: chunks still lack their next vector.
    expect(await second.modelSwitch.finish()).toBe('pending');
    await second.stop();

    // The restarted process continues in the background; its first batch fails (the model is
    // down), so it answers with model A's gate until the retry completes the switch.
    modelB.failNext = 1;
    const third = await start(modelB, {
      modelSwitch: { pauseMs: 0, batchChunks: 4 },
      exactScanIndex: true,
    });
    expect(await reconcileExactScanIndex(third.db, true)).toBe('kept');
    expect((await ask(third)).thresholds).toEqual({ high: 0.91, medium: 0.81 });
    await expect(third.switchJob).resolves.toBe('switched');
    expect(modelB.failNext).toBe(0);
    const after = await third.modelSwitch.status();
    expect(after.target).toBeNull();
    expect(after.live?.modelId).toBe('test/model-b');
    expect(third.embedder.modelId).toBe('test/model-b');

    const bBefore = modelB.calls;
    const aBefore = modelA.calls;
    const afterSearch = await third.search.search(SCOPE, query('How long do refunds take?'));
    expect(afterSearch.hits[0]?.sourceUri).toMatch(/refunds\.md$/);
    expect(modelB.calls).toBe(bBefore + 1);
    expect(modelA.calls).toBe(aBefore);
    // Same process: the gate is now the uncalibrated one of a model without a calibration, and
    // memory uses model B.
    const answeredAfter = await ask(third);
    expect(answeredAfter.thresholds).toEqual({
      high: DEFAULT_CALIBRATION.high,
      medium: DEFAULT_CALIBRATION.medium,
    });
    expect(modelA.calls).toBe(aBefore);

    // One live column per table, at the new dimension, with its HNSW index under its name.
    expect(await embeddingColumns(third)).toEqual([
      { table: 'chunks', column: 'embedding', type: 'halfvec(256)', not_null: true },
      { table: 'messages', column: 'embedding', type: 'vector(256)', not_null: false },
    ]);
    const index = await third.db.query<{ def: string }>(
      `SELECT pg_get_indexdef(i.indexrelid) AS def FROM pg_index i
         JOIN pg_class c ON c.oid = i.indexrelid
        WHERE c.relname = 'chunks_embedding_hnsw_idx' AND c.relnamespace = current_schema()::regnamespace`,
    );
    // The graph is built with the live index's options (migrations/0021).
    expect(index.rows[0]?.def).toMatch(
      /USING hnsw \(embedding halfvec_cosine_ops\) WITH \((m='16', )?ef_construction='128'/,
    );
    const models = await third.db.query<{ embedding_model: string }>(
      'SELECT DISTINCT embedding_model FROM documents',
    );
    expect(models.rows).toEqual([{ embedding_model: 'test/model-b' }]);
    // The swap dropped the exact-scan index with model A's column.
    expect(await reconcileExactScanIndex(third.db, false)).toBe('absent');
    const switched = await vectors(third);
    await third.stop();

    // Every chunk holds exactly the vector a fresh index of model B holds.
    const fresh = await start(modelB, {}, freshDir, freshDb);
    for (const [key, body] of Object.entries({ ...DOCS, [LATE_KEY]: LATE_DOC }))
      await put(fresh, key, body);
    await fresh.queue.idle();
    const expected = await vectors(fresh);
    await fresh.stop();
    expect(switched).toHaveLength(expected.length);
    expect(
      switched.map((r) => [r.source_uri.split('/').pop(), r.chunk_index, r.embedding]),
    ).toEqual(expected.map((r) => [r.source_uri.split('/').pop(), r.chunk_index, r.embedding]));

    // The next start with model B finds nothing to switch, and builds the exact-scan index that
    // the swap dropped with model A's column again, for model B's.
    const fourth = await start(modelB, { exactScanIndex: true });
    await expect(fourth.switchJob).resolves.toBeUndefined();
    expect(await reconcileExactScanIndex(fourth.db, true)).toBe('kept');
    await fourth.stop();
  });

  it('configuring the live model again cancels a switch in progress', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'gw-switch-cancel-'));
    const database = engine === 'postgres' ? await openTestDatabase('postgres') : undefined;
    try {
      const first = await start(modelA, {}, dir, database);
      await put(first, 'tenants/acme/refunds.md', DOCS['tenants/acme/refunds.md']!);
      await first.queue.idle();
      await first.stop();
      const switching = await start(modelB, { modelSwitch: { background: false } }, dir, database);
      await switching.modelSwitch.step();
      await switching.stop();

      const back = await start(modelA, {}, dir, database);
      const status = await back.modelSwitch.status();
      expect(status.target).toBeNull();
      expect(status.live?.modelId).toBe('test/model-a');
      expect((await embeddingColumns(back)).map((c) => `${c.column} ${c.type}`)).toEqual([
        'embedding halfvec(512)',
        'embedding vector(512)',
      ]);
      const { hits } = await back.search.search(SCOPE, query('refunds'));
      expect(hits[0]?.sourceUri).toMatch(/refunds\.md$/);
      await back.stop();
    } finally {
      await database?.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
