/**
 * The chunks' vectors as `halfvec` (migrations/0024), on both databases. A fresh index stores
 * them so; an index the migration left with `vector` (over 100,000 chunks) is still searched
 * through its HNSW index, by the same statements, and `gw_embeddings_to_halfvec()` converts it
 * in place, keeping the graph's options and the vectors in the row, with the same hits after;
 * an index written before the migration is converted by it.
 */
import type { Database } from '../../lambdas/adapters/postgres/database';
import { ensureEmbeddingModel } from '../../lambdas/adapters/postgres/embedding-guard';
import { loadMigrations, migrate } from '../../lambdas/adapters/postgres/migrate';
import { searchTransactionSettings } from '../../lambdas/adapters/postgres/search-plan';
import { createSearchRepository } from '../../lambdas/adapters/postgres/search-repository';
import { buildSearchSql } from '../../lambdas/adapters/postgres/search-statement';
import { createSearch } from '../../lambdas/core/retrieval/search';
import type { SearchMode } from '../../lambdas/core/retrieval/types';
import { ENGINES, openTestDatabase } from '../support/databases';
import { createHashEmbedder } from '../support/hash-embedder';
import { explained, walk, type ExplainRow, type PlanNode } from '../support/plan';
import { largeAndSmallTenants, NOTE_TOPICS, seedDocuments } from '../support/seed';

// 1,024 dimensions: a 2 KB `halfvec`, which a rewrite with pgvector's default storage would move
// out of the row.
const embedder = createHashEmbedder(1024, 'test/hash-1024');

