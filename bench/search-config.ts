/** The search benchmark's settings, targets and result types (bench/search.ts). */

export const BENCH_DATABASE_URL =
  process.env.GROUNDWORK_BENCH_DATABASE_URL ??
  'postgres://groundwork:groundwork@127.0.0.1:5432/groundwork_bench';

/** The targets the report checks against. */
export const TARGETS = { recallAt10: 0.95, hnswSpeedup: 20, hybridP95Ms: 25 } as const;

/** pgvector's default `hnsw.ef_search`. */
export const PGVECTOR_DEFAULT_EF_SEARCH = 40;
export const EF_SEARCH_SWEEP = [40, 64, 100, 200, 400] as const;
export const DOCUMENTS_PER_BATCH = 400;
/** Untimed statements before each timed pass (plans, caches). */
export const WARMUP_QUERIES = 10;
/** Queries timed with the exact scan (the ground truth of all queries is computed in one batch). */
export const EXACT_SAMPLE = 10;
export const LATENCY_QUERIES = 200;
export const BREAKDOWN_SAMPLE = 10;
export const SWEEP_QUERIES = 100;
/** Keyword-arm budgets of the sweep (summed document frequency of the lexemes that select chunks). */
export const DF_BUDGET_SWEEP = [250, 500, 1_000, 2_000, 5_000] as const;
/** A budget no tenant of the benchmark reaches: the arm scores every matching chunk. */
export const UNBOUNDED_BUDGET = 2 ** 31 - 1;
/** Queries the unbounded arm answers (untimed) for the agreement of each budget. */
export const AGREEMENT_QUERIES = 30;
/** Shares of the big tenant's documents a metadata filter selects (section 5). */
export const SELECTIVE_SHARES = [0.002, 0.02, 0.2] as const;
export const SELECTIVE_QUERIES = 40;
/**
 * Of those, the queries the unbounded keyword arm answers (untimed) under each filter: at 1M
 * chunks it reads every chunk holding one of the question's lexemes, seconds a query.
 */
export const SELECTIVE_AGREEMENT_QUERIES = 10;
/** Queries per tenant of section 6 (each answered by the four plans). */
export const PLAN_QUERIES = 100;
/** Queries of section 7 (halfvec against vector). */
export const HALFVEC_QUERIES = 100;

export interface SearchBenchOptions {
  /** Chunks in the corpus, a multiple of 5,000 so that the 10%, 1% and 0.1% tenants are exact. @default 100_000 */
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
  /**
   * Sweep the keyword budget against the unbounded arm (section 4). At 1M chunks the unbounded
   * arm takes about 20 s a query, and the sweep about 20 minutes. @default true
   */
  readonly budgetSweep?: boolean;
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
  /** With the value's filter index (migrations/0026). */
  readonly filterIndex: SelectivePlanRun;
  /**
   * What this run paid to add the filter index: chunks whose copy it wrote and the time to write
   * them and build the index; null when an earlier run added it.
   */
  readonly filterIndexBuild: { copied: number; ms: number } | null;
  /**
   * Mean share of the unbounded keyword arm's top 8 under the filter (every matching chunk
   * scored) that the product's keyword arm, with the plan it chooses, also returns; null when
   * the unbounded arm returned nothing for any of the queries.
   */
  readonly keywordAgreement: number | null;
  /** The queries of that mean: those the unbounded arm returned chunks for. */
  readonly agreementQueries: number;
}

export interface SelectivePlanRun {
  readonly vectorMs: number;
  readonly hybridMs: number;
  readonly hybridP95Ms: number;
  readonly vectorRecallAt8: number;
}

/** A plan of the vector arm timed in one tenant (section 6). */
export interface PlanTiming {
  readonly p50Ms: number;
  readonly p95Ms: number;
  /** Mean share of the exact top 8 the plan returned. */
  readonly recallAt8: number;
  /** Queries timed: a plan far slower than the others stops after its first few. */
  readonly queries: number;
}

/** Section 7: halfvec against vector for the big tenant's HNSW search. */
export interface HalfvecResult {
  readonly tenantId: string;
  readonly queries: number;
  readonly efSearch: number;
  /** Seconds to build the side table and its indexes; null when an earlier run built them. */
  readonly build: {
    readonly copySeconds: number;
    readonly vectorSeconds: number;
    readonly halfvecSeconds: number;
    readonly vacuumSeconds: number;
  } | null;
  readonly vectorIndexBytes: number;
  readonly halfvecIndexBytes: number;
  readonly vector: PlanTiming;
  readonly halfvec: PlanTiming;
}

/** Section 6: the vector arm's plans in one tenant, interleaved query by query. */
export interface PlanGridRow {
  readonly tenantId: string;
  /** The scope's chunks (n) and the table's (N), as the plan choice reads them. */
  readonly chunks: number;
  readonly tableChunks: number;
  readonly queries: number;
  /** The product's vector statement with each plan forced, and with the plan the rule picks. */
  readonly statement: {
    readonly exact: PlanTiming;
    readonly hnsw: PlanTiming;
    readonly rule: PlanTiming;
  };
  readonly ruleUsesIndex: boolean;
  /**
   * The arm alone (its CTE's predicate and candidate LIMIT) with each plan forced, and as
   * PostgreSQL plans it unaided.
   */
  readonly arm: {
    readonly exact: PlanTiming;
    readonly hnsw: PlanTiming;
    readonly planner: PlanTiming;
  };
  /** How PostgreSQL planned the arm alone (a sample of statements). */
  readonly plannerPlan: Readonly<Record<PlanKind, number>>;
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
    /** The ef_search the product sets for this table (efSearchFor), and its recall@10. */
    readonly shippedEfSearch: number;
    readonly shippedRecallAt10: number;
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
  /** The vacuum of the chunks after this run added filter indexes (section 5); null if none. */
  readonly selectiveVacuumMs: number | null;
  /** The vector arm's plans in every tenant (section 6). */
  readonly plans: readonly PlanGridRow[];
  readonly halfvec: HalfvecResult;
  /** Logical CPUs and the 1-minute load average before and after the latency runs. */
  readonly machine: {
    readonly cpus: number;
    readonly loadBefore: number;
    readonly loadAfter: number;
    /** What was loaded into shared_buffers before the latency runs (`prewarm`). */
    readonly bufferCache: string;
    /** The big tenant's hybrid search run twice in a row per query (`measureRepeat`). */
    readonly repeat: {
      readonly queries: number;
      readonly firstP50Ms: number;
      readonly secondP50Ms: number;
    };
  };
  readonly wallSeconds: number;
}
