/**
 * `npm run bench -- search-covering`: what the exact-scan index (exact-scan-index.ts, cdk.json's
 * `exactScanIndex`) does to the exact scans of small tenants. On the search benchmark's corpus
 * (`BENCH_SEARCH_CHUNKS`, loaded or reused as `npm run bench -- search` does), the 1 % and 0.1 %
 * tenants' search use case (hybrid and vector, top_k 8, interleaved query by query as section 4
 * runs them) is timed without it, then with it, built as the `migrate` function builds it
 * (`chunks (tenant_id, document_id) INCLUDE (id, embedding)`, concurrently) and the table
 * vacuumed, so that an exact scan reads a tenant's vectors from the index alone instead of from
 * the heap. It reports the index's size and build time and whether the statement used it (its
 * scans in `pg_stat_user_indexes`), then drops it. Nothing here asserts on time. */
import type { Database } from '../lambdas/adapters/postgres/database';
import {
  EXACT_SCAN_INDEX,
  reconcileExactScanIndex,
} from '../lambdas/adapters/postgres/exact-scan-index';
import { migrate } from '../lambdas/adapters/postgres/migrate';
import { LatencyRun, LATENCY_QUERIES, WARMUP_QUERIES } from './search-config';
import { openCorpus, seconds } from './search-corpus';
import { generateQueries, GENERATOR, TENANTS } from './search-data';
import { measureLatency, useCase } from './search-latency';

export interface CoveringBenchOptions {
  /** @default 100_000 */
  readonly chunks?: number;
  /** Wall-clock seconds per run and tenant. @default 30 */
  readonly budgetSeconds?: number;
  readonly databaseUrl?: string;
  readonly log?: (line: string) => void;
}

/** Scans of the exact-scan index so far (0 before it exists). */
async function coveringScans(db: Database): Promise<number> {
  const { rows } = await db.query<{ n: string }>(
    `SELECT coalesce(sum(idx_scan), 0)::text AS n FROM pg_stat_user_indexes
      WHERE indexrelname = $1 AND schemaname = current_schema()`,
    [EXACT_SCAN_INDEX],
  );
  return Number(rows[0]?.n ?? 0);
}

export async function benchSearchCovering(options: CoveringBenchOptions = {}): Promise<void> {
  const { db, world, chunks, log } = await openCorpus(options);
  const warmup = generateQueries(world, 'warmup', WARMUP_QUERIES);
  const queries = generateQueries(world, 'latency', LATENCY_QUERIES);
  const tenants = [TENANTS.onePercent, TENANTS.tenthPercent];
  const table: string[] = [];
  const measure = async (index: string) => {
    for (const tenantId of tenants) {
      const before = await coveringScans(db);
      const runs: LatencyRun[] = await measureLatency(
        (['hybrid', 'vector'] as const).map((mode) => ({
          label: mode,
          run: useCase(db, mode),
        })),
        tenantId,
        warmup,
        queries,
        options.budgetSeconds ?? 30,
      );
      const used = (await coveringScans(db)) > before;
      for (const r of runs)
        table.push(
          `| ${tenantId} | ${r.label} | ${index}${index === 'exact-scan' ? (used ? ' (used)' : ' (not used)') : ''} | ${r.queries} | ${r.p50Ms.toFixed(1)} | ${r.p95Ms.toFixed(1)} |`,
        );
      log(`  ${tenantId}, ${index}: measured`);
    }
  };
  try {
    // A reused schema has every migration; its search routines may be another code's. A run
    // stopped before its end left its index behind.
    await migrate(db);
    await reconcileExactScanIndex(db, false);
    log("the migrations' indexes");
    await measure('migrations');
    const t0 = performance.now();
    await reconcileExactScanIndex(db, true);
    const build = seconds(t0);
    // As autovacuum leaves a table: the visibility map lets the scan skip the rows.
    await db.exec('VACUUM chunks');
    const { rows } = await db.query<{ size: string }>(
      `SELECT pg_size_pretty(pg_relation_size($1::regclass)) AS size`,
      [EXACT_SCAN_INDEX],
    );
    log(`exact-scan index built in ${build.toFixed(0)} s, ${rows[0]?.size}`);
    await measure('exact-scan');
    log('');
    log(
      `Exact scans of small tenants, ${chunks} chunks of ${GENERATOR.dimension} dimensions; the exact-scan index, (tenant_id, document_id) INCLUDE (id, embedding): ${rows[0]?.size}, built in ${build.toFixed(0)} s`,
    );
  } finally {
    await reconcileExactScanIndex(db, false);
    await db.close();
  }
  log('| tenant | search | indexes | queries | p50 ms | p95 ms |');
  log('| - | - | - | - | - | - |');
  for (const line of table) log(line);
}
