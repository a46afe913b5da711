/**
 * How the search statement is planned, decided before it is built: the options each decision
 * record measured, the plan chosen from the scope's statistics (HNSW or an exact scan for the
 * vector arm, whether the keyword arm's document check is deferred), and the run-time settings a
 * search's transaction runs with.
 */
import type { ScopeStatistics } from '../../core/retrieval/types';
import type { LocalSettings } from './database';

/**
 * How the statement plans each arm (docs/retrieval.md; the reasons for each default are in
 * docs/decisions/0101 and 0104 to 0110).
 */
export interface SearchSqlOptions {
  /**
   * Keyword arm: the summed document frequency (in the caller's scope) of the lexemes that
   * select the chunks to score, and the most chunks scored per query. Keep it at least the
   * candidates per arm (50, or 4 top_k), or the arm returns fewer.
   */
  readonly dfBudget: number;
  /**
   * Vector arm: the HNSW index serves a scope of n chunks in a table of N when n² ≥ this × N,
   * an exact scan of the scope otherwise. An exact scan costs about b·n (b: reading and comparing
   * one vector) and a filtered HNSW scan about a·N/n (it visits N/n rows per row it keeps), so
   * the crossover is n² / N = a / b.
   */
  readonly indexCrossover: number;
  /**
   * Vector arm with filters: the filtered scope (the chunks of the documents matching them,
   * n_f) is scanned exactly from its documents unless n_f² ≥ this × N. Higher than
   * `indexCrossover`: with a filter, HNSW reads each chunk it visits and tests the filter on it.
   */
  readonly filteredIndexCrossover: number;
  /**
   * At most this many matching documents are read to size the filtered scope; with more, the
   * index serves the arm (this bounds what sizing costs a filter that is not selective).
   */
  readonly filteredDocumentsCap: number;
  /**
   * Keyword arm without filters: check the documents of the best-scored chunks only, in order,
   * instead of every chunk selected, when the caller can see nearly all of the scope
   * ({@link planSearch}).
   */
  readonly deferDocumentCheck: boolean;
  /**
   * Run a statement without filters, and the read before every search, through their installed
   * routines, whose plans the server keeps (search-routines.ts), instead of parsing and planning
   * them on every search.
   */
  readonly cachedPlans: boolean;
}

/**
 * The defaults, each the measured choice of a decision record: the budget leaves nDCG@10 on
 * SciFact and SQuAD as scoring every match does while bounding the arm's cost
 * (docs/decisions/0104-keyword-budget.md); the crossover lies between the measured a / b of the
 * two scans (0107-hnsw-or-exact-scan.md); the filtered crossover and cap lie between the filter
 * selectivities where each plan was faster (0108-filtered-scope-from-documents.md); the deferred
 * check (0109-deferred-document-check.md) and cached plans (0101-search-plans-kept-as-routines.md)
 * save per-search work with identical hits.
 */
export const DEFAULT_SEARCH_SQL: SearchSqlOptions = {
  dfBudget: 1000,
  indexCrossover: 300,
  filteredIndexCrossover: 75,
  filteredDocumentsCap: 500,
  deferDocumentCheck: true,
  cachedPlans: true,
};

/**
 * Deferring the keyword arm's document check ({@link planSearch}): allowed while the chunks of
 * documents not every caller sees are at most this share of the scope's chunks, and fewer than
 * the cap of such documents exist (more are not counted; the check is then not deferred).
 */
const DEFER_MAX_RESTRICTED_SHARE = 0.1;

/** How the statement is planned, decided from the scope's statistics before it is built. */
export interface SearchPlan {
  /**
   * The vector arm reads the HNSW index (n² ≥ `indexCrossover` × N for a scope of n chunks in a
   * table of N); otherwise an exact scan of the scope's vectors through the tenant b-tree.
   * With filters, a small filtered scope is still scanned from its documents either way.
   */
  readonly vectorIndex: boolean;
  /** The keyword arm checks documents for its best-scored chunks only (no filters). */
  readonly deferDocumentCheck: boolean;
}

/**
 * The statement's plan for a scope. Decided here rather than in the statement because one-time
 * filters choosing between plans inside it make the planner plan both, and because a plan chosen
 * before the statement is what lets its routine keep a generic plan
 * (docs/decisions/0107-hnsw-or-exact-scan.md). The statistics may be a moment old; they choose a
 * plan, never what a caller may see.
 */
export function planSearch(
  statistics: ScopeStatistics,
  filtered: boolean,
  options: SearchSqlOptions = DEFAULT_SEARCH_SQL,
): SearchPlan {
  const n = Math.max(statistics.chunks, 1);
  return {
    vectorIndex: n * n >= options.indexCrossover * Math.max(statistics.tableChunks, 1),
    // The chunks of documents not every caller sees take at most this share of the budget.
    deferDocumentCheck:
      !filtered &&
      options.deferDocumentCheck &&
      statistics.restrictedChunks !== null &&
      statistics.restrictedChunks <= DEFER_MAX_RESTRICTED_SHARE * n,
  };
}

/**
 * Table chunks per unit of `hnsw.ef_search`'s floor: a graph over more vectors needs a wider
 * search for the same recall. In the benchmark's big tenant (section 2), recall@10 of the 50
 * candidates at 1M chunks was 0.862 at ef_search 40 to 100, 0.884 at 200 and 0.914 at 400; at
 * 100k, 0.963 at 50 (docs/decisions/0151-vector-plan-from-measured-costs.md).
 */
const EF_SEARCH_CHUNKS = 2_500;

/**
 * pgvector's `hnsw.ef_search` for a candidate count in a table of `tableChunks`: at least the
 * candidates (the index returns at most ef_search rows per pass), and at least one per
 * {@link EF_SEARCH_CHUNKS} chunks of the table; between 40 (pgvector's default) and 1,000 (its
 * maximum).
 */
export function efSearchFor(candidates: number, tableChunks = 0): number {
  const floor = Math.ceil(Math.max(tableChunks, 0) / EF_SEARCH_CHUNKS);
  return Math.max(40, Math.min(1000, Math.max(candidates, floor)));
}

/**
 * The planner's cost of a page read out of order, for the search's transaction. PostgreSQL's
 * default (4, a spinning disk) makes pgvector's estimate for an HNSW scan lose to a sequential
 * scan and a sort of the whole table while the table is small (up to about 7,000 chunks), on
 * PostgreSQL and PGlite alike. 1.1, the usual figure for SSD or cached storage (Aurora's storage,
 * PGlite in memory), keeps the index (docs/decisions/0103-search-planner-settings.md).
 */
const SEARCH_RANDOM_PAGE_COST = 1.1;

/**
 * The settings a search's transaction runs with (`SET LOCAL`, or `set_config(.., true)` in a
 * routine's call: never per session, so pooled connections do not inherit them): iterative index
 * scans, so that selective filters still fill `top_k`, `ef_search` for the candidate count and the
 * table's size ({@link efSearchFor}), the page cost above, and no JIT compilation.
 * The planner compiles a statement whose estimated cost passes `jit_above_cost`, counting plans
 * behind one-time filters that never run; a filtered statement on a large table crosses it, and
 * compiling costs far more than the statement ever runs
 * (docs/decisions/0103-search-planner-settings.md).
 */
export function searchTransactionSettings(candidates: number, tableChunks = 0): LocalSettings {
  return {
    'hnsw.iterative_scan': 'relaxed_order',
    'hnsw.ef_search': efSearchFor(candidates, tableChunks),
    random_page_cost: SEARCH_RANDOM_PAGE_COST,
    jit: 'off',
  };
}
