/**
 * Filter indexes (migrations/0026, filter-indexes.ts) on both databases: each chunk's copy of its
 * declared values follows its metadata through every write, a filter `equals` on a declared value
 * reads the value's graph and lexeme indexes and returns what the full filter returns, and the
 * declarations reconcile: added, finished after an interruption, built again when an index is
 * gone, removed.
 */
import type { Database } from '../../lambdas/adapters/postgres/database';
import {
  listFilterIndexes,
  reconcileFilterIndexes,
} from '../../lambdas/adapters/postgres/filter-indexes';
import {
  searchTransactionSettings,
  type SearchSqlOptions,
} from '../../lambdas/adapters/postgres/search-plan';
import { createSearchRepository } from '../../lambdas/adapters/postgres/search-repository';
import { buildSearchSql } from '../../lambdas/adapters/postgres/search-statement';
import type { MetadataFilter } from '../../lambdas/core/retrieval/filters';
import type { ScopeStatistics, SearchQuery } from '../../lambdas/core/retrieval/types';
import { createHashEmbedder } from '../support/hash-embedder';
import { ENGINES, openTestDatabase } from '../support/databases';
import { runExplained } from '../support/plan';
import { seedDocuments, seedWideChunks } from '../support/seed';

const TENANT = 'wide';
const BLUE = { key: 'team', value: 'blue' } as const;
const scope = { tenantId: TENANT, userId: 'u1', globalTenants: [] };

const query = (metadata: MetadataFilter): SearchQuery => ({
  text: 'refund policy',
  embedding: Array.from({ length: 512 }, (_, i) => Math.sin(i * 0.37)),
  topK: 10,
  mode: 'hybrid',
  filters: { metadata },
  minScore: 0,
  maxChunksPerSource: 10,
  allowedSourceTypes: null,
  fusion: { denseWeight: 0.5, candidates: 50 },
});

/** The wide path: no filtered scope read exactly, HNSW for the vector arm. */
const WIDE = { filteredDocumentsCap: 0, indexCrossover: 1 };

