/**
 * `npm run bench -- search-graph`: what the HNSW graph's build parameters do to recall. On the
 * search benchmark's corpus (`BENCH_SEARCH_CHUNKS`, loaded or reused as `npm run bench -- search`
 * does), the chunks' HNSW index is rebuilt with each `m:ef_construction` pair of
 * `BENCH_GRAPH_PARAMS` (default `16:64,16:128,24:128`) and the vector arm's recall sweep of
 * section 2 runs on it: recall@10 of the product's 50 candidates and queries a second per
 * `ef_search`, with the build time and the index size. The index the migrations define is
 * rebuilt at the end. Nothing here asserts on time.
 */
import type { Database } from '../lambdas/adapters/postgres/database';
import { openCorpus, prewarm, seconds } from './search-corpus';
import { generateQueries, GENERATOR } from './search-data';
import { measureVectorArm } from './search-vector-arm';

interface GraphParams {
  readonly m: number;
  readonly efConstruction: number;
}

export interface GraphBenchOptions {
  /** @default 100_000 */
  readonly chunks?: number;
  /** @default 16:64 (pgvector's defaults), 16:128, 24:128 */
  readonly params?: readonly GraphParams[];
  /** Queries of each recall sweep. @default 100 */
  readonly queries?: number;
  readonly databaseUrl?: string;
  readonly log?: (line: string) => void;
}

/** `16:64,24:128` → pairs; pgvector accepts m 2-100 and ef_construction 4-1,000 (at least 2 m). */
export function parseGraphParams(text: string): GraphParams[] {
  return text.split(',').map((pair) => {
    const [m, efConstruction] = pair.split(':').map(Number);
    if (
      !Number.isInteger(m) ||
      !Number.isInteger(efConstruction) ||
      m! < 2 ||
      m! > 100 ||
      efConstruction! < 2 * m! ||
      efConstruction! > 1000
    )
      throw new Error(`"${pair}" is not m:ef_construction (m 2-100, ef_construction 2m-1,000)`);
    return { m: m!, efConstruction: efConstruction! };
  });
}

async function rebuild(db: Database, definition: string): Promise<number> {
  const t0 = performance.now();
  await db.exec('DROP INDEX IF EXISTS chunks_embedding_hnsw_idx');
  await db.transaction(async (tx) => {
    await tx.exec(`SET LOCAL maintenance_work_mem = '6GB'`);
    await tx.exec(definition);
  });
  return seconds(t0);
}

export async function benchSearchGraph(options: GraphBenchOptions = {}): Promise<void> {
  const params = options.params ?? parseGraphParams('16:64,16:128,24:128');
  const { db, world, schema, chunks, log } = await openCorpus(options);
  const { rows } = await db.query<{ indexdef: string }>(
    `SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND indexname = 'chunks_embedding_hnsw_idx'`,
    [schema],
  );
  const product = rows[0]?.indexdef;
  if (!product) throw new Error(`${schema} has no chunks_embedding_hnsw_idx`);
  // The operator class of the column's type (halfvec_cosine_ops since migrations/0024).
  const ops = /\(embedding (\w+)\)/.exec(product)?.[1];
  if (!ops) throw new Error(`unexpected definition of chunks_embedding_hnsw_idx: ${product}`);
  const queries = generateQueries(world, 'recall', options.queries ?? 100);
  const table: string[] = [];
  try {
    for (const p of params) {
      const definition =
        `CREATE INDEX chunks_embedding_hnsw_idx ON chunks USING hnsw (embedding ${ops}) ` +
        `WITH (m = ${p.m}, ef_construction = ${p.efConstruction})`;
      log(`graph m ${p.m}, ef_construction ${p.efConstruction}: building`);
      const buildSeconds = await rebuild(db, definition);
      const { rows: size } = await db.query<{ size: string }>(
        `SELECT pg_size_pretty(pg_relation_size('chunks_embedding_hnsw_idx')) AS size`,
      );
      log(
        `  built in ${buildSeconds.toFixed(0)} s, ${size[0]?.size}; ${await prewarm(db, schema)}`,
      );
      const arm = await measureVectorArm(db, queries, log);
      table.push(
        `| ${p.m} | ${p.efConstruction} | ${buildSeconds.toFixed(0)} s | ${size[0]?.size} | ` +
          arm.sweep
            .map((r) => `${r.efSearch}: ${r.recallAt10.toFixed(3)} (${r.qps.toFixed(0)} QPS)`)
            .join(', ') +
          ` |`,
      );
    }
  } finally {
    log('restoring the index the migrations define');
    await rebuild(db, product);
    await db.close();
  }
  log('');
  log(`HNSW graph parameters, ${chunks} chunks of ${GENERATOR.dimension} dimensions, big tenant:`);
  log('| m | ef_construction | build | size | ef_search: recall@10 of 50 candidates (QPS) |');
  log('| - | - | - | - | - |');
  for (const line of table) log(line);
}
