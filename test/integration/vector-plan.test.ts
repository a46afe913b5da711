/**
 * How the planner treats the search statement, on both databases. The vector arm's plan is
 * chosen from the scope's size: an exact scan of the scope's vectors for a small scope, the HNSW
 * index (tenant test hidden from the b-tree) for a large one; exactly one of the two runs, and
 * both return the same hits where the index is exact (tables this small). With the search
 * transaction's settings, a small table of realistic rows is still served by the index, and the
 * statement is never JIT-compiled.
 */
import type { Database } from '../../lambdas/adapters/postgres/database';
import {
  DEFAULT_SEARCH_SQL,
  searchTransactionSettings,
  type SearchSqlOptions,
} from '../../lambdas/adapters/postgres/search-plan';
import { createSearchRepository } from '../../lambdas/adapters/postgres/search-repository';
import { buildSearchSql } from '../../lambdas/adapters/postgres/search-statement';
import { createSearch } from '../../lambdas/core/retrieval/search';
import type { SearchQuery } from '../../lambdas/core/retrieval/types';
import { ENGINES, openTestDatabase } from '../support/databases';
import { createHashEmbedder } from '../support/hash-embedder';
import { explained, walk, type ExplainRow, type PlanNode } from '../support/plan';
import {
  FIXTURE_INDEX_CROSSOVER,
  largeAndSmallTenants,
  NOTE_TOPICS,
  seedDocuments,
  seedWideChunks,
  type SeedDoc,
} from '../support/seed';

const embedder = createHashEmbedder();
// 48 chunks in `large`, 2 in `small`: 48² ≥ 30 × 50 and 2² < 30 × 50 (FIXTURE_INDEX_CROSSOVER).
const DOCS = largeAndSmallTenants();

/** The store's query for a vector search of `text` (top 5, 100 candidates). */
async function storeQuery(text: string): Promise<SearchQuery> {
  const [embedding = []] = await embedder.embed([text]);
  return {
    text,
    embedding,
    topK: 5,
    mode: 'vector',
    filters: {},
    minScore: 0,
    maxChunksPerSource: 5,
    allowedSourceTypes: null,
    fusion: { denseWeight: 1, candidates: 100 },
  };
}

/**
 * The executed plan of the search statement for `query`, with the search transaction settings.
 * `generic`: the plan made without the parameters' values, as a routine's is (routines.ts), from
 * the statement prepared and executed with `plan_cache_mode = force_generic_plan`.
 */
async function explainSearch(
  db: Database,
  tenantId: string,
  query: SearchQuery,
  options: Partial<SearchSqlOptions> = {},
  extraSettings: Record<string, string | number> = {},
  generic = false,
): Promise<{ Plan: PlanNode; JIT?: unknown }> {
  const scope = { tenantId, userId: 'u1', globalTenants: [] };
  const { statistics } = await createSearchRepository(db).prepare(scope);
  const stmt = buildSearchSql(scope, query, statistics, options);
  type Explained = ExplainRow<{ Plan: PlanNode; JIT?: unknown }>;
  return db.transaction(
    async (tx) => {
      if (!generic)
        return explained(
          (await tx.query<Explained>(`EXPLAIN (ANALYZE, FORMAT JSON) ${stmt.text}`, stmt.values))
            .rows,
        );
      // EXECUTE takes no bind parameters: each value as the server quotes it.
      const args: string[] = [];
      for (const [i, value] of stmt.values.entries()) {
        const { rows } = await tx.query<{ literal: string }>(
          `SELECT quote_nullable($1::${stmt.types[i]}::text) AS literal`,
          [value],
        );
        args.push(`${rows[0]!.literal}::${stmt.types[i]}`);
      }
      await tx.query(`PREPARE gw_generic_plan(${stmt.types.join(', ')}) AS ${stmt.text}`);
      try {
        await tx.query('SET LOCAL plan_cache_mode = force_generic_plan');
        return explained(
          (
            await tx.query<Explained>(
              `EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE gw_generic_plan(${args.join(', ')})`,
            )
          ).rows,
        );
      } finally {
        await tx.query('DEALLOCATE gw_generic_plan');
      }
    },
    { ...searchTransactionSettings(query.fusion.candidates), ...extraSettings },
  );
}