describe.each(ENGINES)('filter indexes on %s', (engine) => {
  let db: Database;

  /** Chunks whose copy disagrees with their metadata (the document's overlaid by their own). */
  async function disagreeing(): Promise<number> {
    const { rows } = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM chunks c JOIN documents d ON d.id = c.document_id
        WHERE coalesce(c.indexed_metadata @> $1::jsonb, false)
              <> ((d.metadata || c.metadata) @> $1::jsonb)`,
      [JSON.stringify({ team: 'blue' })],
    );
    return rows[0]!.n;
  }

  const copies = async (): Promise<number> =>
    (
      await db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM chunks WHERE indexed_metadata IS NOT NULL',
      )
    ).rows[0]!.n;

  /** The search's hits' ids and the names of the indexes its plan read. */
  async function search(
    metadata: MetadataFilter,
    statistics?: Partial<ScopeStatistics>,
    options: Partial<SearchSqlOptions> = WIDE,
  ): Promise<{ ids: string[]; indexes: string[]; scanChunks: number }> {
    const prepared = (await createSearchRepository(db).prepare(scope)).statistics;
    const stmt = buildSearchSql(scope, query(metadata), { ...prepared, ...statistics }, options);
    const { ids, scans } = await runExplained(
      db,
      stmt,
      searchTransactionSettings(50, stmt.scanChunks),
    );
    return { ids, indexes: scans.map((s) => s.index), scanChunks: stmt.scanChunks };
  }

  beforeAll(async () => {
    db = await openTestDatabase(engine);
    await seedWideChunks(db, TENANT, 1000);
    // 20 of the 100 documents are blue, marked by an update before any value is declared.
    await db.query(
      `UPDATE documents SET metadata = metadata || '{"team": "blue"}'
        WHERE tenant_id = $1 AND split_part(source_uri, '/', 5)::int % 5 = 0`,
      [TENANT],
    );
    // Chunks with metadata of their own: two of blue documents say red, two of others say blue.
    await db.query(
      `UPDATE chunks SET metadata = '{"team": "red"}' WHERE id IN (
         SELECT c.id FROM chunks c JOIN documents d ON d.id = c.document_id
          WHERE d.metadata @> '{"team": "blue"}' ORDER BY c.id LIMIT 2)`,
    );
    await db.query(
      `UPDATE chunks SET metadata = '{"team": "blue"}' WHERE id IN (
         SELECT c.id FROM chunks c JOIN documents d ON d.id = c.document_id
          WHERE NOT d.metadata ? 'team' ORDER BY c.id LIMIT 2)`,
    );
  }, 120_000);
  afterAll(() => db?.close());

  it('copies nothing while no value is declared', async () => {
    expect(await copies()).toBe(0);
    expect((await createSearchRepository(db).prepare(scope)).statistics.filterIndexes).toEqual([]);
  });

  it('adds a declared value: every chunk holding it gets its copy, and its index is built', async () => {
    const changes = await reconcileFilterIndexes(db, [BLUE]);
    expect(changes).toEqual({ added: [BLUE], removed: [], rebuilt: [] });
    // 200 chunks of blue documents, less the 2 that say red, and the 2 others that say blue.
    expect(await copies()).toBe(200);
    expect(await disagreeing()).toBe(0);
    const [state] = await listFilterIndexes(db);
    expect(state).toMatchObject({ ...BLUE, ready: true, served: true });
    // With the chunks its graph holds, which size the HNSW scan's ef_search.
    expect((await createSearchRepository(db).prepare(scope)).statistics.filterIndexes).toEqual([
      { ...BLUE, chunks: 200 },
    ]);
    // Declared again: nothing to do.
    expect(await reconcileFilterIndexes(db, [BLUE])).toEqual({
      added: [],
      removed: [],
      rebuilt: [],
    });
  });

  it("keeps the copies through ingestion, a document's metadata and a chunk's own", async () => {
    const [fresh] = await seedDocuments(db, createHashEmbedder(), [
      {
        tenantId: TENANT,
        key: 'wide/fresh',
        texts: ['Refund policy.', 'Two.'],
        metadata: BLUE_META,
      },
    ]);
    expect(await disagreeing()).toBe(0);
    expect(await copies()).toBe(202);
    await db.query(`UPDATE documents SET metadata = '{"team": "green"}' WHERE id = $1`, [fresh]);
    expect(await copies()).toBe(200);
    await db.query(`UPDATE documents SET metadata = '{"team": "blue", "x": 1}' WHERE id = $1`, [
      fresh,
    ]);
    await db.query(
      `UPDATE chunks SET metadata = '{"team": "red"}' WHERE document_id = $1 AND chunk_index = 0`,
      [fresh],
    );
    expect(await copies()).toBe(201);
    expect(await disagreeing()).toBe(0);
  });

  it.each<[string, MetadataFilter]>([
    ['equals', { equals: BLUE }],
    ['equals under andAll', { andAll: [{ equals: BLUE }, { notEquals: { key: 'x', value: 1 } }] }],
  ])(
    'serves %s on the value from its partial index, with the hits of the full filter',
    async (_, filter) => {
      const [state] = await listFilterIndexes(db);
      const served = await search(filter);
      const unserved = await search(filter, { filterIndexes: [] });
      const lexemes = state!.indexName.replace(/_hnsw$/, '_lexemes');
      expect(served.indexes).toEqual(expect.arrayContaining([state!.indexName, lexemes]));
      expect(unserved.indexes).not.toContain(state!.indexName);
      expect(unserved.indexes).not.toContain(lexemes);
      expect(served.ids).toHaveLength(10);
      expect(served.ids).toEqual(unserved.ids);
      // ef_search is sized by the value's graph (its 200 chunks when built), not the table.
      expect(served.scanChunks).toBe(200);
      expect(unserved.scanChunks).toBe(1002);
    },
  );

  it('reads the value from its indexes even where its scope would be read from its documents', async () => {
    const [state] = await listFilterIndexes(db);
    // The product's options: 20 documents are within the scope's cap.
    const served = await search({ equals: BLUE }, undefined, {});
    const unserved = await search({ equals: BLUE }, { filterIndexes: [] }, {});
    expect(served.indexes).toContain(state!.indexName);
    expect(unserved.indexes).not.toContain(state!.indexName);
    expect(served.ids).toEqual(unserved.ids);
  });

  it('leaves a filter that does not require the value to the whole graph', async () => {
    const [state] = await listFilterIndexes(db);
    const either = await search({
      orAll: [{ equals: BLUE }, { equals: { key: 'team', value: 'red' } }],
    });
    expect(either.indexes).not.toContain(state!.indexName);
    expect(either.ids).toHaveLength(10);
  });

  it('builds the index again when it is gone, and finishes an addition that stopped half way', async () => {
    const [state] = await listFilterIndexes(db);
    await db.query(`DROP INDEX ${state!.indexName}`);
    expect((await listFilterIndexes(db))[0]).toMatchObject({ ready: true, served: false });
    // Search goes back to the whole graph (a model switch drops the index with the old column).
    expect((await createSearchRepository(db).prepare(scope)).statistics.filterIndexes).toEqual([]);
    expect(await reconcileFilterIndexes(db, [BLUE])).toEqual({
      added: [],
      removed: [],
      rebuilt: [BLUE],
    });
    expect((await listFilterIndexes(db))[0]).toMatchObject({ served: true });

    // Stopped after the declaration: no index yet, so search does not rely on its copies.
    const red = { key: 'team', value: 'red' };
    await db.query(`INSERT INTO filter_indexes (key, value) VALUES ('team', '"red"')`);
    expect((await createSearchRepository(db).prepare(scope)).statistics.filterIndexes).toEqual([
      expect.objectContaining(BLUE),
    ]);
    const changes = await reconcileFilterIndexes(db, [BLUE, red]);
    expect(changes.added).toEqual([red]);
    expect((await listFilterIndexes(db)).map((s) => [s.value, s.ready, s.served])).toEqual([
      ['blue', true, true],
      ['red', true, true],
    ]);
    const { rows } = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM chunks WHERE indexed_metadata @> '{"team": "red"}'`,
    );
    expect(rows[0]!.n).toBe(3);
  });

  it('removes a value no longer declared: its index and its copies', async () => {
    const before = await listFilterIndexes(db);
    const changes = await reconcileFilterIndexes(db, []);
    expect(changes.removed).toHaveLength(2);
    expect(await listFilterIndexes(db)).toEqual([]);
    expect(await copies()).toBe(0);
    const { rows } = await db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM pg_class WHERE relname = ANY($1::text[])',
      [before.flatMap((s) => [s.indexName, s.indexName.replace(/_hnsw$/, '_lexemes')])],
    );
    expect(rows[0]!.n).toBe(0);
    // New chunks get no copy either.
    await seedDocuments(db, createHashEmbedder(), [
      { tenantId: TENANT, key: 'wide/later', texts: ['Three.'], metadata: BLUE_META },
    ]);
    expect(await copies()).toBe(0);
  });
});

const BLUE_META = { team: 'blue' };
