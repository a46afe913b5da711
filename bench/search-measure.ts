/**
 * What every experiment of the search benchmark runs statements with: settings, plans, recall,
 * timing.
 */
import {
  toVectorLiteral,
  type Database,
  type LocalSettings,
  type Queryable,
} from '../lambdas/adapters/postgres/database';
import { filtersSql, visibilitySql } from '../lambdas/adapters/postgres/filter-sql';
import { efSearchFor, searchTransactionSettings } from '../lambdas/adapters/postgres/search-plan';
import { createSearchRepository } from '../lambdas/adapters/postgres/search-repository';
import { buildSearchSql } from '../lambdas/adapters/postgres/search-statement';
import { SqlParams } from '../lambdas/adapters/postgres/sql-params';
import { DEFAULT_SEARCH_SETTINGS } from '../lambdas/core/retrieval/search';
import type { ScopeStatistics, SearchQuery, SearchScope } from '../lambdas/core/retrieval/types';
import { GENERATOR, type BenchQuery } from './search-data';
import { WARMUP_QUERIES, EXACT_SAMPLE, PlanKind, RecallRun, ExactScan } from './search-config';
import { seconds } from './search-corpus';

export type Statement = { text: string; values: unknown[] };

export interface ScanSettings {
  readonly efSearch: number;
  readonly iterativeScan: 'relaxed_order' | 'off';
  /** Index scans off: the planner cannot use HNSW, so the answer is exact. */
  readonly exact?: boolean;
  /** Sorts off: only the ordered HNSW scan avoids a sort (used with {@link hnswArmStatement}). */
  readonly forceHnsw?: boolean;
}

/** What the repository sets per transaction for a request with `candidates` candidates. */
export function repositorySettings(candidates: number, tableChunks: number): ScanSettings {
  return {
    iterativeScan: 'relaxed_order',
    efSearch: efSearchFor(candidates, tableChunks),
  };
}

/**
 * The transaction settings (`SET LOCAL`) of a measurement: the repository's, with the scan
 * parameters the measurement varies.
 */
export function localSettings(s: ScanSettings): LocalSettings {
  return {
    ...searchTransactionSettings(Math.trunc(s.efSearch)),
    'hnsw.iterative_scan': s.iterativeScan,
    'hnsw.ef_search': Math.trunc(s.efSearch),
    ...(s.exact ? { enable_indexscan: 'off' } : {}),
    ...(s.forceHnsw ? { enable_sort: 'off' } : {}),
  };
}

export async function runIds(db: Database, stmt: Statement, s: ScanSettings): Promise<string[]> {
  return db.transaction(
    async (tx) =>
      (await tx.query<{ chunk_id: string }>(stmt.text, stmt.values)).rows.map((r) => r.chunk_id),
    localSettings(s),
  );
}

export interface PlanNode {
  'Node Type': string;
  'Parent Relationship'?: string;
  'One-Time Filter'?: string;
  'Subplan Name'?: string;
  'Index Name'?: string;
  'Relation Name'?: string;
  'Actual Total Time'?: number;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  Plans?: PlanNode[];
}

interface ExplainOutput {
  Plan: PlanNode;
  'Planning Time'?: number;
  'Execution Time'?: number;
}

export async function explain(
  tx: Queryable,
  stmt: Statement,
  analyze: boolean,
): Promise<ExplainOutput> {
  const { rows } = await tx.query<{ 'QUERY PLAN': [ExplainOutput] }>(
    `EXPLAIN (${analyze ? 'ANALYZE, ' : ''}FORMAT JSON) ${stmt.text}`,
    stmt.values,
  );
  const plan = rows[0]?.['QUERY PLAN'][0];
  if (!plan) throw new Error('EXPLAIN returned no plan');
  return plan;
}

export function* walk(node: PlanNode): Generator<PlanNode> {
  yield node;
  for (const child of node.Plans ?? []) yield* walk(child);
}

/**
 * How a statement reads chunks for its vector arm: through HNSW, a b-tree, or a full scan. The
 * search statement's arm is its `vec` CTE; with filters, two plans behind one-time filters of
 * which one runs (from EXPLAIN ANALYZE: the branch whose outer child executed); the arm-alone
 * statement is the whole plan.
 */