const readsHnsw = (plan: PlanNode) =>
  [...walk(plan)].some(
    (n) => n['Index Name'] === 'chunks_embedding_hnsw_idx' && (n['Actual Loops'] ?? 0) > 0,
  );

describe.each(ENGINES)('vector arm plan on %s', (engine) => {
  let db: Database;

  beforeAll(async () => {
    db = await openTestDatabase(engine);
    await seedDocuments(db, embedder, DOCS);
  });
  afterAll(() => db?.close());

  /** Which scan the `vec` CTE holds: the `index` arm (its tenant test hidden) or the `exact` one. */
  async function vectorScan(tenantId: string, indexCrossover?: number): Promise<string> {
    const { Plan: plan } = await explainSearch(
      db,
      tenantId,
      await storeQuery('refund policy'),
      indexCrossover === undefined ? {} : { indexCrossover },
    );
    const vec = [...walk(plan)].find((n) => n['Subplan Name'] === 'CTE vec');
    expect(vec).toBeDefined();
    // Chosen before the statement (planSearch): no second arm for the planner to plan and skip.
    expect([...walk(vec!)].filter((n) => n['One-Time Filter'] !== undefined)).toHaveLength(0);
    return [...walk(vec!)].some((n) => n.Filter?.includes('IS TRUE')) ? 'index' : 'exact';
  }

  it('scans a small scope exactly and reads the index for a large one, the chosen scan only', async () => {
    expect(DEFAULT_SEARCH_SQL.indexCrossover).toBe(300);
    // At the default, both tenants of a 50-chunk table are scanned exactly.
    expect(await vectorScan('small')).toBe('exact');
    expect(await vectorScan('large')).toBe('exact');
    expect(await vectorScan('small', FIXTURE_INDEX_CROSSOVER)).toBe('exact');
    expect(await vectorScan('large', FIXTURE_INDEX_CROSSOVER)).toBe('index');
    // The crossover decides, not the tenant's name.
    expect(await vectorScan('small', 0)).toBe('index');
    expect(await vectorScan('large', 1e9)).toBe('exact');
  });

  it('returns the same hits through either plan', async () => {
    const searchWith = (indexCrossover: number) =>
      createSearch({ store: createSearchRepository(db, { indexCrossover }), embedder });
    for (const tenantId of ['large', 'small']) {
      for (const queryText of NOTE_TOPICS) {
        const request = { queryText, topK: 5, mode: 'vector' as const, filters: {} };
        const viaIndex = await searchWith(0).search({ tenantId, userId: 'u1' }, request);
        const exact = await searchWith(1e9).search({ tenantId, userId: 'u1' }, request);
        expect(viaIndex.hits.length).toBe(tenantId === 'small' ? 2 : 5);
        expect(viaIndex.hits.map((h) => h.chunkId)).toEqual(exact.hits.map((h) => h.chunkId));
        expect(viaIndex.hits.every((h) => h.sourceUri.includes(`/${tenantId}/`))).toBe(true);
      }
    }
  });

  it('checks documents after ranking in the exact scan, skipping what the caller cannot see', async () => {
    // 40 notes the tenant sees and 2 of u2's own, nearest to the question: 2 of 42 chunks are
    // restricted, so the exact scan ranks every chunk first and checks documents in that order.
    await seedDocuments(db, embedder, [
      ...Array.from({ length: 40 }, (_, i) => ({
        tenantId: 'private',
        key: `private/note-${i}`,
        texts: [`Note ${i} on ${NOTE_TOPICS[i % NOTE_TOPICS.length]}, week ${i}.`],
      })),
      ...[0, 1].map((i) => ({
        tenantId: 'private',
        key: `private/own-${i}`,
        texts: ['shipping times'],
        visibility: 'user' as const,
        owner: 'u2',
      })),
    ]);
    const { Plan: plan } = await explainSearch(db, 'private', await storeQuery('shipping times'), {
      indexCrossover: 1e9,
    });
    const vec = [...walk(plan)].find((n) => n['Subplan Name'] === 'CTE vec')!;
    // The documents are checked by a subplan above the ranking, about `candidates` times.
    const check = [...walk(vec)].find((n) => (n['Subplan Name'] ?? '').startsWith('SubPlan'));
    expect(check).toBeDefined();
    const exact = createSearch({
      store: createSearchRepository(db, { indexCrossover: 1e9 }),
      embedder,
    });
    const viaIndex = createSearch({
      store: createSearchRepository(db, { indexCrossover: 0 }),
      embedder,
    });
    const request = { queryText: 'shipping times', topK: 5, mode: 'vector' as const, filters: {} };
    for (const userId of ['u1', 'u2']) {
      const hits = (await exact.search({ tenantId: 'private', userId }, request)).hits;
      expect(hits).toHaveLength(5);
      const own = hits.filter((h) => h.sourceUri.includes('/own-'));
      expect(own).toHaveLength(userId === 'u2' ? 2 : 0);
      expect(hits.map((h) => h.chunkId)).toEqual(
        (await viaIndex.search({ tenantId: 'private', userId }, request)).hits.map(
          (h) => h.chunkId,
        ),
      );
    }
  });
});

