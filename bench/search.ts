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
 *     planned per search (EXPLAIN ANALYZE).
 * Every figure is measured in the run that prints it; nothing asserts on time.
 *
 *   node -r tsx/cjs bench/search.ts [--chunks 100000] [--queries 100]
 *   GROUNDWORK_BENCH_DATABASE_URL overrides the server (default: the local groundwork_bench).
 */
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { Client } from 'pg';
import {
  toVectorLiteral,
  type Database,
  type LocalSettings,
  type Queryable,
} from '../lambdas/adapters/postgres/database';
import { filtersSql, visibilitySql } from '../lambdas/adapters/postgres/filter-sql';
import { loadMigrations, migrate } from '../lambdas/adapters/postgres/migrate';
import { createPgDatabase } from '../lambdas/adapters/postgres/pg-database';
import {
  DEFAULT_SEARCH_SQL,
  efSearchFor,
  searchTransactionSettings,
  type SearchSqlOptions,
} from '../lambdas/adapters/postgres/search-plan';
import {
  createSearchRepository,
  SEARCH_ROLE,
} from '../lambdas/adapters/postgres/search-repository';
import { buildSearchSql } from '../lambdas/adapters/postgres/search-statement';
import { SqlParams } from '../lambdas/adapters/postgres/sql-params';
import type { Embedder } from '../lambdas/core/ports';
import { createSearch, DEFAULT_SEARCH_SETTINGS } from '../lambdas/core/retrieval/search';
import type {
  ScopeStatistics,
  SearchMode,
  SearchQuery,
  SearchScope,
} from '../lambdas/core/retrieval/types';
import {
  createWorld,
  generateDocuments,
  generateQueries,
  GENERATOR,
  TENANTS,
  type BenchQuery,
  type DocumentBatch,
  type World,
} from './search-data';

export const BENCH_DATABASE_URL =
  process.env.GROUNDWORK_BENCH_DATABASE_URL ??
  'postgres://groundwork:groundwork@127.0.0.1:5432/groundwork_bench';

/** The targets the report checks against. */
export const TARGETS = { recallAt10: 0.95, hnswSpeedup: 20, hybridP95Ms: 25 } as const;

/** pgvector's default `hnsw.ef_search`. */
const PGVECTOR_DEFAULT_EF_SEARCH = 40;
const EF_SEARCH_SWEEP = [40, 64, 100, 200, 400] as const;
const DOCUMENTS_PER_BATCH = 400;
/** Untimed statements before each timed pass (plans, caches). */
const WARMUP_QUERIES = 10;
/** Queries timed with the exact scan (the ground truth of all queries is computed in one batch). */
const EXACT_SAMPLE = 10;
const LATENCY_QUERIES = 200;
const BREAKDOWN_SAMPLE = 10;
const SWEEP_QUERIES = 100;
/** Keyword-arm budgets of the sweep (summed document frequency of the lexemes that select chunks). */
const DF_BUDGET_SWEEP = [250, 500, 1_000, 2_000, 5_000] as const;
/** A budget no tenant of the benchmark reaches: the arm scores every matching chunk. */
const UNBOUNDED_BUDGET = 2 ** 31 - 1;
/** Queries the unbounded arm answers (untimed) for the agreement of each budget. */
const AGREEMENT_QUERIES = 30;
/** Shares of the big tenant's documents a metadata filter selects (section 5). */
const SELECTIVE_SHARES = [0.002, 0.02, 0.2] as const;
const SELECTIVE_QUERIES = 20;

export interface SearchBenchOptions {
  /** Chunks in the corpus, a multiple of 500 so that the 1% and 10% tenants are exact. @default 100_000 */
  readonly chunks?: number;
  /** Queries of the recall measurements (sections 2 and 3). @default 100 */
  readonly queries?: number;
  /** Receives progress and report lines. @default console.log */
  readonly log?: (line: string) => void;
  /** @default BENCH_DATABASE_URL */
  readonly databaseUrl?: string;
  /**
   * Wall-clock budget of one latency run: it stops before its 200 queries once the budget is
   * spent (a run 50x over target needs no 200 samples to show it). @default 30
   */
  readonly latencyBudgetSeconds?: number;
}

/**
 * How the planner served the vector arm (`vec` CTE) of a statement: `hnsw index scan`,
 * `btree <index> + sort` (exact), `seq scan + sort` (exact) or `other`.
 */
export type PlanKind = string;

export interface RecallRun {
  readonly label: string;
  readonly efSearch: number;
  readonly iterativeScan: 'relaxed_order' | 'off';
  readonly recallAt10: number;
  readonly qps: number;
  readonly avgRows: number;
  /** Share of queries that returned all top_k rows. */
  readonly fullTopK: number;
  readonly planKinds: Readonly<Record<PlanKind, number>>;
}

export interface ExactScan {
  /** Queries timed with index scans off (the product statement). */
  readonly sample: number;
  readonly qps: number;
  readonly planKinds: Readonly<Record<PlanKind, number>>;
  /** recall@10 of those exact answers against the batched ground truth (1 when consistent). */
  readonly agreementWithTruth: number;
  readonly truthSeconds: number;
}

export interface LatencyRun {
  readonly label: string;
  readonly tenantId: string;
  readonly queries: number;
  /** True when the run stopped early at its time budget. */
  readonly timeCapped: boolean;
  readonly p50Ms: number;
  readonly p95Ms: number;
  readonly p99Ms: number;
  readonly meanMs: number;
  readonly avgHits: number;
  /**
   * Share of the machine's CPU time the hypervisor gave to other guests during the run
   * (`steal` in /proc/stat); null where that is not available. A run with more of it measured a
   * slower machine, not slower code.
   */
  readonly stealShare: number | null;
}