function vectorPlanKind(root: PlanNode): PlanKind {
  const cte = [...walk(root)].find((n) => n['Subplan Name'] === 'CTE vec') ?? root;
  const gated = [...walk(cte)].filter((n) => n['One-Time Filter'] !== undefined);
  const arm =
    gated.find((g) =>
      (g.Plans ?? []).some(
        (c) => c['Parent Relationship'] === 'Outer' && (c['Actual Loops'] ?? 0) > 0,
      ),
    ) ?? cte;
  const nodes = [...walk(arm)];
  if (nodes.some((n) => n['Index Name'] === 'chunks_embedding_hnsw_idx')) return 'hnsw index scan';
  const chunkScan = nodes.find((n) => n['Relation Name'] === 'chunks');
  if (chunkScan?.['Node Type'] === 'Seq Scan') return 'seq scan + sort';
  if (chunkScan?.['Node Type'] === 'Bitmap Heap Scan') {
    const index = [...walk(chunkScan)].find((n) => n['Node Type'] === 'Bitmap Index Scan')?.[
      'Index Name'
    ];
    return `btree ${index ?? '?'} + sort`;
  }
  if (chunkScan?.['Index Name']) return `btree ${chunkScan['Index Name']} + sort`;
  return 'other';
}

export async function planKinds(
  db: Database,
  stmts: readonly Statement[],
  s: ScanSettings,
): Promise<Record<PlanKind, number>> {
  const out: Record<PlanKind, number> = {};
  for (const stmt of stmts) {
    const kind = await db.transaction(
      async (tx) => vectorPlanKind((await explain(tx, stmt, true)).Plan),
      localSettings(s),
    );
    out[kind] = (out[kind] ?? 0) + 1;
  }
  return out;
}

export function recall(got: readonly string[], truth: readonly string[]): number {
  if (truth.length === 0) return got.length === 0 ? 1 : 0;
  const set = new Set(got);
  return truth.filter((id) => set.has(id)).length / truth.length;
}

export const mean = (xs: readonly number[]) =>
  xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length;

/** Nearest-rank percentile of sorted values. */
export function percentile(sorted: readonly number[], p: number): number {
  return (
    sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? 0
  );
}

/** A few untimed statements (plans, caches), then every statement once, timed; ids and QPS. */
async function timedPass(
  db: Database,
  stmts: readonly Statement[],
  s: ScanSettings,
  warmup = WARMUP_QUERIES,
) {
  for (const stmt of stmts.slice(0, warmup)) await runIds(db, stmt, s);
  const ids: string[][] = [];
  const t0 = performance.now();
  for (const stmt of stmts) ids.push(await runIds(db, stmt, s));
  return { ids, qps: stmts.length / seconds(t0) };
}

export const scopeOf = (tenantId: string): SearchScope => ({
  tenantId,
  userId: 'bench-user',
  globalTenants: DEFAULT_SEARCH_SETTINGS.globalTenants,
});

/** The scope statistics the use case plans a tenant's statement with, read as it reads them. */
export async function statisticsOf(db: Database, tenantId: string): Promise<ScopeStatistics> {
  return (await createSearchRepository(db).prepare(scopeOf(tenantId))).statistics;
}

/** The vector arm as the product runs it (`mode: 'vector'`), without the per-source cap. */
export function vectorStatement(
  tenantId: string,
  statistics: ScopeStatistics,
  q: BenchQuery,
  topK: number,
  candidates: number,
): Statement {
  const query: SearchQuery = {
    text: q.text,
    embedding: q.embedding,
    topK,
    mode: 'vector',
    filters: {},
    minScore: 0,
    maxChunksPerSource: topK,
    allowedSourceTypes: null,
    fusion: { denseWeight: 1, candidates },
  };
  return buildSearchSql(scopeOf(tenantId), query, statistics);
}

/**
 * The `vec` CTE of the search statement on its own (same predicate, same candidate LIMIT), then
 * the top_k by distance. With sorts disabled the planner's only sort-free way to order the
 * candidates is the HNSW index, which is how HNSW is measured where the planner avoids it; on the
 * full statement, disabling sorts would distort every other join.
 */
export function hnswArmStatement(
  tenantId: string,
  q: BenchQuery,
  topK: number,
  candidates: number,
): Statement {
  const p = new SqlParams();
  const emb = p.add(toVectorLiteral(q.embedding), 'vector');
  const where = `${visibilitySql(scopeOf(tenantId), p)} AND ${filtersSql({}, null, p)}`;
  const text = `SELECT v.id AS chunk_id FROM (
      SELECT c.id, c.embedding <=> ${emb} AS distance FROM chunks c JOIN documents d ON d.id = c.document_id
      WHERE ${where}
      ORDER BY c.embedding <=> ${emb}
      LIMIT ${p.add(candidates, 'int')}) v
    ORDER BY v.distance, v.id LIMIT ${p.add(topK, 'int')}`;
  return { text, values: p.values };
}