/**
 * With filters, the vector arm's scope is the documents that match them: a small one is scanned
 * exactly from those documents (the HNSW scan tests the filter on every chunk it visits and a
 * selective filter runs it out of its limits), a large one through the index. A chunk whose own
 * metadata matches a filter its document does not is still found.
 */
const TEAMS: SeedDoc[] = Array.from({ length: 60 }, (_, i): SeedDoc => ({
  tenantId: 'teams',
  key: `teams/doc-${i}`,
  texts: [`Note ${i} on ${NOTE_TOPICS[i % NOTE_TOPICS.length]} for the team, week ${i}.`],
  metadata: { team: i < 3 ? 'blue' : 'red' },
}));

describe.each(ENGINES)('vector arm with filters on %s', (engine) => {
  let db: Database;

  beforeAll(async () => {
    db = await openTestDatabase(engine);
    await seedDocuments(db, embedder, TEAMS);
    // One red document's chunk says, itself, that it is blue.
    await db.query(
      `UPDATE chunks SET metadata = '{"team": "blue"}'
        WHERE document_id = (SELECT id FROM documents WHERE source_uri = 's3://bucket/teams/doc-10')`,
    );
  });
  afterAll(() => db?.close());

  const blue = { metadata: { equals: { key: 'team', value: 'blue' } } };
  async function branches(options: Partial<SearchSqlOptions>): Promise<string[]> {
    const query = { ...(await storeQuery('refund policy')), filters: blue };
    const { Plan: plan } = await explainSearch(db, 'teams', query, options);
    const vec = [...walk(plan)].find((n) => n['Subplan Name'] === 'CTE vec')!;
    // Which scan ran: gates nest (the exact branch holds the scope and tenant scans), so follow
    // each gate down to the plan it let through.
    const ran = (gate: PlanNode): PlanNode | null => {
      const outer = (gate.Plans ?? []).find((c) => c['Parent Relationship'] === 'Outer');
      if (!outer || (outer['Actual Loops'] ?? 0) === 0) return null;
      return outer['One-Time Filter'] !== undefined ? ran(outer) : outer;
    };
    const gates = (node: PlanNode): PlanNode[] =>
      node['One-Time Filter'] !== undefined ? [node] : (node.Plans ?? []).flatMap(gates);
    return gates(vec)
      .map(ran)
      .filter((scan): scan is PlanNode => scan !== null)
      .map((scan) =>
        [...walk(scan)].some((n) => n.Filter?.includes('IS TRUE'))
          ? 'index'
          : [...walk(scan)].some((n) => n['CTE Name'] === 'fdocs')
            ? 'scope'
            : 'tenant',
      );
  }
  const blueHits = async (options: Partial<SearchSqlOptions> = {}) => {
    const search = createSearch({ store: createSearchRepository(db, options), embedder });
    const { hits } = await search.search(
      { tenantId: 'teams', userId: 'u1' },
      { queryText: 'refund policy', topK: 10, mode: 'vector', filters: blue },
    );
    return hits.map((h) => h.sourceUri.replace('s3://bucket/', '')).sort();
  };

  it('scans a selective filter scope exactly from its documents, a large one through the index', async () => {
    expect(await branches({})).toEqual(['scope']);
    // More matching documents than the cap, or a scope past the crossover: the index.
    const indexCrossover = FIXTURE_INDEX_CROSSOVER;
    expect(await branches({ filteredDocumentsCap: 2, indexCrossover })).toEqual(['index']);
    expect(await branches({ filteredIndexCrossover: 0, indexCrossover })).toEqual(['index']);
    // A large filtered scope of a tenant too small for the index: scanned exactly as without filters.
    expect(await branches({ filteredDocumentsCap: 2, indexCrossover: 1e9 })).toEqual(['tenant']);
  });

  it('finds every matching chunk, including one whose own metadata matches', async () => {
    const expected = ['teams/doc-0', 'teams/doc-1', 'teams/doc-10', 'teams/doc-2'];
    expect(await blueHits()).toEqual(expected);
    // The index finds the same on a table this small.
    expect(await blueHits({ filteredIndexCrossover: 0 })).toEqual(expected);
  });
});