export interface SelectiveRun {
  readonly share: number;
  readonly documents: number;
  readonly chunks: number;
  readonly queries: number;
  readonly chosen: SelectivePlanRun;
  readonly hnswForced: SelectivePlanRun;
}

export interface SelectivePlanRun {
  readonly vectorMs: number;
  readonly hybridMs: number;
  readonly vectorRecallAt8: number;
}

export interface CteTiming {
  readonly cte: string;
  /** Mean time spent in the CTE itself, excluding the CTEs it reads (EXPLAIN ANALYZE). */
  readonly selfMs: number;
  /** Mean rows the CTE produced. */
  readonly rows: number;
  /** Mean rows of its widest plan node: what it worked through to produce them. */
  readonly peakRows: number;
}

export interface SearchBenchResult {
  readonly schema: string;
  readonly corpus: {
    readonly chunks: number;
    readonly documents: number;
    readonly tenants: Readonly<Record<string, number>>;
    /** Table and index sizes, and the server's shared_buffers, to read the timings against. */
    readonly sizes: Readonly<Record<string, string>>;
  };
  readonly load: {
    readonly reused: boolean;
    readonly loadSeconds: number | null;
    readonly ginIndexSeconds: number | null;
    readonly hnswIndexSeconds: number | null;
    readonly analyzeSeconds: number | null;
  };
  readonly vectorArm: {
    readonly tenantId: string;
    readonly queries: number;
    readonly exact: ExactScan;
    readonly sweep: readonly RecallRun[];
    /** At pgvector's default ef_search (40). */
    readonly defaultRecallAt10: number;
    readonly defaultSpeedup: number;
    /** The smallest ef_search of the sweep that meets the recall target, and its speed-up. */
    readonly efSearchMeetingRecall: number | null;
    readonly speedupAtThatEfSearch: number | null;
  };
  readonly filtered: readonly {
    readonly tenantId: string;
    readonly selectivity: number;
    readonly exact: ExactScan;
    readonly runs: readonly RecallRun[];
  }[];
  readonly latency: readonly LatencyRun[];
  readonly hybridBreakdown: readonly {
    readonly tenantId: string;
    readonly ctes: readonly CteTiming[];
    readonly planningMs: number;
    readonly executionMs: number;
  }[];
  /** The keyword arm's budget swept on the big tenant; `dfBudget` null is the unbounded arm. */
  readonly budgetSweep: readonly {
    readonly dfBudget: number | null;
    readonly hybrid: LatencyRun;
    /** Mean share of the unbounded keyword arm's top 10 this budget also returns (keyword mode). */
    readonly keywordAgreement: number;
    /** Mean share of the unbounded hybrid top 8 this budget also returns. */
    readonly hybridAgreement: number;
    readonly agreementQueries: number;
  }[];
  /**
   * A metadata filter selecting a share of the big tenant's documents: the vector arm's recall@8
   * against a brute-force answer and mean times, with the plan the statement chose and with HNSW
   * forced.
   */
  readonly selective: readonly SelectiveRun[];
  /** Logical CPUs and the 1-minute load average before and after the latency runs. */
  readonly machine: {
    readonly cpus: number;
    readonly loadBefore: number;
    readonly loadAfter: number;
    /** What was loaded into shared_buffers before the latency runs (`prewarm`). */
    readonly bufferCache: string;
  };
  readonly wallSeconds: number;
}

// ---------------------------------------------------------------------------------------------
// Database and data

function openSchema(url: string, schema: string, max = 2): Database {
  // Tables in the benchmark's schema; the vector type from public, where the extension lives.
  return createPgDatabase({
    connectionString: url,
    options: `-c search_path=${schema},public`,
    max,
  });
}

