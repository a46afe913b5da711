/**
 * The search benchmark's section 6: the vector arm's plans in every tenant, the measurements
 * behind the plan choice (planSearch, docs/decisions/0150-vector-plan-from-measured-costs.md).
 * In each tenant the same queries run, interleaved query by query:
 *  - the product's vector statement with the exact scan forced, with HNSW forced, and with the
 *    plan the rule picks;
 *  - the arm alone (the `vec` CTE's predicate and candidate LIMIT) with the exact scan forced
 *    (index scans off), with HNSW forced (sorts off), and as PostgreSQL plans it unaided.
 * Recall is against the exact top 8.
 */
import type { Database } from '../lambdas/adapters/postgres/database';
import { planSearch, type SearchSqlOptions } from '../lambdas/adapters/postgres/search-plan';
import { buildSearchSql } from '../lambdas/adapters/postgres/search-statement';
import type { SearchQuery } from '../lambdas/core/retrieval/types';
import type { BenchQuery } from './search-data';
import { WARMUP_QUERIES, type PlanGridRow, type PlanTiming } from './search-config';
import { hybridSettings, HYBRID_TOP_K, storeQuery } from './search-latency';
import {
  groundTruth,
  hnswArmStatement,
  mean,
  percentile,
  planKinds,
  recall,
  runIds,
  scopeOf,
  statisticsOf,
  type ScanSettings,
  type Statement,
} from './search-measure';

/** A way of answering a query: its statement and the settings it runs with. */
export interface TimedPlan {
  readonly statement: (q: BenchQuery) => Statement;
  readonly settings: ScanSettings;
}

/** A plan slower than this on average over its first {@link PROBE_QUERIES} stops there. */
const SLOW_MEAN_MS = 250;
const PROBE_QUERIES = 5;

/**
 * Times each plan on every query after a warm-up, interleaved (the order rotated from one query
 * to the next), with its recall against the truth. A plan far slower than the target (an exact
 * scan of a large tenant) stops after a few queries: its cost is plain by then.
 */
export async function timePlans<K extends string>(
  db: Database,
  plans: Readonly<Record<K, TimedPlan>>,
  queries: readonly BenchQuery[],
  warmup: readonly BenchQuery[],
  truth: readonly (readonly string[])[],
): Promise<Record<K, PlanTiming>> {
  const names = Object.keys(plans) as K[];
  for (const q of warmup.slice(0, WARMUP_QUERIES))
    for (const name of names) await runIds(db, plans[name].statement(q), plans[name].settings);
  const times = new Map(names.map((n) => [n, [] as number[]]));
  const recalls = new Map(names.map((n) => [n, [] as number[]]));
  const stopped = new Set<K>();
  for (const [i, q] of queries.entries()) {
    for (let j = 0; j < names.length; j++) {
      const name = names[(i + j) % names.length]!;
      if (stopped.has(name)) continue;
      const t0 = performance.now();
      const ids = await runIds(db, plans[name].statement(q), plans[name].settings);
      const spent = times.get(name)!;
      spent.push(performance.now() - t0);
      recalls.get(name)!.push(recall(ids, truth[i] ?? []));
      if (spent.length === PROBE_QUERIES && mean(spent) > SLOW_MEAN_MS) stopped.add(name);
    }
  }
  const out = {} as Record<K, PlanTiming>;
  for (const name of names) {
    const sorted = [...times.get(name)!].sort((a, b) => a - b);
    out[name] = {
      p50Ms: percentile(sorted, 50),
      p95Ms: percentile(sorted, 95),
      recallAt8: mean(recalls.get(name)!),
      queries: sorted.length,
    };
  }
  return out;
}

const FORCED = {
  exact: { indexCrossover: Number.POSITIVE_INFINITY },
  hnsw: { indexCrossover: 0 },
} as const satisfies Record<string, Partial<SearchSqlOptions>>;

export async function measurePlans(
  db: Database,
  tenants: readonly string[],
  queries: readonly BenchQuery[],
  warmup: readonly BenchQuery[],
  log: (line: string) => void,
): Promise<PlanGridRow[]> {
  const rows: PlanGridRow[] = [];
  const candidates = storeQuery(warmup[0]!).fusion.candidates;
  for (const tenantId of tenants) {
    const statistics = await statisticsOf(db, tenantId);
    log(`plans: ${tenantId} (${statistics.chunks} of ${statistics.tableChunks} chunks)`);
    const settings = hybridSettings(statistics.tableChunks);
    const query = (q: BenchQuery): SearchQuery => ({
      ...storeQuery(q, 'vector'),
      maxChunksPerSource: HYBRID_TOP_K,
    });
    const product = (options: Partial<SearchSqlOptions>): TimedPlan => ({
      statement: (q) => buildSearchSql(scopeOf(tenantId), query(q), statistics, options),
      settings,
    });
    const arm = (forced: Partial<ScanSettings>): TimedPlan => ({
      statement: (q) => hnswArmStatement(tenantId, q, HYBRID_TOP_K, candidates),
      settings: { ...settings, ...forced },
    });
    const truth = await groundTruth(db, tenantId, queries, HYBRID_TOP_K);
    const t = await timePlans(
      db,
      {
        exact: product(FORCED.exact),
        hnsw: product(FORCED.hnsw),
        rule: product({}),
        armExact: arm({ exact: true }),
        armHnsw: arm({ forceHnsw: true }),
        planner: arm({}),
      },
      queries,
      warmup,
      truth,
    );
    const row: PlanGridRow = {
      tenantId,
      chunks: statistics.chunks,
      tableChunks: statistics.tableChunks,
      queries: queries.length,
      statement: { exact: t.exact, hnsw: t.hnsw, rule: t.rule },
      ruleUsesIndex: planSearch(statistics, false).vectorIndex,
      arm: { exact: t.armExact, hnsw: t.armHnsw, planner: t.planner },
      plannerPlan: await planKinds(
        db,
        queries.slice(0, 5).map((q) => arm({}).statement(q)),
        settings,
      ),
    };
    rows.push(row);
    log(
      `  statement p95: exact ${t.exact.p95Ms.toFixed(1)}, HNSW ${t.hnsw.p95Ms.toFixed(1)} (recall ${t.hnsw.recallAt8.toFixed(3)}), rule ${row.ruleUsesIndex ? 'HNSW' : 'exact'} ${t.rule.p95Ms.toFixed(1)} ms; arm p95: exact ${t.armExact.p95Ms.toFixed(1)}, HNSW ${t.armHnsw.p95Ms.toFixed(1)}, planner ${t.planner.p95Ms.toFixed(1)} ms (recall ${t.planner.recallAt8.toFixed(3)})`,
    );
  }
  return rows;
}
