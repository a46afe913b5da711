/**
 * The search benchmark's sections 2 and 3: the vector arm's recall and throughput, and filtered.
 */
import type { Database } from '../lambdas/adapters/postgres/database';
import { DEFAULT_SEARCH_SETTINGS } from '../lambdas/core/retrieval/search';
import { TENANTS, type BenchQuery } from './search-data';
import {
  TARGETS,
  PGVECTOR_DEFAULT_EF_SEARCH,
  EF_SEARCH_SWEEP,
  EXACT_SAMPLE,
  RecallRun,
  SearchBenchResult,
} from './search-config';
import {
  ScanSettings,
  repositorySettings,
  statisticsOf,
  vectorStatement,
  hnswArmStatement,
  exactScan,
  recallRun,
  kindsText,
} from './search-measure';

export async function measureVectorArm(
  db: Database,
  queries: readonly BenchQuery[],
  log: (line: string) => void,
): Promise<SearchBenchResult['vectorArm']> {
  const tenantId = TENANTS.big;
  // top_k 10 from the candidates the use case asks each arm for (50), as the product searches,
  // at the ef_search of each row.
  const candidates = Math.max(DEFAULT_SEARCH_SETTINGS.candidates, 10 * 4);
  const statistics = await statisticsOf(db, tenantId);
  const stmts = queries.map((q) => vectorStatement(tenantId, statistics, q, 10, candidates));
  log(`vector arm: ground truth of ${queries.length} queries, exact scan timed on ${EXACT_SAMPLE}`);
  const { truth, exact } = await exactScan(
    db,
    tenantId,
    queries,
    stmts,
    repositorySettings(candidates, statistics.tableChunks),
  );
  log(
    `  exact: ${exact.qps.toFixed(1)} QPS; ground truth in ${exact.truthSeconds.toFixed(1)} s, agrees with the exact scan ${(100 * exact.agreementWithTruth).toFixed(1)}%`,
  );
  const sweep: RecallRun[] = [];
  // The sweep, and the ef_search the product runs with at this table's size.
  const shipped = repositorySettings(candidates, statistics.tableChunks).efSearch;
  for (const efSearch of [...new Set([...EF_SEARCH_SWEEP, shipped])].sort((a, b) => a - b)) {
    const run = await recallRun(
      db,
      `ef_search ${efSearch}`,
      stmts,
      { efSearch, iterativeScan: 'relaxed_order' },
      truth,
      10,
    );
    sweep.push(run);
    log(
      `  ef_search ${efSearch}: recall@10 ${run.recallAt10.toFixed(3)}, ${run.qps.toFixed(0)} QPS, ${kindsText(run.planKinds)}`,
    );
  }
  const atDefault = sweep.find((r) => r.efSearch === PGVECTOR_DEFAULT_EF_SEARCH)!;
  const meeting = sweep.find((r) => r.recallAt10 >= TARGETS.recallAt10) ?? null;
  return {
    shippedEfSearch: shipped,
    shippedRecallAt10: sweep.find((r) => r.efSearch === shipped)!.recallAt10,
    tenantId,
    queries: stmts.length,
    exact,
    sweep,
    defaultRecallAt10: atDefault.recallAt10,
    defaultSpeedup: atDefault.qps / exact.qps,
    efSearchMeetingRecall: meeting?.efSearch ?? null,
    speedupAtThatEfSearch: meeting ? meeting.qps / exact.qps : null,
  };
}

export async function measureFiltered(
  db: Database,
  queries: readonly BenchQuery[],
  tenantId: string,
  selectivity: number,
  log: (line: string) => void,
): Promise<SearchBenchResult['filtered'][number]> {
  const topK = 10;
  // As the use case and repository set them: candidates = max(50, 4 top_k), ef_search = candidates.
  const candidates = Math.max(DEFAULT_SEARCH_SETTINGS.candidates, topK * 4);
  const statistics = await statisticsOf(db, tenantId);
  const settings = repositorySettings(candidates, statistics.tableChunks);
  const stmts = queries.map((q) => vectorStatement(tenantId, statistics, q, topK, candidates));
  log(`filtered: ${tenantId} (${selectivity * 100}% of chunks)`);
  const { truth, exact } = await exactScan(db, tenantId, queries, stmts, settings);
  const runs: RecallRun[] = [];
  const measure = async (label: string, s: ScanSettings, statements = stmts) => {
    const run = await recallRun(db, label, statements, s, truth, topK);
    log(
      `  ${label}: recall@10 ${run.recallAt10.toFixed(3)}, ${run.avgRows.toFixed(1)} rows, ${kindsText(run.planKinds)}`,
    );
    runs.push(run);
    return run;
  };
  const natural = [
    await measure('iterative scan on (relaxed_order)', settings),
    await measure('iterative scan off', { ...settings, iterativeScan: 'off' }),
  ];
  // Where the planner avoids HNSW for this selectivity, still measure what HNSW returns: other
  // tenant sizes, statistics or filters can tip the plan back to it.
  if (natural.some((r) => (r.planKinds['hnsw index scan'] ?? 0) < stmts.length)) {
    const arm = queries.map((q) => hnswArmStatement(tenantId, q, topK, candidates));
    await measure('HNSW forced (arm alone), iterative on', { ...settings, forceHnsw: true }, arm);
    await measure(
      'HNSW forced (arm alone), iterative off',
      { ...settings, iterativeScan: 'off', forceHnsw: true },
      arm,
    );
  }
  return { tenantId, selectivity, exact, runs };
}
