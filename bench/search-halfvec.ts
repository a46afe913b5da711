/**
 * The search benchmark's section 7: pgvector's `halfvec` (16-bit floats) against `vector`
 * (32-bit) for the big tenant's vector search. A side table of the chunks' ids, tenants and
 * vectors stored both ways, with an HNSW index on each column, is built once per corpus (kept
 * with it); the two columns share one heap, so the comparison isolates the index and the
 * vector's width. The chunks store `halfvec` (migrations/0024), so the `vector` column holds the
 * same 16-bit values widened and recall is against the exact answer over the stored vectors: the
 * section compares the two graphs' size and speed. What 16 bits cost in recall against 32-bit
 * vectors was measured before the product adopted them (docs/retrieval.md, "Vector arm").
 */
import { hnswIndexOptions } from '../lambdas/adapters/postgres/embedding-guard';
import { toVectorLiteral, type Database } from '../lambdas/adapters/postgres/database';
import { SqlParams } from '../lambdas/adapters/postgres/sql-params';
import { GENERATOR, TENANTS, type BenchQuery } from './search-data';
import type { HalfvecResult } from './search-config';
import { seconds } from './search-corpus';
import { hybridSettings, HYBRID_TOP_K } from './search-latency';
import { groundTruth, statisticsOf, type Statement } from './search-measure';
import { timePlans } from './search-plans';

const TABLE = 'bench_vectors';

async function ensureSideTable(db: Database, log: (line: string) => void) {
  // Ready: both graphs, and both columns kept in the row (a table built before they were had its
  // `vector` column in TOAST, so every distance its search returned was read from there).
  const { rows } = await db.query<{ ready: boolean }>(
    `SELECT (SELECT count(*) FROM pg_indexes
              WHERE schemaname = current_schema() AND tablename = $1 AND indexname LIKE '%_hnsw') = 2
        AND (SELECT count(*) FROM pg_attribute
              WHERE attrelid = to_regclass($1) AND attname IN ('full_vec', 'half_vec')
                AND attstorage = 'm') = 2 AS ready`,
    [TABLE],
  );
  if (rows[0]?.ready) return null;
  log(`halfvec: building ${TABLE} (both columns, an HNSW index on each)`);
  await db.exec(`DROP TABLE IF EXISTS ${TABLE}`);
  let t0 = performance.now();
  // Both vectors in the row, as the product keeps its column (migrations/0007, 0024).
  await db.exec(
    `CREATE TABLE ${TABLE} (id uuid, tenant_id text, full_vec vector(${GENERATOR.dimension}),
       half_vec halfvec(${GENERATOR.dimension}));
     ALTER TABLE ${TABLE} ALTER COLUMN full_vec SET STORAGE MAIN,
       ALTER COLUMN half_vec SET STORAGE MAIN;
     INSERT INTO ${TABLE}
       SELECT id, tenant_id, embedding::vector(${GENERATOR.dimension}),
              embedding::halfvec(${GENERATOR.dimension}) FROM chunks`,
  );
  const copySeconds = seconds(t0);
  // Both graphs are built with the product index's options (m, ef_construction; migrations/0021).
  const options = await hnswIndexOptions(db);
  const build = async (column: string, ops: string) => {
    const t = performance.now();
    await db.transaction(async (tx) => {
      await tx.exec(`SET LOCAL maintenance_work_mem = '6GB'`);
      await tx.exec(
        `CREATE INDEX ${TABLE}_${column}_hnsw ON ${TABLE} USING hnsw (${column} ${ops})${options}`,
      );
    });
    return seconds(t);
  };
  const vectorSeconds = await build('full_vec', 'vector_cosine_ops');
  const halfvecSeconds = await build('half_vec', 'halfvec_cosine_ops');
  t0 = performance.now();
  await db.exec(`VACUUM (ANALYZE) ${TABLE}`);
  return { copySeconds, vectorSeconds, halfvecSeconds, vacuumSeconds: seconds(t0) };
}

function statement(column: 'full_vec' | 'half_vec', q: BenchQuery, limit: number): Statement {
  const p = new SqlParams();
  const type = column === 'full_vec' ? 'vector' : `halfvec`;
  const emb = p.add(toVectorLiteral(q.embedding), type);
  // The tenant test hidden from the b-tree-less side table's estimate, as in the product's arm.
  const text = `SELECT v.id AS chunk_id FROM (
      SELECT id, ${column} <=> ${emb} AS distance FROM ${TABLE}
       WHERE (tenant_id = ${p.add(TENANTS.big)}) IS TRUE
       ORDER BY ${column} <=> ${emb} LIMIT ${p.add(limit, 'int')}) v
    ORDER BY v.distance, v.id LIMIT ${p.add(HYBRID_TOP_K, 'int')}`;
  return { text, values: p.values };
}

export async function measureHalfvec(
  db: Database,
  queries: readonly BenchQuery[],
  warmup: readonly BenchQuery[],
  log: (line: string) => void,
): Promise<HalfvecResult> {
  const build = await ensureSideTable(db, log);
  const { rows: sizes } = await db.query<{ vector_index: string; halfvec_index: string }>(
    `SELECT pg_relation_size($1::regclass)::text AS vector_index,
            pg_relation_size($2::regclass)::text AS halfvec_index`,
    [`${TABLE}_full_vec_hnsw`, `${TABLE}_half_vec_hnsw`],
  );
  log(`halfvec: the exact answer of ${queries.length} queries`);
  const truth = await groundTruth(db, TENANTS.big, queries, HYBRID_TOP_K);
  const settings = hybridSettings((await statisticsOf(db, TENANTS.big)).tableChunks);
  const limit = settings.efSearch;
  const t = await timePlans(
    db,
    {
      vector: { statement: (q) => statement('full_vec', q, limit), settings },
      halfvec: { statement: (q) => statement('half_vec', q, limit), settings },
    },
    queries,
    warmup,
    truth,
  );
  const result: HalfvecResult = {
    tenantId: TENANTS.big,
    queries: queries.length,
    efSearch: settings.efSearch,
    build,
    vectorIndexBytes: Number(sizes[0]?.vector_index ?? 0),
    halfvecIndexBytes: Number(sizes[0]?.halfvec_index ?? 0),
    vector: t.vector,
    halfvec: t.halfvec,
  };
  log(
    `  vector: p95 ${result.vector.p95Ms.toFixed(1)} ms, recall@8 ${result.vector.recallAt8.toFixed(3)}; halfvec: p95 ${result.halfvec.p95Ms.toFixed(1)} ms, recall@8 ${result.halfvec.recallAt8.toFixed(3)}`,
  );
  return result;
}