/**
 * The trap the page cost setting avoids (SEARCH_RANDOM_PAGE_COST): with PostgreSQL's default
 * cost of a random page, the planner served the vector arm of a 1,000-chunk table by computing
 * every chunk's distance and sorting, instead of reading the HNSW index.
 */
describe.each(ENGINES)('vector arm on a small table of realistic rows on %s', (engine) => {
  let db: Database;

  beforeAll(async () => {
    db = await openTestDatabase(engine);
    await seedWideChunks(db, 'wide', 1000);
  }, 120_000);
  afterAll(() => db?.close());

  it('reads the HNSW index with the search transaction settings', async () => {
    const { Plan: plan } = await explainSearch(db, 'wide', await storeQuery('refund policy'));
    const hnswScans = [...walk(plan)].filter(
      (n) => n['Index Name'] === 'chunks_embedding_hnsw_idx' && (n['Actual Rows'] ?? 0) > 0,
    );
    expect(hnswScans).toHaveLength(1);
    // So does the plan made without the parameters' values, a routine's.
    const generic = await explainSearch(
      db,
      'wide',
      await storeQuery('refund policy'),
      {},
      {},
      true,
    );
    expect(readsHnsw(generic.Plan)).toBe(true);
    // The exact scan, chosen for a small scope, stays exact in that plan, which does not know the
    // scope's size: its order (distance plus 0) is one the index cannot serve.
    const exact = await explainSearch(
      db,
      'wide',
      await storeQuery('refund policy'),
      { indexCrossover: 1e9 },
      {},
      true,
    );
    expect(readsHnsw(exact.Plan)).toBe(false);
    const hits = await createSearch({ store: createSearchRepository(db), embedder }).search(
      { tenantId: 'wide', userId: 'u1' },
      { queryText: 'refund policy', topK: 5, mode: 'vector', filters: {} },
    );
    expect(hits.hits).toHaveLength(5);
  });
});

/**
 * A search statement is never JIT-compiled: with the cost threshold lowered below its estimate
 * (as a large table brings it above the default), PostgreSQL compiles it unless the search
 * transaction turns JIT off. PGlite has no JIT provider, so only PostgreSQL can show it.
 */
describe('search statement and JIT compilation on postgres', () => {
  let db: Database;

  beforeAll(async () => {
    db = await openTestDatabase('postgres');
    await seedDocuments(db, embedder, DOCS);
  });
  afterAll(() => db?.close());

  it('is not compiled even when its estimated cost passes jit_above_cost', async () => {
    const { rows } = await db.query<{ available: boolean }>(
      'SELECT pg_jit_available() AS available',
    );
    expect(rows[0]?.available).toBe(true);
    const query = { ...(await storeQuery('refund policy')), mode: 'hybrid' as const };
    // The control: with JIT allowed, the same statement at the same threshold is compiled.
    const allowed = await explainSearch(db, 'large', query, {}, { jit_above_cost: 0, jit: 'on' });
    expect(allowed.JIT).toBeDefined();
    const explained = await explainSearch(db, 'large', query, {}, { jit_above_cost: 0 });
    expect(explained.JIT).toBeUndefined();
  });
});
