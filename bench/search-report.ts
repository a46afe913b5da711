/** The search benchmark's report. */
import { DEFAULT_SEARCH_SQL } from '../lambdas/adapters/postgres/search-plan';
import { GENERATOR, TENANTS } from './search-data';
import {
  TARGETS,
  PGVECTOR_DEFAULT_EF_SEARCH,
  EF_SEARCH_SWEEP,
  BREAKDOWN_SAMPLE,
  SELECTIVE_AGREEMENT_QUERIES,
  LatencyRun,
  PlanTiming,
  SelectivePlanRun,
  SearchBenchResult,
} from './search-config';
import { kindsText } from './search-measure';

const f = (x: number, digits = 1) => x.toFixed(digits);
const pad = (s: string, n: number) => s.padEnd(n);
const lpad = (s: string, n: number) => s.padStart(n);
const ok = (pass: boolean) => (pass ? 'OK' : 'MISS');

export function report(r: SearchBenchResult): string[] {
  const lines: string[] = [];
  const l = (s = '') => lines.push(s);
  l('='.repeat(100));
  l(`SEARCH BENCHMARK  PostgreSQL + pgvector, schema ${r.schema}`);
  l('='.repeat(100));
  l(
    `1. data: ${r.corpus.chunks} chunks (${GENERATOR.dimension}-d unit vectors, 1,000 Gaussian clusters in 50 topics; Zipf pseudo-word text), ${r.corpus.documents} documents`,
  );
  l(
    `   tenants: ${Object.entries(r.corpus.tenants)
      .map(([t, n]) => `${t} ${n} (${f((100 * n) / r.corpus.chunks)}%)`)
      .join(', ')}`,
  );
  l(
    `   sizes: ${Object.entries(r.corpus.sizes)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
  );
  if (r.load.reused)
    l('   load: reused the complete schema of an earlier run (no load, no index build)');
  else
    l(
      `   load ${f(r.load.loadSeconds ?? 0)} s | GIN build ${f(r.load.ginIndexSeconds ?? 0)} s | HNSW build ${f(r.load.hnswIndexSeconds ?? 0)} s | vacuum + analyze ${f(r.load.analyzeSeconds ?? 0)} s`,
    );
  l();
  const v = r.vectorArm;
  l(
    `2. vector arm, top-10 of 50 candidates in ${v.tenantId} (${v.queries} queries; the product statement, mode vector, iterative scan relaxed_order)`,
  );
  l(
    `   exact scan (index scans off, ${kindsText(v.exact.planKinds)}): ${f(v.exact.qps)} QPS over ${v.exact.sample} queries; ` +
      `batched ground truth ${f(v.exact.truthSeconds)} s, agrees ${f(100 * v.exact.agreementWithTruth)}%`,
  );
  l(
    `   ${pad('ef_search', 14)}${lpad('recall@10', 10)}${lpad('QPS', 8)}${lpad('x exact', 9)}  plan`,
  );
  for (const s of v.sweep) {
    l(
      `   ${pad(String(s.efSearch) + (s.efSearch === PGVECTOR_DEFAULT_EF_SEARCH ? ' (default)' : s.efSearch === v.shippedEfSearch ? ' (product)' : ''), 14)}${lpad(f(s.recallAt10, 3), 10)}${lpad(f(s.qps, 0), 8)}${lpad(f(s.qps / v.exact.qps), 9)}  ${kindsText(s.planKinds)}`,
    );
  }
  l(
    `   default ef_search ${PGVECTOR_DEFAULT_EF_SEARCH}: recall@10 ${f(v.defaultRecallAt10, 3)} [${ok(v.defaultRecallAt10 >= TARGETS.recallAt10)} >= ${TARGETS.recallAt10}], ` +
      `QPS ratio HNSW/exact ${f(v.defaultSpeedup)}x [${ok(v.defaultSpeedup >= TARGETS.hnswSpeedup)} >= ${TARGETS.hnswSpeedup}x]`,
  );
  l(
    `   ef_search the product sets at ${r.corpus.chunks} chunks: ${v.shippedEfSearch}, recall@10 ${f(v.shippedRecallAt10, 3)} [${ok(v.shippedRecallAt10 >= TARGETS.recallAt10)} >= ${TARGETS.recallAt10}]`,
  );
  l(
    v.efSearchMeetingRecall === null
      ? `   no ef_search up to ${EF_SEARCH_SWEEP.at(-1)} reaches recall@10 ${TARGETS.recallAt10}`
      : `   smallest ef_search meeting recall ${TARGETS.recallAt10}: ${v.efSearchMeetingRecall}, at ${f(v.speedupAtThatEfSearch ?? 0)}x the exact scan [${ok((v.speedupAtThatEfSearch ?? 0) >= TARGETS.hnswSpeedup)}]`,
  );
  l();
  const first = r.filtered[0]?.runs[0];
  l(
    `3. filtered vector search, top_k 10, candidates 100, ef_search ${first?.efSearch ?? '-'} (as the use case sets them) [target recall >= ${TARGETS.recallAt10}, all 10 rows]`,
  );
  l(
    `   ${pad('tenant', 8)}${pad('setting', 40)}${lpad('recall@10', 10)}${lpad('rows', 6)}${lpad('full', 6)}${lpad('QPS', 7)}  plan`,
  );
  for (const x of r.filtered) {
    for (const run of x.runs) {
      const pass = run.recallAt10 >= TARGETS.recallAt10 && run.fullTopK === 1;
      l(
        `   ${pad(`${x.selectivity * 100}%`, 8)}${pad(run.label, 40)}${lpad(f(run.recallAt10, 3), 10)}${lpad(f(run.avgRows), 6)}${lpad(`${f(100 * run.fullTopK, 0)}%`, 6)}${lpad(f(run.qps, 0), 7)}  ${kindsText(run.planKinds)} [${ok(pass)}]`,
      );
    }
    l(
      `   ${pad(`${x.selectivity * 100}%`, 8)}${pad('exact (index scans off)', 40)}${lpad('1.000', 10)}${lpad('', 12)}${lpad(f(x.exact.qps, 0), 7)}  ${kindsText(x.exact.planKinds)} (${x.exact.sample} queries; ground truth agrees ${f(100 * x.exact.agreementWithTruth)}%)`,
    );
  }
  l();
  l(
    `4. search use case latency: searchWithEmbedding, top_k 8, query embedding excluded, keyword budget ${DEFAULT_SEARCH_SQL.dfBudget}, a tenant's runs interleaved query by query [target p95 <= ${TARGETS.hybridP95Ms} ms]`,
  );
  l(
    `   machine: ${r.machine.cpus} logical CPUs, 1-minute load average ${f(r.machine.loadBefore, 2)} before the latency runs, ${f(r.machine.loadAfter, 2)} after (other work shares this machine)`,
  );
  l(
    `   buffer cache: ${r.machine.bufferCache}, shared_buffers ${r.corpus.sizes.shared_buffers ?? '?'}`,
  );
  l(
    `   the same search twice in a row (${r.machine.repeat.queries} queries, ${TENANTS.big}, hybrid, all pages in shared_buffers): first p50 ${f(r.machine.repeat.firstP50Ms)} ms, second ${f(r.machine.repeat.secondP50Ms)} ms (what the first pays more is this machine's memory)`,
  );
  l(
    `   ${pad('run', 68)}${lpad('n', 5)}${lpad('p50', 8)}${lpad('p95', 8)}${lpad('p99', 8)}${lpad('mean', 8)}${lpad('hits', 6)}${lpad('steal', 7)}  (ms; steal: CPU time taken by other guests)`,
  );
  const latencyLine = (x: LatencyRun) =>
    l(
      `   ${pad(x.label, 68)}${lpad(`${x.queries}${x.timeCapped ? '*' : ''}`, 5)}${lpad(f(x.p50Ms), 8)}${lpad(f(x.p95Ms), 8)}${lpad(f(x.p99Ms), 8)}${lpad(f(x.meanMs), 8)}${lpad(f(x.avgHits), 6)}${lpad(x.stealShare === null ? '-' : `${f(100 * x.stealShare)}%`, 7)}  [${ok(x.p95Ms <= TARGETS.hybridP95Ms)}]`,
    );
  r.latency.forEach(latencyLine);
  for (const b of r.hybridBreakdown) {
    l(
      `   EXPLAIN ANALYZE of ${BREAKDOWN_SAMPLE} hybrid statements, ${b.tenantId}: planning ${f(b.planningMs)} ms, execution ${f(b.executionMs)} ms; per CTE, self time (rows worked through -> out):`,
    );
    l(
      `     ${b.ctes
        .filter((c) => c.selfMs >= 0.1)
        .map((c) => `${c.cte} ${f(c.selfMs)} ms (${f(c.peakRows, 0)} -> ${f(c.rows, 0)})`)
        .join(' | ')}`,
    );
  }
  const firstSweep = r.budgetSweep[0];
  if (!firstSweep) l('   keyword budget sweep: not run (BENCH_SEARCH_BUDGET_SWEEP=off)');
  if (firstSweep) {
    l(
      `   keyword budget sweep, hybrid in ${firstSweep.hybrid.tenantId}; agreement with the unbounded arm (every matching chunk scored) over ${firstSweep.agreementQueries} queries:`,
    );
    l(
      `   ${pad('df budget', 12)}${lpad('n', 5)}${lpad('p50', 8)}${lpad('p95', 8)}${lpad('p99', 8)}${lpad('keyword top-10', 16)}${lpad('hybrid top-8', 14)}`,
    );
    for (const x of r.budgetSweep) {
      l(
        `   ${pad(x.dfBudget === null ? 'unbounded' : String(x.dfBudget), 12)}${lpad(`${x.hybrid.queries}${x.hybrid.timeCapped ? '*' : ''}`, 5)}${lpad(f(x.hybrid.p50Ms), 8)}${lpad(f(x.hybrid.p95Ms), 8)}${lpad(f(x.hybrid.p99Ms), 8)}${lpad(`${f(100 * x.keywordAgreement)}%`, 16)}${lpad(`${f(100 * x.hybridAgreement)}%`, 14)}`,
      );
    }
  }
  if (r.latency.some((x) => x.timeCapped) || r.budgetSweep.some((x) => x.hybrid.timeCapped)) {
    l("   * stopped at the run's time budget before all its queries");
  }
  l();
  l(
    `5. selective metadata filters, ${TENANTS.big}, top_k 8: the plan the statement chose without a filter index, HNSW forced, and the value's filter index (mean ms; vector recall@8 against a brute-force scan; the chosen plan's keyword top 8 against the unbounded arm's, over those of the first ${SELECTIVE_AGREEMENT_QUERIES} queries it returns chunks for)`,
  );
  const planColumns = (x: SelectivePlanRun) =>
    `${lpad(f(x.vectorMs), 8)}${lpad(f(x.vectorRecallAt8, 3), 8)}${lpad(f(x.hybridMs), 8)}${lpad(f(x.hybridP95Ms), 8)}`;
  const planHeads = `${lpad('vector', 8)}${lpad('recall', 8)}${lpad('hybrid', 8)}${lpad('p95', 8)}`;
  l(
    `   ${pad('documents matching', 30)}${planHeads}${lpad('keyword', 9)}   | HNSW forced${planHeads.slice(11)}   | filter index${planHeads.slice(12)}`,
  );
  for (const x of r.selective) {
    l(
      `   ${pad(`${f(100 * x.share, 1)}% (${x.documents} docs, ${x.chunks} chunks)`, 30)}${planColumns(x.chosen)}${lpad(x.keywordAgreement === null ? '-' : `${f(100 * x.keywordAgreement)}%`, 9)}   |${planColumns(x.hnswForced)}   |${planColumns(x.filterIndex)}  [${ok(x.filterIndex.hybridP95Ms <= TARGETS.hybridP95Ms && x.filterIndex.vectorRecallAt8 >= TARGETS.recallAt10)}]`,
    );
  }
  for (const x of r.selective)
    if (x.filterIndexBuild)
      l(
        `   ${f(100 * x.share, 1)}%: filter index added in this run, ${x.filterIndexBuild.copied} chunks copied and the index built in ${f(x.filterIndexBuild.ms / 1000, 1)} s`,
      );
  if (r.selectiveVacuumMs !== null)
    l(`   then a vacuum of the chunks: ${f(r.selectiveVacuumMs / 1000, 1)} s`);
  l();
  l(
    `6. the vector arm's plans per tenant, top_k 8, candidates 50 (p50 / p95 ms; recall@8 against the exact scan; * a plan stopped after a few queries, far over target)`,
  );
  l(`   ${pad('', 36)}${pad('| the product statement', 48)}| the arm alone`);
  l(
    `   ${pad('tenant', 14)}${lpad('n', 8)}${lpad('n²/N', 8)}  ${pad('| exact', 14)}${pad('HNSW', 18)}${pad('rule', 16)}| ${pad('exact', 14)}${pad('HNSW', 14)}${pad('PostgreSQL', 18)}its plan`,
  );
  const pt = (t: PlanTiming, withRecall = false) =>
    `${f(t.p50Ms)}/${f(t.p95Ms)}${t.queries < (r.plans[0]?.queries ?? 0) ? '*' : ''}${withRecall ? ` ${f(t.recallAt8, 2)}` : ''}`;
  for (const x of r.plans) {
    l(
      `   ${pad(x.tenantId, 14)}${lpad(String(x.chunks), 8)}${lpad(f((x.chunks * x.chunks) / x.tableChunks, 0), 8)}  | ${pad(pt(x.statement.exact), 12)}${pad(pt(x.statement.hnsw, true), 18)}${pad(`${x.ruleUsesIndex ? 'HNSW' : 'exact'} ${pt(x.statement.rule)}`, 16)}| ${pad(pt(x.arm.exact), 14)}${pad(pt(x.arm.hnsw), 14)}${pad(pt(x.arm.planner, true), 18)}${kindsText(x.plannerPlan)}`,
    );
  }
  l();
  const h = r.halfvec;
  const mb = (bytes: number) => `${f(bytes / 2 ** 20, 0)} MB`;
  l(
    `7. halfvec against vector, ${h.tenantId}, HNSW at ef_search ${h.efSearch}, top_k 8 over ${h.queries} queries (one side table, an index per column; recall@8 against the exact answer over the stored 16-bit vectors)`,
  );
  if (h.build)
    l(
      `   built: copy ${f(h.build.copySeconds)} s, vector index ${f(h.build.vectorSeconds)} s, halfvec index ${f(h.build.halfvecSeconds)} s, vacuum ${f(h.build.vacuumSeconds)} s`,
    );
  l(
    `   ${pad('type', 10)}${lpad('index', 10)}${lpad('p50', 8)}${lpad('p95', 8)}${lpad('recall@8', 10)}`,
  );
  for (const [name, bytes, t] of [
    ['vector', h.vectorIndexBytes, h.vector],
    ['halfvec', h.halfvecIndexBytes, h.halfvec],
  ] as const) {
    l(
      `   ${pad(name, 10)}${lpad(mb(bytes), 10)}${lpad(f(t.p50Ms), 8)}${lpad(f(t.p95Ms), 8)}${lpad(f(t.recallAt8, 3), 10)}  [${ok(t.recallAt8 >= TARGETS.recallAt10)}]`,
    );
  }
  l();
  l(`wall time ${f(r.wallSeconds)} s`);
  return lines;
}
