/**
 * The search statement's routines (lambdas/adapters/postgres/routines.ts), on both databases:
 * migrate installs one for every statement without filters; every search without filters runs
 * through one, with the same hits as the statement run directly; a search with filters does not;
 * a server without the routine still answers; and migrate drops routines the code no longer
 * generates, and nothing else.
 */
import type { Database, Queryable } from '../../lambdas/adapters/postgres/database';
import { migrate } from '../../lambdas/adapters/postgres/migrate';
import { installRoutines, routineCall, routineFor } from '../../lambdas/adapters/postgres/routines';
import { type SearchSqlOptions } from '../../lambdas/adapters/postgres/search-plan';
import {
  createSearchRepository,
  SEARCH_ROUTINE_PREFIX,
} from '../../lambdas/adapters/postgres/search-repository';
import { searchRoutines } from '../../lambdas/adapters/postgres/search-routines';
import type { SearchMode, SearchQuery, SearchScope } from '../../lambdas/core/retrieval/types';
import { ENGINES, seededTestDatabase } from '../support/databases';
import { createHashEmbedder } from '../support/hash-embedder';
import { FIXTURE_INDEX_CROSSOVER, largeAndSmallTenants } from '../support/seed';

const embedder = createHashEmbedder();
// 48 chunks in `large` (its vector arm reads the index at the fixture's crossover), 2 in `small`
// (scanned exactly).
const DOCS = largeAndSmallTenants((i) => ({ team: i % 2 === 0 ? 'blue' : 'red' }));

/** `db`, recording the text of every query sent through it or its transactions. */
function recording(db: Database, texts: string[]): Database {
  const wrap = (q: Queryable): Queryable => ({
    query: (text, params) => {
      texts.push(text);
      return q.query(text, params);
    },
    exec: (script) => q.exec(script),
  });
  return {
    ...wrap(db),
    kind: db.kind,
    call: (text, params) => {
      texts.push(text);
      return db.call(text, params);
    },
    transaction: (fn, settings) => db.transaction((tx) => fn(wrap(tx)), settings),
    close: () => db.close(),
  };
}

const LEAD = { minMargin: 0.05, maxKeywordCoverage: 0.35, denseWeight: 0.8 };

async function storeQuery(
  text: string,
  mode: SearchMode,
  options: { lead?: boolean; filters?: SearchQuery['filters'] } = {},
): Promise<SearchQuery> {
  const [embedding = []] = await embedder.embed([text]);
  return {
    text,
    embedding,
    topK: 5,
    mode,
    filters: options.filters ?? {},
    minScore: 0,
    maxChunksPerSource: 2,
    allowedSourceTypes: null,
    fusion: { denseWeight: 0.3, candidates: 20, ...(options.lead ? { denseLead: LEAD } : {}) },
  };
}

const scopeOf = (tenantId: string): SearchScope => ({
  tenantId,
  userId: 'u1',
  globalTenants: [],
});

async function installedRoutines(db: Database): Promise<string[]> {
  const { rows } = await db.query<{ name: string }>(
    `SELECT proname AS name FROM pg_proc
     WHERE pronamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())
       AND starts_with(proname, $1) ORDER BY 1`,
    [SEARCH_ROUTINE_PREFIX],
  );
  return rows.map((r) => r.name);
}

const routineCalls = (texts: readonly string[]) =>
  texts
    .map((t) => new RegExp(`FROM (${SEARCH_ROUTINE_PREFIX}[0-9a-f]{16})\\(`).exec(t)?.[1])
    .filter((name): name is string => name !== undefined);