describe.each(ENGINES)('halfvec embeddings on %s', (engine) => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase(engine);
    await ensureEmbeddingModel(db, embedder);
    await seedDocuments(db, embedder, largeAndSmallTenants());
  });
  afterAll(() => db?.close());

  /** The chunks' embedding column: its type, storage and HNSW index definition. */
  const column = async (d: Database = db) => {
    const { rows } = await d.query<{ type: string; storage: string; index: string }>(
      `SELECT format_type(a.atttypid, a.atttypmod) AS type, a.attstorage AS storage,
              pg_get_indexdef('chunks_embedding_hnsw_idx'::regclass) AS index
         FROM pg_attribute a WHERE a.attrelid = 'chunks'::regclass AND a.attname = 'embedding'`,
    );
    return rows[0]!;
  };

  /** Bytes in the TOAST table of `chunks`. */
  const toastBytes = async (d: Database = db) => {
    const { rows } = await d.query<{ bytes: string }>(
      `SELECT pg_relation_size(reltoastrelid)::text AS bytes FROM pg_class WHERE oid = 'chunks'::regclass`,
    );
    return Number(rows[0]!.bytes);
  };

  /**
   * A ranking as it must come out of any plan: the scores in order, and the chunks scored above
   * the last one, in order of id. Chunks tied at the last score (the seeded notes repeat texts,
   * so several share it) may take its places in any order, and which of them do depends on the
   * order a plan reads them in: a rewrite of the table or its index may change that.
   */
  const tieFree = (ranked: readonly { chunkId: string; score: number }[]): string => {
    const last = ranked[ranked.length - 1]?.score.toFixed(2);
    const above = ranked.filter((h) => h.score.toFixed(2) !== last).map((h) => h.chunkId);
    return `${ranked.map((h) => h.score.toFixed(2)).join(' ')} | ${above.sort().join(' ')}`;
  };

  /** Every topic's hits in the large tenant, through the index and by an exact scan. */
  const hits = async (d: Database = db) => {
    const out: string[] = [];
    for (const indexCrossover of [0, 1e9])
      for (const mode of ['vector', 'hybrid'] as SearchMode[]) {
        const search = createSearch({
          store: createSearchRepository(d, { indexCrossover }),
          embedder,
        });
        for (const queryText of NOTE_TOPICS) {
          const result = await search.search(
            { tenantId: 'large', userId: 'u1' },
            { queryText, topK: 5, mode, filters: {} },
          );
          out.push(tieFree(result.hits));
        }
      }
    return out;
  };

  /**
   * The vector arm's plan for a vector search in the large tenant, through the index
   * (`indexCrossover` 0) or by an exact scan: whether it reads the HNSW index, and the
   * expressions its nodes compute (EXPLAIN VERBOSE), where a conversion of the query's vector
   * computed per row would show. A sort is disabled: on a table this small the planner would
   * rather sort than read the graph, and the question is whether the graph can serve the order.
   */
  const plan = async (indexCrossover: number, d: Database = db) => {
    const scope = { tenantId: 'large', userId: 'u1', globalTenants: [] };
    const { statistics } = await createSearchRepository(d).prepare(scope);
    const [embedding = []] = await embedder.embed(['refund policy']);
    const query = {
      text: 'refund policy',
      embedding,
      topK: 5,
      mode: 'vector' as const,
      filters: {},
      minScore: 0,
      maxChunksPerSource: 5,
      allowedSourceTypes: null,
      fusion: { denseWeight: 1, candidates: 100 },
    };
    const stmt = buildSearchSql(scope, query, statistics, { indexCrossover });
    const root = await d.transaction(
      async (tx) =>
        explained(
          (
            await tx.query<ExplainRow<{ Plan: PlanNode }>>(
              `EXPLAIN (VERBOSE, FORMAT JSON) ${stmt.text}`,
              stmt.values,
            )
          ).rows,
        ).Plan,
      { ...searchTransactionSettings(100), enable_sort: 'off' },
    );
    const nodes = [...walk(root)];
    return {
      index: nodes.some((n) => n['Index Name'] === 'chunks_embedding_hnsw_idx'),
      expressions: JSON.stringify(root),
    };
  };

  /** The column and graph migrations/0024 and `gw_embeddings_to_halfvec()` leave. */
  const HALFVEC_COLUMN = {
    type: 'halfvec(1024)',
    storage: 'm',
    index: expect.stringMatching(
      /USING hnsw \(embedding halfvec_cosine_ops\) WITH \(m='?16'?, ef_construction='?128'?\)/,
    ) as unknown,
  };

  it('stores them as halfvec, and converts an index left with vector in place', async () => {
    expect(await column()).toEqual(HALFVEC_COLUMN);
    const expected = await hits();
    expect(expected.every((h) => h.split(' | ')[0]!.split(' ').length === 5)).toBe(true);
    // The query's vector is converted once, into a constant of the plan: not per row.
    for (const crossover of [0, 1e9]) {
      const { index, expressions } = await plan(crossover);
      expect(index).toBe(crossover === 0);
      expect(expressions).toMatch(/embedding <=> '\[[^\]]*\]'::halfvec/);
      expect(expressions).not.toMatch(/::vector\)::halfvec|vector_to_halfvec/);
    }

    // The index as migrations/0024 leaves one of more than 100,000 chunks.
    await db.exec(`
      DROP INDEX chunks_embedding_hnsw_idx;
      ALTER TABLE chunks ALTER COLUMN embedding TYPE vector(1024) USING embedding::vector(1024),
        ALTER COLUMN embedding SET STORAGE MAIN;
      CREATE INDEX chunks_embedding_hnsw_idx ON chunks USING hnsw (embedding vector_cosine_ops)
        WITH (m = 16, ef_construction = 128);`);
    expect((await column()).type).toBe('vector(1024)');
    expect((await plan(0)).index).toBe(true);
    // The same statements serve it (the vectors are the same 16-bit values, widened).
    expect(await hits()).toEqual(expected);

    const toast = await toastBytes();
    const convert = async () =>
      (await db.query<{ converted: number }>('SELECT gw_embeddings_to_halfvec() AS converted'))
        .rows[0]!.converted;
    expect(await convert()).toBe(1);
    // The rewrite kept the vectors in the row: 50 of them moved out would take 100 KB of TOAST.
    expect(await toastBytes()).toBeLessThanOrEqual(toast);
    expect(await column()).toEqual(HALFVEC_COLUMN);
    expect(await hits()).toEqual(expected);
    // Nothing left to convert.
    expect(await convert()).toBe(0);
  });

  it('is what the migration makes of an index written before it', async () => {
    const old = await openTestDatabase(engine, { migrate: false });
    try {
      const all = await loadMigrations();
      await migrate(
        old,
        all.filter((m) => m.version < '0024'),
      );
      await ensureEmbeddingModel(old, embedder);
      expect((await column(old)).type).toBe('vector(1024)');
      await seedDocuments(old, embedder, largeAndSmallTenants());
      const scores = (h: string[]) => h.map((r) => r.split(' | ')[0]!.split(' ').map(Number));
      const before = await hits(old);

      const { applied } = await migrate(old);
      expect(applied[0]).toBe('0024');
      expect(await column(old)).toEqual(HALFVEC_COLUMN);
      // Each query's hits score as before, within 0.01 (16 bits move a cosine far less). The hash embedder's near-ties may change places, so the chunks
      // themselves are not compared.
      const after = scores(await hits(old));
      expect(after).toHaveLength(scores(before).length);
      scores(before).forEach((row, q) =>
        row.forEach((score, k) =>
          expect(Math.abs(after[q]![k]! - score)).toBeLessThanOrEqual(0.01),
        ),
      );
    } finally {
      await old.close();
    }
  });
});
