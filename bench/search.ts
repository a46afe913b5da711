/**
 * Search benchmark on the real PostgreSQL + pgvector server, in one run:
 *  1. loads a seeded synthetic corpus (see bench/search-data.ts) into schema `bench_search_<N>`,
 *     or reuses it when a previous run completed it (marker row);
 *  2. the vector arm, HNSW against an exact scan: QPS and recall@10 per ef_search;
 *  3. filtered vector search at 1% and 10% tenant selectivity, iterative scan on and off, with
 *     the plan the planner chose;
 *  4. latency of the search use case (top_k 8; hybrid, keyword and vector, and hybrid with its
 *     statement planned on every search instead of through its routine; the four interleaved
 *     query by query) with the machine's load average and the CPU time other guests took during
 *     each run, the keyword arm's document-frequency budget swept (latency, and agreement with
 *     the unbounded arm), and when the target is missed, the time per CTE of the statement
 *     planned per search (EXPLAIN ANALYZE);
 *  5. selective metadata filters in the big tenant, the plan chosen against HNSW forced and
 *     against the value's filter index;
 *  6. the vector arm's plans (exact scan, HNSW, the rule's pick, PostgreSQL's own) per tenant;
 *  7. halfvec against vector: index size, recall and latency of the big tenant's HNSW search.
 * Every figure is measured in the run that prints it; nothing asserts on time.
 *
 * This module runs the parts in order; each lives in a module of its own: the corpus
 * (search-data.ts generates it, search-corpus.ts loads it), the settings and result types
 * (search-config.ts), what the experiments share (search-measure.ts), the experiments
 * (search-vector-arm.ts: sections 2 and 3, search-latency.ts: 4, search-selective.ts: 5, a
 * selective metadata filter, search-plans.ts: 6, search-halfvec.ts: 7, search-breakdown.ts: time per CTE) and the report (search-report.ts).
 *
 *   node -r tsx/cjs bench/search.ts [--chunks 100000] [--queries 100]
 *   GROUNDWORK_BENCH_DATABASE_URL overrides the server (default: the local groundwork_bench).
 */
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import type { Database } from '../lambdas/adapters/postgres/database';
import { migrate } from '../lambdas/adapters/postgres/migrate';
import { DEFAULT_SEARCH_SQL } from '../lambdas/adapters/postgres/search-plan';
import { buildSearchSql } from '../lambdas/adapters/postgres/search-statement';
import type { SearchMode } from '../lambdas/core/retrieval/types';
import { generateQueries, GENERATOR, TENANTS } from './search-data';
import {
  DF_BUDGET_SWEEP,
  TARGETS,
  WARMUP_QUERIES,
  LATENCY_QUERIES,
  BREAKDOWN_SAMPLE,
  SWEEP_QUERIES,
  UNBOUNDED_BUDGET,
  AGREEMENT_QUERIES,
  SELECTIVE_QUERIES,
  PLAN_QUERIES,
  HALFVEC_QUERIES,
  SearchBenchOptions,
  LatencyRun,
  SearchBenchResult,
} from './search-config';
import { openCorpus, seconds, corpusSizes, prewarm } from './search-corpus';
import { recall, mean, scopeOf, statisticsOf } from './search-measure';
import { measureVectorArm, measureFiltered } from './search-vector-arm';
import {
  storeQuery,
  measureLatency,
  measureRepeat,
  REPEAT_QUERIES,
  useCase,
} from './search-latency';
import { measureSelective } from './search-selective';
import { measurePlans } from './search-plans';
import { measureHalfvec } from './search-halfvec';
import { cteBreakdown } from './search-breakdown';
import { report } from './search-report';