async function withAdmin<T>(url: string, fn: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

const INSERT_DOCUMENTS = `
  INSERT INTO documents (id, tenant_id, source_uri, title, source_type, language, visibility, status,
                         chunk_count, embedding_model, content_hash, attributes_hash, source_updated_at)
  SELECT t.id, t.tenant, t.uri, t.title, 'doc', 'en', 'tenant', 'indexed', $5, 'local/use-lite-512',
         t.uri, t.uri, '2024-01-01T00:00:00Z'
  FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[]) AS t(id, tenant, uri, title)`;

// The same columns and full-text vector as the document repository writes (title, newline, text).
const INSERT_CHUNKS = `
  INSERT INTO chunks (document_id, tenant_id, chunk_index, text, start_offset, end_offset,
                      token_count, embedding, fts)
  SELECT t.doc, t.tenant, t.idx, t.txt, t.s, t.s + length(t.txt), t.tok, t.emb::vector,
         to_tsvector('english'::regconfig, t.title || E'\\n' || t.txt)
  FROM unnest($1::uuid[], $2::text[], $3::int[], $4::text[], $5::int[], $6::int[], $7::text[], $8::text[])
       AS t(doc, tenant, idx, txt, s, tok, emb, title)`;

async function insertBatch(db: Database, batch: DocumentBatch): Promise<void> {
  const offsets = new Map<string, number>();
  await db.transaction(async (tx) => {
    await tx.query(INSERT_DOCUMENTS, [
      batch.documents.map((d) => d.id),
      batch.documents.map((d) => d.tenantId),
      batch.documents.map((d) => d.sourceUri),
      batch.documents.map((d) => d.title),
      GENERATOR.chunksPerDocument,
    ]);
    await tx.query(INSERT_CHUNKS, [
      batch.chunks.map((c) => c.documentId),
      batch.chunks.map((c) => c.tenantId),
      batch.chunks.map((c) => c.index),
      batch.chunks.map((c) => c.text),
      batch.chunks.map((c) => {
        const start = offsets.get(c.documentId) ?? 0;
        offsets.set(c.documentId, start + c.text.length + 1);
        return start;
      }),
      batch.chunks.map((c) => c.tokenCount),
      batch.chunks.map((c) => c.embedding),
      batch.chunks.map((c) => c.title),
    ]);
  });
}

/** Generates documents in slices, yielding between them so that the previous insert's I/O proceeds. */
async function generateYielding(world: World, from: number, to: number): Promise<DocumentBatch> {
  const out: DocumentBatch = { documents: [], chunks: [] };
  for (let start = from; start < to; start += 50) {
    const part = generateDocuments(world, start, Math.min(to, start + 50));
    out.documents.push(...part.documents);
    out.chunks.push(...part.chunks);
    await new Promise((resolve) => setImmediate(resolve));
  }
  return out;
}

const seconds = (t0: number) => (performance.now() - t0) / 1000;

/** Loads the corpus into its schema unless a previous run completed it (marker row). */
async function ensureCorpus(
  url: string,
  schema: string,
  chunks: number,
  world: World,
  log: (line: string) => void,
): Promise<SearchBenchResult['load']> {
  // A new or changed migration means a new schema: the data is reloaded rather than migrated.
  const migrations = (await loadMigrations()).map((m) => `${m.version}:${m.checksum}`);
  const marker = JSON.stringify({ generator: GENERATOR, chunks, migrations });
  const existing = await withAdmin(url, async (admin) => {
    const { rows } = await admin.query<{ exists: boolean }>(
      'SELECT to_regclass($1) IS NOT NULL AS exists',
      [`${schema}.bench_meta`],
    );
    if (!rows[0]?.exists) return 'absent or incomplete';
    // Compared as jsonb: key order is not preserved by the jsonb column.
    const meta = await admin.query<{ same: boolean }>(
      `SELECT value = $1::jsonb AS same FROM ${schema}.bench_meta WHERE key = 'complete'`,
      [marker],
    );
    if (!meta.rows[0]) return 'absent or incomplete';
    return meta.rows[0].same ? 'complete' : 'made by another generator version or schema';
  });
  if (existing === 'complete') {
    log(`data: reusing schema ${schema} (complete, same generator)`);
    return {
      reused: true,
      loadSeconds: null,
      ginIndexSeconds: null,
      hnswIndexSeconds: null,
      analyzeSeconds: null,
    };
  }

  log(`data: building schema ${schema} (${existing})`);
  await withAdmin(url, async (admin) => {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.query(`CREATE SCHEMA ${schema}`);
  });
  const db = openSchema(url, schema, 3);
  try {
    await migrate(db);
    await db.exec('CREATE TABLE bench_meta (key text PRIMARY KEY, value jsonb NOT NULL)');
    // Both indexes are rebuilt after the load: far cheaper than maintaining them row by row.
    const { rows: indexes } = await db.query<{ indexname: string; indexdef: string }>(
      `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1
         AND indexname IN ('chunks_embedding_hnsw_idx', 'chunks_tenant_lexemes_idx')`,
      [schema],
    );
    const hnswDef = indexes.find((i) => i.indexname === 'chunks_embedding_hnsw_idx')?.indexdef;
    const ginDef = indexes.find((i) => i.indexname === 'chunks_tenant_lexemes_idx')?.indexdef;
    if (!hnswDef || !ginDef)
      throw new Error(
        'the migrations no longer create chunks_embedding_hnsw_idx and chunks_tenant_lexemes_idx',
      );
    await db.exec('DROP INDEX chunks_embedding_hnsw_idx; DROP INDEX chunks_tenant_lexemes_idx');

    const documents = chunks / GENERATOR.chunksPerDocument;
    let t0 = performance.now();
    let pending: Promise<void> = Promise.resolve();
    let reported = 0;
    for (let from = 0; from < documents; from += DOCUMENTS_PER_BATCH) {
      const batch = await generateYielding(
        world,
        from,
        Math.min(documents, from + DOCUMENTS_PER_BATCH),
      );
      await pending;
      pending = insertBatch(db, batch);
      const done = Math.floor(((from + batch.documents.length) / documents) * 10);
      if (done > reported) {
        reported = done;
        log(
          `  generated ${(from + batch.documents.length) * GENERATOR.chunksPerDocument} chunks (${seconds(t0).toFixed(1)} s)`,
        );
      }
    }
    await pending;
    const loadSeconds = seconds(t0);

    t0 = performance.now();
    await db.exec(ginDef);
    const ginIndexSeconds = seconds(t0);
    t0 = performance.now();
    await db.transaction(async (tx) => {
      await tx.exec(`SET LOCAL maintenance_work_mem = '2GB'`);
      await tx.exec(hnswDef);
    });
    const hnswIndexSeconds = seconds(t0);
    t0 = performance.now();
    // VACUUM also sets hint bits and the visibility map, the steady state of a live table.
    for (const table of ['documents', 'chunks', 'term_stats', 'tenant_stats'])
      await db.exec(`VACUUM (ANALYZE) ${table}`);
    const analyzeSeconds = seconds(t0);
    await db.query(`INSERT INTO bench_meta (key, value) VALUES ('complete', $1::jsonb)`, [marker]);
    return { reused: false, loadSeconds, ginIndexSeconds, hnswIndexSeconds, analyzeSeconds };
  } finally {
    await db.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Running statements

type Statement = { text: string; values: unknown[] };

interface ScanSettings {
  readonly efSearch: number;
  readonly iterativeScan: 'relaxed_order' | 'off';
  /** Index scans off: the planner cannot use HNSW, so the answer is exact. */
  readonly exact?: boolean;
  /** Sorts off: only the ordered HNSW scan avoids a sort (used with {@link hnswArmStatement}). */
  readonly forceHnsw?: boolean;
}

/** What the repository sets per transaction for a request with `candidates` candidates. */
function repositorySettings(candidates: number): ScanSettings {
  return {
    iterativeScan: 'relaxed_order',
    efSearch: efSearchFor(candidates),
  };
}

/**
 * The transaction settings (`SET LOCAL`) of a measurement: the repository's, with the scan
 * parameters the measurement varies.
 */
function localSettings(s: ScanSettings): LocalSettings {
  return {
    ...searchTransactionSettings(Math.trunc(s.efSearch)),
    'hnsw.iterative_scan': s.iterativeScan,
    'hnsw.ef_search': Math.trunc(s.efSearch),
    ...(s.exact ? { enable_indexscan: 'off' } : {}),
    ...(s.forceHnsw ? { enable_sort: 'off' } : {}),
  };
}

async function runIds(db: Database, stmt: Statement, s: ScanSettings): Promise<string[]> {
  return db.transaction(
    async (tx) =>
      (await tx.query<{ chunk_id: string }>(stmt.text, stmt.values)).rows.map((r) => r.chunk_id),
    localSettings(s),
  );
}

interface PlanNode {
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

async function explain(tx: Queryable, stmt: Statement, analyze: boolean): Promise<ExplainOutput> {
  const { rows } = await tx.query<{ 'QUERY PLAN': [ExplainOutput] }>(
    `EXPLAIN (${analyze ? 'ANALYZE, ' : ''}FORMAT JSON) ${stmt.text}`,
    stmt.values,
  );
  const plan = rows[0]?.['QUERY PLAN'][0];
  if (!plan) throw new Error('EXPLAIN returned no plan');
  return plan;
}

function* walk(node: PlanNode): Generator<PlanNode> {
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

async function planKinds(
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

function recall(got: readonly string[], truth: readonly string[]): number {
  if (truth.length === 0) return got.length === 0 ? 1 : 0;
  const set = new Set(got);
  return truth.filter((id) => set.has(id)).length / truth.length;
}

const mean = (xs: readonly number[]) =>
  xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length;

/** Nearest-rank percentile of sorted values. */
function percentile(sorted: readonly number[], p: number): number {
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

const scopeOf = (tenantId: string): SearchScope => ({
  tenantId,
  userId: 'bench-user',
  globalTenants: DEFAULT_SEARCH_SETTINGS.globalTenants,
});

/** The scope statistics the use case plans a tenant's statement with, read as it reads them. */
async function statisticsOf(db: Database, tenantId: string): Promise<ScopeStatistics> {
  return (await createSearchRepository(db).prepare(scopeOf(tenantId))).statistics;
}

/** The vector arm as the product runs it (`mode: 'vector'`), without the per-source cap. */
function vectorStatement(
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
function hnswArmStatement(
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

/**
 * The exact top-k of every query in one statement, in the same scope as the search statement.
 * Each vector is read (and de-TOASTed) once for all queries instead of once per query; the
 * `+ zero` makes that in-memory copy, since a bare column would carry the TOAST pointer into
 * the CTE and every distance would fetch the vector again.
 */
async function groundTruth(
  db: Database,
  tenantId: string,
  queries: readonly BenchQuery[],
  k: number,
): Promise<string[][]> {
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
    SELECT q.i, t.id FROM q CROSS JOIN LATERAL (SELECT c.id FROM c ORDER BY c.e <=> q.v LIMIT ${p.add(k, 'int')}) t`;
  const rows = await db.transaction(async (tx) => {
    // The copies stay in memory (about 2 KB per chunk of the scope).
    await tx.exec(`SET LOCAL work_mem = '1GB'`);
    return (await tx.query<{ i: number; id: string }>(text, p.values)).rows;
  });
  const out = queries.map((): string[] => []);
  for (const r of rows) out[r.i]?.push(r.id);
  return out;
}

/** Ground truth for all queries, and the exact scan timed on a sample with the product statement. */
async function exactScan(
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

async function recallRun(
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

const kindsText = (k: Readonly<Record<PlanKind, number>>) =>
  Object.entries(k)
    .map(([kind, n]) => `${kind} x${n}`)
    .join(', ');

// ---------------------------------------------------------------------------------------------
// Sections 2 and 3: recall and throughput

async function measureVectorArm(
  db: Database,
  queries: readonly BenchQuery[],
  log: (line: string) => void,
): Promise<SearchBenchResult['vectorArm']> {
  const tenantId = TENANTS.big;
  // top_k 10 from 10 candidates: the index's own top-10, at the ef_search of each row.
  const statistics = await statisticsOf(db, tenantId);
  const stmts = queries.map((q) => vectorStatement(tenantId, statistics, q, 10, 10));
  log(`vector arm: ground truth of ${queries.length} queries, exact scan timed on ${EXACT_SAMPLE}`);
  const { truth, exact } = await exactScan(db, tenantId, queries, stmts, repositorySettings(10));
  log(
    `  exact: ${exact.qps.toFixed(1)} QPS; ground truth in ${exact.truthSeconds.toFixed(1)} s, agrees with the exact scan ${(100 * exact.agreementWithTruth).toFixed(1)}%`,
  );
  const sweep: RecallRun[] = [];
  for (const efSearch of EF_SEARCH_SWEEP) {
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

async function measureFiltered(
  db: Database,
  queries: readonly BenchQuery[],
  tenantId: string,
  selectivity: number,
  log: (line: string) => void,
): Promise<SearchBenchResult['filtered'][number]> {
  const topK = 10;
  // As the use case and repository set them: candidates = max(50, 4 top_k), ef_search = candidates.
  const candidates = Math.max(DEFAULT_SEARCH_SETTINGS.candidates, topK * 4);
  const settings = repositorySettings(candidates);
  const statistics = await statisticsOf(db, tenantId);
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

// ---------------------------------------------------------------------------------------------
// Section 4: latency of the use case

/** An embedder the benchmark never calls: query vectors are precomputed (embedding excluded). */
const UNUSED_EMBEDDER: Embedder = {
  modelId: 'local/use-lite-512',
  dimension: 512,
  async embed() {
    throw new Error('the search benchmark passes precomputed query vectors');
  },
};

const HYBRID_TOP_K = 8;
/** What the use case asks of each arm for top_k 8: max(candidates setting, 4 top_k). */
const HYBRID_CANDIDATES = Math.max(DEFAULT_SEARCH_SETTINGS.candidates, HYBRID_TOP_K * 4);
const HYBRID_SETTINGS = repositorySettings(HYBRID_CANDIDATES);

/** The query the use case hands the store for a top_k 8 request with no tenant policy. */
function storeQuery(q: BenchQuery, mode: SearchMode = 'hybrid'): SearchQuery {
  return {
    text: q.text,
    embedding: q.embedding,
    topK: HYBRID_TOP_K,
    mode,
    filters: {},
    minScore: DEFAULT_SEARCH_SETTINGS.defaultMinScore,
    maxChunksPerSource: DEFAULT_SEARCH_SETTINGS.defaultMaxChunksPerSource,
    allowedSourceTypes: null,
    fusion: {
      ...(DEFAULT_SEARCH_SETTINGS.fusionByModel[UNUSED_EMBEDDER.modelId] ?? {
        denseWeight: DEFAULT_SEARCH_SETTINGS.defaultDenseWeight,
      }),
      candidates: HYBRID_CANDIDATES,
    },
  };
}

/** The machine's CPU time counters (/proc/stat, all CPUs): stolen and total; null off Linux. */
function cpuTimes(): { steal: number; total: number } | null {
  try {
    const first = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
    // user nice system idle iowait irq softirq steal (guest time is already in user and nice).
    const fields = first.trim().split(/\s+/).slice(1, 9).map(Number);
    if (fields.length < 8 || fields.some((x) => !Number.isFinite(x))) return null;
    return { steal: fields[7]!, total: fields.reduce((a, b) => a + b, 0) };
  } catch {
    return null;
  }
}

/** One way of answering a query, timed by {@link measureLatency}. */
interface TimedRun {
  readonly label: string;
  readonly run: (tenantId: string, q: BenchQuery) => Promise<string[]>;
}

/**
 * Times each run over the queries (after a warm-up), interleaved: every query is answered by
 * every run in turn, the order rotated from one query to the next, so that runs compared in one
 * call see the same machine (on this shared machine its speed changes within minutes). Stops
 * once past 20 queries and the wall-clock budget per run; the stolen CPU time is the block's.
 */
async function measureLatency(
  runs: readonly TimedRun[],
  tenantId: string,
  warmup: readonly BenchQuery[],
  queries: readonly BenchQuery[],
  budgetSeconds: number,
): Promise<LatencyRun[]> {
  for (const { run } of runs) for (const q of warmup) await run(tenantId, q);
  const times = runs.map((): number[] => []);
  const hits = runs.map((): number[] => []);
  const cpuBefore = cpuTimes();
  const started = performance.now();
  for (const [i, q] of queries.entries()) {
    if (i >= 20 && seconds(started) > budgetSeconds * runs.length) break;
    for (let j = 0; j < runs.length; j++) {
      const k = (i + j) % runs.length;
      const t0 = performance.now();
      const ids = await runs[k]!.run(tenantId, q);
      times[k]!.push(performance.now() - t0);
      hits[k]!.push(ids.length);
    }
  }
  const cpuAfter = cpuTimes();
  const ticks = cpuBefore && cpuAfter ? cpuAfter.total - cpuBefore.total : 0;
  return runs.map(({ label }, k) => {
    const sorted = [...times[k]!].sort((a, b) => a - b);
    return {
      label,
      tenantId,
      queries: sorted.length,
      timeCapped: sorted.length < queries.length,
      p50Ms: percentile(sorted, 50),
      p95Ms: percentile(sorted, 95),
      p99Ms: percentile(sorted, 99),
      meanMs: mean(sorted),
      avgHits: mean(hits[k]!),
      stealShare:
        cpuBefore && cpuAfter && ticks > 0 ? (cpuAfter.steal - cpuBefore.steal) / ticks : null,
    };
  });
}

/**
 * Section 5: a metadata filter (`equals` on a key set for the measurement, cleared afterwards)
 * selecting a share of the big tenant's documents, picked by a hash of their ids. The truth is
 * a brute-force scan of the matching chunks (index scans off); the statement runs with the plan
 * it chooses and with HNSW forced (`filteredDocumentsCap` 0).
 */
async function measureSelective(
  db: Database,
  queries: readonly BenchQuery[],
  log: (line: string) => void,
): Promise<SelectiveRun[]> {
  const KEY_PREFIX = 'bench_share_';
  const clear = () =>
    db.query(
      `UPDATE documents SET metadata = metadata - ARRAY(SELECT k FROM jsonb_object_keys(metadata) k WHERE k LIKE $1)
        WHERE tenant_id = $2 AND EXISTS (SELECT 1 FROM jsonb_object_keys(metadata) k WHERE k LIKE $1)`,
      [`${KEY_PREFIX}%`, TENANTS.big],
    );
  await clear();
  const runs: SelectiveRun[] = [];
  try {
    for (const share of SELECTIVE_SHARES) {
      const key = `${KEY_PREFIX}${share}`;
      const { rows } = await db.query<{ documents: string; chunks: string }>(
        `WITH picked AS (
           UPDATE documents SET metadata = metadata || jsonb_build_object($1::text, true)
            WHERE tenant_id = $2
              AND ('x' || substr(md5(id::text || $1), 1, 8))::bit(32)::bigint < $3::float8 * 4294967296
           RETURNING chunk_count)
         SELECT count(*)::text AS documents, coalesce(sum(chunk_count), 0)::text AS chunks FROM picked`,
        [key, TENANTS.big, share],
      );
      await db.exec('ANALYZE documents');
      log(`selective filter: ${100 * share}% of ${TENANTS.big}'s documents`);
      const filters = { metadata: { equals: { key, value: true } } };
      const statistics = await statisticsOf(db, TENANTS.big);
      const statement = (q: BenchQuery, mode: SearchMode, options: Partial<SearchSqlOptions>) =>
        buildSearchSql(
          scopeOf(TENANTS.big),
          { ...storeQuery(q, mode), filters, maxChunksPerSource: HYBRID_TOP_K },
          statistics,
          options,
        );
      const timed = async (stmt: Statement) => {
        const t0 = performance.now();
        const ids = await runIds(db, stmt, HYBRID_SETTINGS);
        return { ms: performance.now() - t0, ids };
      };
      const plans = { chosen: {}, hnswForced: { filteredDocumentsCap: 0 } } as const;
      const acc = {
        chosen: { vector: [] as number[], hybrid: [] as number[], recall: [] as number[] },
        hnswForced: { vector: [] as number[], hybrid: [] as number[], recall: [] as number[] },
      };
      for (const q of queries) {
        const p = new SqlParams();
        const emb = p.add(toVectorLiteral(q.embedding), 'vector');
        const truth = await runIds(
          db,
          {
            text: `SELECT c.id AS chunk_id FROM chunks c JOIN documents d ON d.id = c.document_id
                    WHERE c.tenant_id = ${p.add(TENANTS.big)} AND d.metadata ? ${p.add(key)}
                    ORDER BY c.embedding <=> ${emb} LIMIT ${HYBRID_TOP_K}`,
            values: p.values,
          },
          { ...HYBRID_SETTINGS, exact: true },
        );
        for (const name of ['chosen', 'hnswForced'] as const) {
          const vector = await timed(statement(q, 'vector', plans[name]));
          const hybrid = await timed(statement(q, 'hybrid', plans[name]));
          acc[name].vector.push(vector.ms);
          acc[name].hybrid.push(hybrid.ms);
          acc[name].recall.push(truth.length === 0 ? 1 : recall(vector.ids, truth));
        }
      }
      const summary = (a: (typeof acc)['chosen']): SelectivePlanRun => ({
        vectorMs: mean(a.vector),
        hybridMs: mean(a.hybrid),
        vectorRecallAt8: mean(a.recall),
      });
      runs.push({
        share,
        documents: Number(rows[0]?.documents ?? 0),
        chunks: Number(rows[0]?.chunks ?? 0),
        queries: queries.length,
        chosen: summary(acc.chosen),
        hnswForced: summary(acc.hnswForced),
      });
      log(
        `  chosen: vector ${mean(acc.chosen.vector).toFixed(1)} ms, recall@8 ${mean(acc.chosen.recall).toFixed(3)}; HNSW forced: ${mean(acc.hnswForced.vector).toFixed(1)} ms, recall@8 ${mean(acc.hnswForced.recall).toFixed(3)}`,
      );
    }
  } finally {
    await clear();
    await db.exec('ANALYZE documents');
  }
  return runs;
}

/** Mean self time and rows per CTE over EXPLAIN ANALYZE of the given statements. */
async function cteBreakdown(db: Database, stmts: readonly Statement[]) {
  const self = new Map<string, number[]>();
  const rows = new Map<string, number[]>();
  const peak = new Map<string, number[]>();
  const executions: number[] = [];
  const plannings: number[] = [];
  // A CTE is evaluated where it is first scanned, so a node's time includes the CTEs it reads:
  // subtract the CTE Scan nodes below it (not crossing into other CTEs' subplans) for its own
  // time. Its widest node's row count shows how many rows it worked through.
  const inside = (node: PlanNode): PlanNode[] => {
    const out: PlanNode[] = [];
    const visit = (n: PlanNode) => {
      for (const child of n.Plans ?? []) {
        if (child['Subplan Name']?.startsWith('CTE ')) continue;
        out.push(child);
        if (child['Node Type'] !== 'CTE Scan') visit(child);
      }
    };
    visit(node);
    return out;
  };
  const total = (n: PlanNode) => (n['Actual Total Time'] ?? 0) * (n['Actual Loops'] ?? 1);
  const rowsOf = (n: PlanNode) => (n['Actual Rows'] ?? 0) * (n['Actual Loops'] ?? 1);
  const record = (name: string, node: PlanNode) => {
    const nodes = inside(node);
    const nested = nodes
      .filter((n) => n['Node Type'] === 'CTE Scan')
      .reduce((sum, n) => sum + total(n), 0);
    self.set(name, [...(self.get(name) ?? []), Math.max(0, total(node) - nested)]);
    rows.set(name, [...(rows.get(name) ?? []), rowsOf(node)]);
    peak.set(name, [
      ...(peak.get(name) ?? []),
      Math.max(rowsOf(node), ...nodes.filter((n) => n['Node Type'] !== 'CTE Scan').map(rowsOf)),
    ]);
  };
  for (const stmt of stmts) {
    // As the search repository runs it: under its role's row-level security policies.
    const plan = await db.transaction(async (tx) => explain(tx, stmt, true), {
      ...localSettings(HYBRID_SETTINGS),
      role: SEARCH_ROLE,
    });
    executions.push(plan['Execution Time'] ?? 0);
    plannings.push(plan['Planning Time'] ?? 0);
    for (const node of walk(plan.Plan)) {
      const name = node['Subplan Name'];
      if (name?.startsWith('CTE ')) record(name.slice(4), node);
    }
    record('(main query)', plan.Plan);
  }
  const ctes: CteTiming[] = [...self.entries()]
    .map(([cte, times]) => ({
      cte,
      selfMs: mean(times),
      rows: mean(rows.get(cte) ?? []),
      peakRows: mean(peak.get(cte) ?? []),
    }))
    .sort((a, b) => b.selfMs - a.selfMs);
  return { ctes, planningMs: mean(plannings), executionMs: mean(executions) };
}

// ---------------------------------------------------------------------------------------------
// Report

const f = (x: number, digits = 1) => x.toFixed(digits);
const pad = (s: string, n: number) => s.padEnd(n);
const lpad = (s: string, n: number) => s.padStart(n);
const ok = (pass: boolean) => (pass ? 'OK' : 'MISS');

function report(r: SearchBenchResult): string[] {
  const lines: string[] = [];
  const l = (s = '') => lines.push(s);
  l('='.repeat(100));
  l(`SEARCH BENCHMARK  PostgreSQL + pgvector, schema ${r.schema}`);
  l('='.repeat(100));
  l(
    `1. data: ${r.corpus.chunks} chunks (512-d unit vectors, 1,000 Gaussian clusters in 50 topics; Zipf pseudo-word text), ${r.corpus.documents} documents`,
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
    `2. vector arm, top-10 in ${v.tenantId} (${v.queries} queries; the product statement, mode vector, iterative scan relaxed_order)`,
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
      `   ${pad(String(s.efSearch) + (s.efSearch === PGVECTOR_DEFAULT_EF_SEARCH ? ' (default)' : ''), 14)}${lpad(f(s.recallAt10, 3), 10)}${lpad(f(s.qps, 0), 8)}${lpad(f(s.qps / v.exact.qps), 9)}  ${kindsText(s.planKinds)}`,
    );
  }
  l(
    `   default ef_search ${PGVECTOR_DEFAULT_EF_SEARCH}: recall@10 ${f(v.defaultRecallAt10, 3)} [${ok(v.defaultRecallAt10 >= TARGETS.recallAt10)} >= ${TARGETS.recallAt10}], ` +
      `QPS ratio HNSW/exact ${f(v.defaultSpeedup)}x [${ok(v.defaultSpeedup >= TARGETS.hnswSpeedup)} >= ${TARGETS.hnswSpeedup}x]`,
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
    `5. selective metadata filters, ${TENANTS.big}, top_k 8: the plan the statement chose against HNSW forced (mean ms; vector recall@8 against a brute-force scan)`,
  );
  l(
    `   ${pad('documents matching', 30)}${lpad('vector', 8)}${lpad('recall', 8)}${lpad('hybrid', 8)}   ${lpad('HNSW: vector', 12)}${lpad('recall', 8)}${lpad('hybrid', 8)}`,
  );
  for (const x of r.selective) {
    l(
      `   ${pad(`${f(100 * x.share, 1)}% (${x.documents} docs, ${x.chunks} chunks)`, 30)}${lpad(f(x.chosen.vectorMs), 8)}${lpad(f(x.chosen.vectorRecallAt8, 3), 8)}${lpad(f(x.chosen.hybridMs), 8)}   ${lpad(f(x.hnswForced.vectorMs), 12)}${lpad(f(x.hnswForced.vectorRecallAt8, 3), 8)}${lpad(f(x.hnswForced.hybridMs), 8)}`,
    );
  }
  l();
  l(`wall time ${f(r.wallSeconds)} s`);
  return lines;
}

// ---------------------------------------------------------------------------------------------

/** Table and index sizes of the loaded corpus, and the server's buffer cache. */
async function corpusSizes(db: Database): Promise<Record<string, string>> {
  const { rows } = await db.query<Record<string, string>>(
    `SELECT pg_size_pretty(pg_total_relation_size('chunks') - pg_indexes_size('chunks')) AS "chunks (heap+TOAST)",
            pg_size_pretty(pg_relation_size('chunks_embedding_hnsw_idx')) AS "HNSW index",
            pg_size_pretty(pg_relation_size('chunks_tenant_lexemes_idx')) AS "GIN index",
            current_setting('shared_buffers') AS "shared_buffers"`,
  );
  return rows[0] ?? {};
}

/**
 * Loads the schema's tables, TOAST tables and indexes into shared_buffers (`pg_prewarm`, created
 * in the bench database by scripts/setup-postgres.sh), so that the latency runs measure a server
 * serving its working set from memory, as a production database sized for its index does, rather
 * than reads through the OS cache on their first touch of each page. Returns what was loaded, or
 * why nothing was.
 */
async function prewarm(db: Database, schema: string): Promise<string> {
  const { rows: ext } = await db.query("SELECT 1 FROM pg_extension WHERE extname = 'pg_prewarm'");
  if (ext.length === 0) return 'not prewarmed (pg_prewarm is not installed in this database)';
  const { rows } = await db.query<{ blocks: string; fits: boolean; size: string }>(
    `WITH rels AS (
       SELECT c.oid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = $1 AND c.relkind IN ('r', 'i')
       UNION ALL
       SELECT c.reltoastrelid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = $1 AND c.relkind = 'r' AND c.reltoastrelid <> 0
       UNION ALL
       SELECT x.indexrelid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         JOIN pg_index x ON x.indrelid = c.reltoastrelid
        WHERE n.nspname = $1 AND c.relkind = 'r')
     SELECT sum(pg_prewarm(oid))::text AS blocks,
            sum(pg_relation_size(oid)) <= pg_size_bytes(current_setting('shared_buffers')) AS fits,
            pg_size_pretty(sum(pg_relation_size(oid))) AS size
       FROM rels`,
    [schema],
  );
  const r = rows[0];
  return r
    ? `prewarmed ${r.size} (${r.blocks} blocks) into shared_buffers${r.fits ? '' : ', more than it holds'}`
    : 'not prewarmed';
}

/** Runs the whole benchmark; see the module comment. */
export async function benchSearch(options: SearchBenchOptions = {}): Promise<SearchBenchResult> {
  const started = performance.now();
  const chunks = options.chunks ?? 100_000;
  const queryCount = options.queries ?? 100;
  const budgetSeconds = options.latencyBudgetSeconds ?? 30;
  const out = options.log ?? ((line: string) => console.log(line));
  // Progress lines carry the elapsed time; the report is printed as is.
  const log = (line: string) => out(`[${seconds(started).toFixed(0).padStart(4)} s] ${line}`);
  const url = options.databaseUrl ?? BENCH_DATABASE_URL;
  if (!Number.isInteger(chunks) || chunks <= 0 || chunks % 500 !== 0) {
    throw new Error(
      `chunks must be a positive multiple of 500 (so the 1% and 10% tenants are exact), got ${chunks}`,
    );
  }
  if (!Number.isInteger(queryCount) || queryCount <= 0)
    throw new Error(`queries must be a positive integer, got ${queryCount}`);
  const schema = `bench_search_${chunks}`;

  const world = createWorld();
  const load = await ensureCorpus(url, schema, chunks, world, log);
  const db = openSchema(url, schema);
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
    ];

    // The use case as POST /api/rag/search runs it, with the store's keyword budget given.
    const useCaseWith = (dfBudget: number, mode: SearchMode, cachedPlans = true, on = db) => {
      const search = createSearch({
        store: createSearchRepository(on, { dfBudget, cachedPlans }),
        embedder: UNUSED_EMBEDDER,
      });
      return async (tenantId: string, q: BenchQuery) =>
        (
          await search.searchWithEmbedding(
            { tenantId, userId: 'bench-user' },
            { queryText: q.text, topK: HYBRID_TOP_K, mode, filters: {} },
            q.embedding,
          )
        ).hits.map((h) => h.chunkId);
    };
    const latencyQueries = generateQueries(world, 'latency', LATENCY_QUERIES);
    const warmup = generateQueries(world, 'warmup', WARMUP_QUERIES);
    const latencyTenants = [
      [TENANTS.big, `${Math.round((100 * (tenants[TENANTS.big] ?? 0)) / chunks)}%`],
      [TENANTS.tenPercent, '10%'],
      [TENANTS.onePercent, '1%'],
    ] as const;
    const warmed = await prewarm(db, schema);
    log(`buffer cache: ${warmed}`);
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
    log(`budget sweep: the unbounded arm's answers to ${agreementQueries.length} queries`);
    const answers = async (dfBudget: number, mode: SearchMode) => {
      const run = useCaseWith(dfBudget, mode);
      const out: string[][] = [];
      for (const q of agreementQueries) out.push(await run(TENANTS.big, q));
      return out;
    };
    const truth = {
      keyword: await answers(UNBOUNDED_BUDGET, 'keyword'),
      hybrid: await answers(UNBOUNDED_BUDGET, 'hybrid'),
    };
    const agreement = (got: readonly string[][], want: readonly string[][]) =>
      mean(got.map((ids, i) => recall(ids, want[i] ?? [])));
    const budgetSweep: SearchBenchResult['budgetSweep'][number][] = [];
    for (const dfBudget of [...DF_BUDGET_SWEEP, null]) {
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
    const selective = await measureSelective(db, latencyQueries.slice(0, SELECTIVE_QUERIES), log);

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
      machine: { cpus: cpus().length, loadBefore, loadAfter, bufferCache: warmed },
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