describe.each(ENGINES)('search routines on %s', (engine) => {
  const database = seededTestDatabase(engine, DOCS, embedder);

  /** The hits of `query` through the store (routine or not), and the texts it sent. */
  async function search(
    tenantId: string,
    query: SearchQuery,
    options: Partial<SearchSqlOptions> = {},
    on: Database = database(),
  ) {
    const texts: string[] = [];
    const store = createSearchRepository(recording(on, texts), {
      indexCrossover: FIXTURE_INDEX_CROSSOVER,
      ...options,
    });
    const { statistics } = await store.prepare(scopeOf(tenantId));
    const prepared = texts.splice(0);
    const hits = await store.search(scopeOf(tenantId), query, statistics);
    return { hits, texts, prepared };
  }

  it('are installed by migrate, one for every statement without filters', async () => {
    const db = database();
    const expected = searchRoutines()
      .map((r) => r.name)
      .sort();
    // Hybrid through HNSW: document check deferred or not, lead or not; vector through HNSW;
    // keyword: document check deferred or not; and the read that prepares every search. An
    // exact vector scan is planned on every search.
    expect(expected).toHaveLength(8);
    expect(await installedRoutines(db)).toEqual(expected);
    expect((await migrate(db)).routines).toEqual({ created: [], dropped: [] });
  });

  it('serve every search without filters, with the hits of the statement run directly', async () => {
    const db = database();
    const used = new Set<string>();
    for (const mode of ['hybrid', 'vector', 'keyword'] as SearchMode[])
      for (const tenantId of ['large', 'small'])
        for (const deferDocumentCheck of [true, false])
          for (const lead of [true, false]) {
            const query = await storeQuery('refund policy for warranty claims', mode, { lead });
            const routed = await search(tenantId, query, { deferDocumentCheck });
            const direct = await search(tenantId, query, {
              deferDocumentCheck,
              cachedPlans: false,
            });
            const calls = [...routineCalls(routed.prepared), ...routineCalls(routed.texts)];
            // The read, and the search unless it scans vectors exactly (`small`).
            const exact = tenantId === 'small' && mode !== 'keyword';
            expect(calls).toHaveLength(exact ? 1 : 2);
            calls.forEach((name) => used.add(name));
            expect(routineCalls([...direct.prepared, ...direct.texts])).toHaveLength(0);
            expect(routed.hits.length).toBeGreaterThan(0);
            expect(routed.hits.map((h) => h.chunkId)).toEqual(direct.hits.map((h) => h.chunkId));
            routed.hits.forEach((h, i) => {
              const d = direct.hits[i]!;
              expect(h.score).toBeCloseTo(d.score, 9);
              expect(h.keywordScore).toBeCloseTo(d.keywordScore, 9);
              expect(h.fusedScore).toBeCloseTo(d.fusedScore, 9);
              expect(h.keywordCoverage).toBeCloseTo(d.keywordCoverage, 9);
              expect({
                ...h,
                score: 0,
                keywordScore: 0,
                fusedScore: 0,
                keywordCoverage: 0,
              }).toEqual({ ...d, score: 0, keywordScore: 0, fusedScore: 0, keywordCoverage: 0 });
            });
          }
    // Every installed routine ran, and returned the columns its call names.
    expect([...used].sort()).toEqual(await installedRoutines(db));
  });

  it('do not serve a search with filters, whose statement depends on them', async () => {
    const query = await storeQuery('refund policy', 'hybrid', {
      filters: { metadata: { equals: { key: 'team', value: 'blue' } } },
    });
    const { hits, texts, prepared } = await search('large', query);
    expect(routineCalls(texts)).toHaveLength(0);
    // The read before it is the same for every search.
    expect(routineCalls(prepared)).toHaveLength(1);
    expect(hits.length).toBeGreaterThan(0);
    expect(hits.every((h) => h.metadata.team === 'blue')).toBe(true);
  });

  it('are not needed: without its routine a search runs the statement, and migrate restores it', async () => {
    const db = database();
    const query = await storeQuery('shipping times', 'hybrid');
    const before = await search('large', query);
    const [name] = routineCalls(before.texts);
    const { rows } = await db.query<{ signature: string }>(
      `SELECT oid::regprocedure::text AS signature FROM pg_proc
       WHERE proname = $1 AND pronamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())`,
      [name],
    );
    await db.exec(`DROP FUNCTION ${rows[0]!.signature}`);

    const texts: string[] = [];
    const store = createSearchRepository(recording(db, texts), {
      indexCrossover: FIXTURE_INDEX_CROSSOVER,
    });
    const { statistics } = await store.prepare(scopeOf('large'));
    texts.length = 0;
    const first = await store.search(scopeOf('large'), query, statistics);
    expect(first.map((h) => h.chunkId)).toEqual(before.hits.map((h) => h.chunkId));
    // The call failed, the statement ran; the next search runs the statement straight away.
    expect(routineCalls(texts)).toEqual([name]);
    texts.length = 0;
    await store.search(scopeOf('large'), query, statistics);
    expect(routineCalls(texts)).toEqual([]);
    expect(texts.some((t) => t.startsWith('WITH terms AS'))).toBe(true);

    expect((await migrate(db)).routines).toEqual({ created: [name], dropped: [] });
    expect(routineCalls((await search('large', query)).texts)).toEqual([name]);
  });

  it('apply the settings they are given for their call only', async () => {
    const db = database();
    const prefix = 'gw_test_settings_';
    const probe = {
      text: `SELECT current_setting('hnsw.ef_search') AS ef, current_setting('jit') AS jit`,
      types: [],
      values: [],
    };
    const routine = routineFor(prefix, probe);
    await db.transaction((tx) => installRoutines(tx, prefix, [routine]));
    const session = async () =>
      (
        await db.query<{ ef: string; jit: string }>(
          `SELECT current_setting('hnsw.ef_search') AS ef, current_setting('jit') AS jit`,
        )
      ).rows[0];
    const before = await session();
    const call = routineCall(routine.name, probe, 'ef text, jit text', {
      'hnsw.ef_search': 77,
      jit: 'off',
    });
    expect((await db.query(call.text, call.values)).rows).toEqual([{ ef: '77', jit: 'off' }]);
    // Every pooled connection is back to its connection-level values (SET LOCAL ends with the transaction).
    for (let i = 0; i < 6; i++) expect(await session()).toEqual(before);
    expect(before?.ef).not.toBe('77');
    await db.transaction((tx) => installRoutines(tx, prefix, []));
  });

  it('that the code no longer generates are dropped by migrate, and nothing else', async () => {
    const db = database();
    const stale = `${SEARCH_ROUTINE_PREFIX}0123456789abcdef`;
    await db.exec(`CREATE FUNCTION ${stale}(int) RETURNS SETOF record LANGUAGE sql AS 'SELECT 1'`);
    expect(await installedRoutines(db)).toContain(stale);
    expect((await migrate(db)).routines).toEqual({ created: [], dropped: [stale] });
    expect(await installedRoutines(db)).not.toContain(stale);
    // Other functions of the schema stay, such as the keyword index's.
    const { rows } = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_proc
       WHERE proname IN ('gw_tenant_lexemes', 'gw_search_lexemes')
         AND pronamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())`,
    );
    expect(rows[0]?.n).toBe(2);
  });
});