/** Runs the whole benchmark; see the module comment. */
export async function benchSearch(options: SearchBenchOptions = {}): Promise<SearchBenchResult> {
  const started = performance.now();
  const queryCount = options.queries ?? 100;
  const budgetSeconds = options.latencyBudgetSeconds ?? 30;
  const out = options.log ?? ((line: string) => console.log(line));
  // Progress lines carry the elapsed time; the report is printed as is.
  const log = (line: string) => out(`[${seconds(started).toFixed(0).padStart(4)} s] ${line}`);
  if (!Number.isInteger(queryCount) || queryCount <= 0)
    throw new Error(`queries must be a positive integer, got ${queryCount}`);
  const { db, world, schema, chunks, load } = await openCorpus({ ...options, log });
  try {
    // A reused schema has every migration; its search routines may be another code's.
    const { routines } = await migrate(db);
    if (routines.created.length > 0 || routines.dropped.length > 0)
      log(
        `search routines: ${routines.created.length} created, ${routines.dropped.length} dropped`,
      );
    const { rows: tenantRows } = await db.query<{ tenant_id: string; n: string }>(
      'SELECT tenant_id, count(*) AS n FROM chunks GROUP BY 1 ORDER BY 2 DESC',
    );
    const tenants = Object.fromEntries(tenantRows.map((t) => [t.tenant_id, Number(t.n)]));
    const sizes = await corpusSizes(db);

    const recallQueries = generateQueries(world, 'recall', queryCount);
    const vectorArm = await measureVectorArm(db, recallQueries, log);
    const filtered = [
      await measureFiltered(db, recallQueries, TENANTS.onePercent, 0.01, log),
      await measureFiltered(db, recallQueries, TENANTS.tenPercent, 0.1, log),
      await measureFiltered(db, recallQueries, TENANTS.tenthPercent, 0.001, log),
    ];

    const useCaseWith = (dfBudget: number, mode: SearchMode, cachedPlans = true, on = db) =>
      useCase(on, mode, { dfBudget, cachedPlans });
    const latencyQueries = generateQueries(world, 'latency', LATENCY_QUERIES);
    const warmup = generateQueries(world, 'warmup', WARMUP_QUERIES);
    const latencyTenants = [
      [TENANTS.big, `${Math.round((100 * (tenants[TENANTS.big] ?? 0)) / chunks)}%`],
      [TENANTS.tenPercent, '10%'],
      [TENANTS.onePercent, '1%'],
      [TENANTS.tenthPercent, '0.1%'],
    ] as const;
    const warmed = await prewarm(db, schema);
    log(`buffer cache: ${warmed}`);
    const repeat = await measureRepeat(
      useCaseWith(DEFAULT_SEARCH_SQL.dfBudget, 'hybrid'),
      TENANTS.big,
      generateQueries(world, 'repeat', REPEAT_QUERIES),
    );
    log(
      `memory: the same search twice in a row, first p50 ${repeat.firstP50Ms.toFixed(1)} ms, second ${repeat.secondP50Ms.toFixed(1)} ms`,
    );
    const loadBefore = loadavg()[0] ?? 0;
    const latency: LatencyRun[] = [];
    // Each mode as the product runs it, and hybrid once more with its statement parsed and
    // planned on every search instead of through its routine (cached plans), for the ratio; and
    // that once more as the tables' owner, whom row-level security exempts, for its cost.
    const asOwner: Database = {
      ...db,
      transaction: (fn, settings = {}) =>
        db.transaction(
          fn,
          Object.fromEntries(Object.entries(settings).filter(([k]) => k !== 'role')),
        ),
    };
    const latencyRuns = [
      ['hybrid', 'hybrid', true, db],
      ['keyword', 'keyword', true, db],
      ['vector', 'vector', true, db],
      ['hybrid planned per search', 'hybrid', false, db],
      ['hybrid planned per search, as the owner (no RLS)', 'hybrid', false, asOwner],
    ] as const;
    for (const [tenantId, share] of latencyTenants) {
      log(`latency: ${tenantId} (${share}), the runs interleaved`);
      const results = await measureLatency(
        latencyRuns.map(([name, mode, cachedPlans, on]) => ({
          label: `${name}, ${tenantId} (${share})`,
          run: useCaseWith(DEFAULT_SEARCH_SQL.dfBudget, mode, cachedPlans, on),
        })),
        tenantId,
        warmup,
        latencyQueries,
        budgetSeconds,
      );
      for (const result of results) {
        latency.push(result);
        log(
          `  ${result.label}: p50 ${result.p50Ms.toFixed(1)} ms, p95 ${result.p95Ms.toFixed(1)} ms over ${result.queries} queries${result.stealShare === null ? '' : `, ${(100 * result.stealShare).toFixed(1)}% of CPU time stolen`}`,
        );
      }
    }

    // The budget swept on the big tenant, each budget's answers compared with the unbounded
    // arm's on the same queries (answered untimed: at 100k chunks it takes about a second each).
    const sweepQueries = latencyQueries.slice(0, SWEEP_QUERIES);
    const agreementQueries = latencyQueries.slice(0, AGREEMENT_QUERIES);
    const sweepBudgets = options.budgetSweep === false ? [] : [...DF_BUDGET_SWEEP, null];
    if (sweepBudgets.length > 0)
      log(`budget sweep: the unbounded arm's answers to ${agreementQueries.length} queries`);
    const answers = async (dfBudget: number, mode: SearchMode) => {
      const run = useCaseWith(dfBudget, mode);
      const out: string[][] = [];
      for (const q of agreementQueries) out.push(await run(TENANTS.big, q));
      return out;
    };
    const truth =
      sweepBudgets.length === 0
        ? { keyword: [], hybrid: [] }
        : {
            keyword: await answers(UNBOUNDED_BUDGET, 'keyword'),
            hybrid: await answers(UNBOUNDED_BUDGET, 'hybrid'),
          };
    const agreement = (got: readonly string[][], want: readonly string[][]) =>
      mean(got.map((ids, i) => recall(ids, want[i] ?? [])));
    const budgetSweep: SearchBenchResult['budgetSweep'][number][] = [];
    for (const dfBudget of sweepBudgets) {
      const budget = dfBudget ?? UNBOUNDED_BUDGET;
      const label = `df budget ${dfBudget ?? 'unbounded'}`;
      log(`budget sweep: ${label}`);
      const result = (
        await measureLatency(
          [{ label, run: useCaseWith(budget, 'hybrid') }],
          TENANTS.big,
          warmup,
          sweepQueries,
          budgetSeconds,
        )
      )[0]!;
      budgetSweep.push({
        dfBudget,
        hybrid: result,
        keywordAgreement:
          dfBudget === null ? 1 : agreement(await answers(budget, 'keyword'), truth.keyword),
        hybridAgreement:
          dfBudget === null ? 1 : agreement(await answers(budget, 'hybrid'), truth.hybrid),
        agreementQueries: agreementQueries.length,
      });
      log(`  p50 ${result.p50Ms.toFixed(1)} ms, p95 ${result.p95Ms.toFixed(1)} ms`);
    }
    const loadAfter = loadavg()[0] ?? 0;
    const { runs: selective, vacuumMs: selectiveVacuumMs } = await measureSelective(
      db,
      latencyQueries.slice(0, SELECTIVE_QUERIES),
      log,
    );
    const plans = await measurePlans(
      db,
      latencyTenants.map(([tenantId]) => tenantId),
      latencyQueries.slice(0, PLAN_QUERIES),
      warmup,
      log,
    );
    const halfvec = await measureHalfvec(db, recallQueries.slice(0, HALFVEC_QUERIES), warmup, log);

    const hybridBreakdown: SearchBenchResult['hybridBreakdown'][number][] = [];
    if (latency.some((x) => x.p95Ms > TARGETS.hybridP95Ms)) {
      for (const [tenantId] of latencyTenants) {
        log(`breakdown: EXPLAIN ANALYZE of ${BREAKDOWN_SAMPLE} hybrid statements in ${tenantId}`);
        const statistics = await statisticsOf(db, tenantId);
        hybridBreakdown.push({
          tenantId,
          ...(await cteBreakdown(
            db,
            latencyQueries
              .slice(0, BREAKDOWN_SAMPLE)
              .map((q) => buildSearchSql(scopeOf(tenantId), storeQuery(q), statistics)),
            statistics.tableChunks,
          )),
        });
      }
    }

    const result: SearchBenchResult = {
      schema,
      corpus: { chunks, documents: chunks / GENERATOR.chunksPerDocument, tenants, sizes },
      load,
      vectorArm,
      filtered,
      latency,
      hybridBreakdown,
      budgetSweep,
      selective,
      selectiveVacuumMs,
      plans,
      halfvec,
      machine: { cpus: cpus().length, loadBefore, loadAfter, bufferCache: warmed, repeat },
      wallSeconds: seconds(started),
    };
    for (const line of report(result)) out(line);
    return result;
  } finally {
    await db.close();
  }
}

if (require.main === module) {
  const { values } = parseArgs({
    options: { chunks: { type: 'string' }, queries: { type: 'string' } },
  });
  benchSearch({
    chunks: values.chunks === undefined ? undefined : Number(values.chunks),
    queries: values.queries === undefined ? undefined : Number(values.queries),
  }).catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
