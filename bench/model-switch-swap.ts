/**
 * `npm run bench -- model-switch-swap`: how long the last step of a model switch, the swap
 * (`gw_embedding_switch_finish`, migrations/0019), takes on a large index, which in AWS must fit
 * in what is left of the ingest function's invocation. The search benchmark's corpus
 * (bench/search-data.ts, `BENCH_SWAP_CHUNKS` chunks, default 100,000) is loaded into a schema of
 * its own, a switch to a 256-dimension model is begun as the migrate function begins it, every
 * next vector is filled in one statement (the re-embedding itself is `model-switch`'s part), and
 * the swap is timed, then the schema is dropped. Nothing here asserts on time.
 */
import { Client } from 'pg';
import {
  hnswIndexOptions,
  reconcileEmbeddingModel,
} from '../lambdas/adapters/postgres/embedding-guard';
import { ensureCorpus, openSchema, seconds } from './search-corpus';
import { BENCH_DATABASE_URL } from './search-config';
import { createWorld } from './search-data';

export interface SwapBenchOptions {
  /** Chunks in the index, a multiple of 5,000. @default 100_000 */
  readonly chunks?: number;
  readonly databaseUrl?: string;
  readonly log?: (line: string) => void;
}

export async function benchModelSwitchSwap(options: SwapBenchOptions = {}): Promise<void> {
  const chunks = options.chunks ?? 100_000;
  const url = options.databaseUrl ?? BENCH_DATABASE_URL;
  const log = options.log ?? ((line: string) => console.log(line));
  if (!Number.isInteger(chunks) || chunks <= 0 || chunks % 5000 !== 0)
    throw new Error(`chunks must be a positive multiple of 5,000, got ${chunks}`);
  const schema = `bench_swap_${chunks}`;
  await ensureCorpus(url, schema, chunks, createWorld(), log);
  const db = openSchema(url, schema);
  try {
    const next = { modelId: 'bench/next-256', dimension: 256, settings: null };
    const began = await reconcileEmbeddingModel(db, next);
    if (!began.began) throw new Error('the switch to the benchmark model did not begin');
    // Filling the column with its HNSW index in place would insert into the graph row by row;
    // the index is built once afterwards instead, as it stands when the last batch is written.
    let t0 = performance.now();
    const graph = await hnswIndexOptions(db);
    await db.exec('DROP INDEX chunks_embedding_next_hnsw_idx');
    await db.exec(
      `UPDATE chunks SET embedding_next = l2_normalize(subvector(embedding, 1, 256))::halfvec(256)`,
    );
    await db.transaction(async (tx) => {
      await tx.exec(`SET LOCAL maintenance_work_mem = '2GB'`);
      await tx.exec(
        `CREATE INDEX chunks_embedding_next_hnsw_idx ON chunks USING hnsw (embedding_next halfvec_cosine_ops)${graph}`,
      );
    });
    await db.exec('VACUUM (ANALYZE) chunks');
    log(`  next vectors written and indexed in ${seconds(t0).toFixed(1)} s (not the swap)`);

    const { rows: size } = await db.query<{ heap: string }>(
      `SELECT pg_size_pretty(pg_relation_size('chunks')) AS heap`,
    );
    t0 = performance.now();
    const { rows } = await db.query<{ outcome: string }>(
      'SELECT gw_embedding_switch_finish() AS outcome',
    );
    const swapSeconds = seconds(t0);
    if (rows[0]?.outcome !== 'done') throw new Error(`the swap answered ${rows[0]?.outcome}`);
    log(
      `model switch swap on PostgreSQL: ${chunks} chunks (chunks heap ${size[0]?.heap}), ` +
        `${swapSeconds.toFixed(1)} s, ${((swapSeconds / chunks) * 1e6).toFixed(1)} s per million chunks`,
    );
  } finally {
    await db.close();
    const admin = new Client({ connectionString: url });
    await admin.connect();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  }
}