const truths = new WeakMap<Database, Map<string, { k: number; ids: string[][] }>>();

/**
 * The exact top-k of every query in one statement, in the same scope as the search statement.
 * Each vector is read (and de-TOASTed) once for all queries instead of once per query; the
 * `+ zero` makes that in-memory copy, since a bare column would carry the TOAST pointer into
 * the CTE and every distance would fetch the vector again. Answers are kept for the run: a later
 * section asking the same queries of the same tenant for as many or fewer rows reuses them.
 */
export async function groundTruth(
  db: Database,
  tenantId: string,
  queries: readonly BenchQuery[],
  k: number,
): Promise<string[][]> {
  const memo = truths.get(db) ?? new Map<string, { k: number; ids: string[][] }>();
  truths.set(db, memo);
  const key = [tenantId, ...queries.map((q) => q.text)].join('\n');
  const known = memo.get(key);
  if (known && known.k >= k) return known.ids.map((ids) => ids.slice(0, k));
  const p = new SqlParams();
  const zero = p.add(toVectorLiteral(new Array<number>(GENERATOR.dimension).fill(0)), 'vector');
  const where = `${visibilitySql(scopeOf(tenantId), p)} AND ${filtersSql({}, null, p)}`;
  const ordinals = p.add(
    queries.map((_, i) => i),
    'int[]',
  );
  const vectors = p.add(
    queries.map((q) => toVectorLiteral(q.embedding)),
    'vector[]',
  );
  const text = `WITH c AS MATERIALIZED (
      SELECT c.id, c.embedding + ${zero} AS e FROM chunks c JOIN documents d ON d.id = c.document_id WHERE ${where}),
    q AS MATERIALIZED (SELECT i, v FROM unnest(${ordinals}, ${vectors}) AS t(i, v))
    SELECT q.i, t.id FROM q CROSS JOIN LATERAL (
      SELECT c.id, c.e <=> q.v AS d FROM c ORDER BY c.e <=> q.v LIMIT ${p.add(k, 'int')}) t
    ORDER BY q.i, t.d, t.id`;
  const rows = await db.transaction(async (tx) => {
    // The copies stay in memory (about 2 KB per chunk of the scope).
    await tx.exec(`SET LOCAL work_mem = '1GB'`);
    return (await tx.query<{ i: number; id: string }>(text, p.values)).rows;
  });
  const out = queries.map((): string[] => []);
  for (const r of rows) out[r.i]?.push(r.id);
  memo.set(key, { k, ids: out });
  return out;
}

/** Ground truth for all queries, and the exact scan timed on a sample with the product statement. */
export async function exactScan(
  db: Database,
  tenantId: string,
  queries: readonly BenchQuery[],
  stmts: readonly Statement[],
  s: ScanSettings,
) {
  const t0 = performance.now();
  const truth = await groundTruth(db, tenantId, queries, 10);
  const truthSeconds = seconds(t0);
  const sample = stmts.slice(0, EXACT_SAMPLE);
  const settings = { ...s, exact: true };
  const kinds = await planKinds(db, sample, settings);
  // Two warm-up scans: the exact scan reads the whole scope, caching it is the point of one.
  const run = await timedPass(db, sample, settings, 2);
  const exact: ExactScan = {
    sample: sample.length,
    qps: run.qps,
    planKinds: kinds,
    agreementWithTruth: mean(run.ids.map((ids, i) => recall(ids, truth[i] ?? []))),
    truthSeconds,
  };
  return { truth, exact };
}

export async function recallRun(
  db: Database,
  label: string,
  stmts: readonly Statement[],
  s: ScanSettings,
  truth: readonly string[][],
  topK: number,
): Promise<RecallRun> {
  const kinds = await planKinds(db, stmts, s);
  const run = await timedPass(db, stmts, s);
  return {
    label,
    efSearch: s.efSearch,
    iterativeScan: s.iterativeScan,
    recallAt10: mean(run.ids.map((ids, i) => recall(ids, truth[i] ?? []))),
    qps: run.qps,
    avgRows: mean(run.ids.map((ids) => ids.length)),
    fullTopK: mean(run.ids.map((ids) => (ids.length === topK ? 1 : 0))),
    planKinds: kinds,
  };
}

export const kindsText = (k: Readonly<Record<PlanKind, number>>) =>
  Object.entries(k)
    .map(([kind, n]) => `${kind} x${n}`)
    .join(', ');
