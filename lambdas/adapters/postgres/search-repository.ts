/**
 * Hybrid retrieval in one SQL statement: pgvector HNSW cosine candidates and BM25 keyword
 * candidates (statistics from `term_stats` / `tenant_stats`, each chunk's term frequencies from
 * its `term_counts`), fused by min-max normalised scores. The keyword arm is bounded: it scores
 * only the chunks holding the question's rarest lexemes, up to a document-frequency budget, so
 * its cost does not grow with the tenant. Each hit carries its exact cosine similarity, whatever
 * the mode, so that scores are comparable and the confidence gate can use them.
 *
 * Iterative index scans (`hnsw.iterative_scan`, pgvector 0.8) are enabled per transaction with
 * `SET LOCAL` so that selective filters still fill `top_k`; `hnsw.ef_search` is raised to the
 * candidate count, since the index never returns more rows than `ef_search` otherwise; and the
 * random page cost is set for SSD storage, or the planner sorts small tables instead of using
 * HNSW (`searchTransactionSettings`).
 *
 * A statement without filters, and the read before every search, run through routines whose
 * plans the server keeps (routines.ts, search-routines.ts); such a routine applies the same
 * settings for its call. Other statements are parsed and planned on every search.
 */
import type {
  ScopeStatistics,
  SearchHit,
  SearchPreparation,
  SearchQuery,
  SearchScope,
  SearchStore,
} from '../../core/retrieval/types';
import { toVectorLiteral, type Database, type LocalSettings } from './database';
import { compileFilters, DOCUMENT_METADATA, visibilityParts } from './filter-sql';
import { isUndefinedFunction, routineCall, routineName } from './routines';
import { SqlParams } from './sql-params';
import { textSearchConfig } from './text-search';

/** BM25 parameters (the usual Robertson / Lucene defaults). */
const K1 = 1.2;
const B = 0.75;

interface HitRow {
  chunk_id: string;
  document_id: string;
  chunk_index: number;
  text: string;
  cos: number;
  bm25: number;
  coverage: number;
  fused: number;
  source_type: string;
  title: string | null;
  source_uri: string;
  language: string;
  metadata: Record<string, unknown>;
  start_offset: number;
  end_offset: number;
  owner_user_id: string | null;
}

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
  indexCrossover: 30,
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
const RESTRICTED_DOCUMENTS_CAP = 2000;

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

/** pgvector's `hnsw.ef_search` for a candidate count: the index returns at most that many rows. */
export function efSearchFor(candidates: number): number {
  return Math.max(40, Math.min(1000, candidates));
}

/**
 * The planner's cost of a page read out of order, for the search's transaction. PostgreSQL's
 * default (4, a spinning disk) makes pgvector's estimate for an HNSW scan lose to a sequential
 * scan and a sort of the whole table while the table is small (up to about 7,000 chunks), on
 * PostgreSQL and PGlite alike. 1.1, the usual figure for SSD or cached storage (Aurora's storage,
 * PGlite in memory), keeps the index (docs/decisions/0103-search-planner-settings.md).
 */
export const SEARCH_RANDOM_PAGE_COST = 1.1;

/**
 * The settings a search's transaction runs with (`SET LOCAL`, or `set_config(.., true)` in a
 * routine's call: never per session, so pooled connections do not inherit them): iterative index
 * scans, so that selective filters still fill `top_k`, `ef_search` for the candidate count, the
 * page cost above, and no JIT compilation.
 * The planner compiles a statement whose estimated cost passes `jit_above_cost`, counting plans
 * behind one-time filters that never run; a filtered statement on a large table crosses it, and
 * compiling costs far more than the statement ever runs
 * (docs/decisions/0103-search-planner-settings.md).
 */
export function searchTransactionSettings(candidates: number): LocalSettings {
  return {
    'hnsw.iterative_scan': 'relaxed_order',
    'hnsw.ef_search': efSearchFor(candidates),
    random_page_cost: SEARCH_RANDOM_PAGE_COST,
    jit: 'off',
  };
}

/**
 * SQL for a text expression as one quoted tsquery operand: tsquery's own quoting (a quote doubled,
 * a backslash escaped), not `quote_literal`, whose `E'..'` form tsquery does not read.
 */
export function tsqueryLiteral(expr: string): string {
  return `('''' || replace(replace(${expr}, '\\', '\\\\'), '''', '''''') || '''')`;
}

/**
 * A chunk's term counts (migrations/0011): every lexeme as one bigint, the top 56 bits of its
 * key (`gw_term_key`) and its count less one in the low 8, sorted. `entry` is SQL for the one
 * that could hold a key (a binary search: the last entry at most the key with count 255),
 * `holds` whether it does, and `count` its count as float8.
 */
const termCounts = {
  entry: (counts: string, key: string) => `${counts}[width_bucket(${key} + 255, ${counts})]`,
  holds: (entry: string, key: string) => `${entry} >> 8 = ${key} >> 8`,
  count: (entry: string) => `((${entry} & 255) + 1)::float8`,
};

/** One search statement and its parameters. */
export interface SearchStatement {
  readonly text: string;
  readonly values: unknown[];
  /** Each parameter's type (its cast in the text). */
  readonly types: readonly (string | undefined)[];
  /**
   * The text depends only on the mode and the plan, not on filters, so the statement can run as
   * an installed routine with a cached plan (search-routines.ts).
   */
  readonly reusable: boolean;
}

/**
 * The columns of the statement's rows, in order, with their types: a routine returns `SETOF
 * record`, and its call names them.
 */
export const SEARCH_HIT_COLUMNS = `chunk_id uuid, document_id uuid, chunk_index int, text text,
  cos float8, bm25 float8, fused float8, coverage float8, source_type text, title text,
  source_uri text, language text, metadata jsonb, start_offset int, end_offset int,
  owner_user_id text`;

/** Builds the statement for one query; exported for the benchmark and tests. */
export function buildSearchSql(
  scope: SearchScope,
  query: SearchQuery,
  statistics: ScopeStatistics,
  overrides: Partial<SearchSqlOptions> = {},
): SearchStatement {
  const options = { ...DEFAULT_SEARCH_SQL, ...overrides };
  const p = new SqlParams();
  const emb = p.add(toVectorLiteral(query.embedding), 'vector');
  const visible = visibilityParts(scope, p);
  const compiled = compileFilters(query.filters, query.allowedSourceTypes, p);
  const filters = compiled.sql();
  const where = `${visible.documents} AND ${visible.chunkTenants} AND ${filters}`;
  const candidates = p.add(query.fusion.candidates, 'int');
  const useVector = query.mode !== 'keyword';
  const useKeyword = query.mode !== 'vector';
  const filtered = compiled.filtered;
  const plan = planSearch(statistics, filtered, options);
  // The scope's size: BM25's N (idf is computed in every mode, for the keyword coverage).
  const n = p.add(Math.max(statistics.chunks, 1), 'float8');

  const ctes: string[] = [];
  // Lexemes of the question in the query language; stemmed once, then cast with ::tsquery
  // (going through to_tsquery again would stem them a second time). Their idf also gives every
  // candidate a keyword coverage, in any mode, for the confidence gate.
  const config = p.add(textSearchConfig(query.filters.lang?.[0] ?? 'en'), 'regconfig');
  const qtext = p.add(query.text, 'text');
  const tenants = p.add([scope.tenantId, ...scope.globalTenants], 'text[]');
  ctes.push(`terms AS MATERIALIZED (
      SELECT coalesce(array_agg(DISTINCT lexeme), '{}') AS lexemes FROM unnest(to_tsvector(${config}, ${qtext})))`);
  if (filtered) {
    // With filters, the scope is the documents that match them, found before any chunk is read:
    // the filters over the documents' own metadata (what a chunk without metadata of its own
    // sees), up to a cap of documents. A small scope (`fscope.small`) is read from those
    // documents by both arms: HNSW tests filters on every chunk it visits, nearest first, and a
    // selective filter runs it out of its iterative limits before it has found the nearest
    // matching chunks (docs/decisions/0108-filtered-scope-from-documents.md); the keyword arm's
    // rarest lexemes would mostly select chunks the filter then drops. Chunks with
    // metadata of their own are read too, through their partial index (migrations/0008), and
    // every chunk is tested with the full filters, so nothing is missed.
    const cap = p.add(options.filteredDocumentsCap, 'int');
    const documentFilters = compiled.sql(DOCUMENT_METADATA);
    ctes.push(`fdocs AS MATERIALIZED (
      SELECT d.* FROM documents d
      WHERE d.tenant_id = ANY(${tenants}) AND ${visible.documents} AND ${documentFilters}
      LIMIT ${cap} + 1)`);
    const tableSize = p.add(Math.max(statistics.tableChunks, 1), 'float8');
    ctes.push(`fscope AS MATERIALIZED (
      SELECT NOT ((SELECT count(*) FROM fdocs) > ${cap}
                  OR coalesce((SELECT sum(chunk_count) FROM fdocs), 0)::float8 ^ 2
                     >= ${p.add(options.filteredIndexCrossover, 'float8')} * ${tableSize}) AS small)`);
  }
  // The chunks of a small filtered scope that pass every test, with the columns both arms read.
  // The documents are `fdocs` rows (it keeps them whole), so the planner has no other way to the
  // chunks than from those documents.
  const columns =
    'c.id, c.document_id, c.tenant_id, c.embedding, c.fts, c.fts_length, c.term_counts';
  const scopeChunks = `SELECT ${columns}
          FROM fdocs d JOIN chunks c ON c.document_id = d.id WHERE c.metadata = '{}' AND ${where}
          UNION ALL
          SELECT ${columns}
          FROM chunks c JOIN documents d ON d.id = c.document_id WHERE c.metadata <> '{}' AND ${where}`;
  if (useVector) {
    // The scope's vectors: an exact scan through the tenant b-tree while the scope is small, the
    // HNSW index with the iterative scan beyond that (`plan.vectorIndex`). The planner cannot
    // make this choice itself: for a mid-size tenant it prefers the b-tree and a sort, many times
    // slower than HNSW (docs/decisions/0107-hnsw-or-exact-scan.md). `(..) IS TRUE` hides the
    // tenant test from the b-tree while keeping its selectivity estimate, so HNSW is the cheap
    // ordered path left.
    // The exact scan orders by the distance plus 0, an expression HNSW cannot serve, so that a
    // plan made without the scope's size (a routine's generic plan) still scans exactly.
    const arm = (
      tenantTest: string,
      order: string,
    ) => `SELECT c.id, 1 - (c.embedding <=> ${emb}) AS cos
        FROM chunks c JOIN documents d ON d.id = c.document_id
        WHERE ${visible.documents} AND ${tenantTest} AND ${filters}
        ORDER BY ${order}
        LIMIT ${candidates}`;
    const scan = plan.vectorIndex
      ? arm(`(${visible.chunkTenants}) IS TRUE`, `c.embedding <=> ${emb}`)
      : arm(visible.chunkTenants, `(c.embedding <=> ${emb}) + 0`);
    // With filters, a small filtered scope is scanned from its documents (a one-time filter on
    // `fscope` runs one of the two); a large one as without filters.
    const vec = filtered
      ? `SELECT * FROM (SELECT c.id, 1 - (c.embedding <=> ${emb}) AS cos
          FROM (${scopeChunks}) c
          ORDER BY c.embedding <=> ${emb}
          LIMIT ${candidates}) scope_scan WHERE (SELECT small FROM fscope)
        UNION ALL
        SELECT * FROM (${scan}) scope_wide WHERE NOT (SELECT small FROM fscope)`
      : scan;
    ctes.push(`vec AS MATERIALIZED (${vec})`);
  }
  ctes.push(`idf AS MATERIALIZED (
      SELECT t.lexeme AS term, gw_term_key(t.lexeme) AS key, coalesce(df.df, 0) AS df,
             ln(1 + (${n} - coalesce(df.df, 0) + 0.5) / (coalesce(df.df, 0) + 0.5)) AS idf
      FROM unnest((SELECT lexemes FROM terms)) t(lexeme)
      LEFT JOIN (SELECT term, sum(doc_freq)::float8 AS df FROM term_stats
                 WHERE tenant_id = ANY(${tenants}) AND term = ANY((SELECT lexemes FROM terms)::text[]) GROUP BY term) df
        ON df.term = t.lexeme)`);
  if (useKeyword) {
    const budget = p.add(options.dfBudget, 'int');
    // The chunks to score: those holding the question's rarest lexemes, taken from the rarest up
    // while their summed document frequency stays within the budget (the rarest always, so a
    // question of common words still gets keyword candidates). Lexemes no chunk in scope holds
    // are left out (docs/decisions/0104-keyword-budget.md). The index's lexemes name their tenant
    // (migrations/0009), so the query asks for each taken lexeme of each tenant in scope and GIN
    // reads no other tenant's postings (docs/decisions/0110-tenant-prefixed-lexeme-index.md).
    ctes.push(`tsq AS MATERIALIZED (
      SELECT (SELECT string_agg(${tsqueryLiteral(`t || chr(1) || kept.term`)}, ' | ')
              FROM unnest(${tenants}) t CROSS JOIN (
                 SELECT term, row_number() OVER w AS rank, sum(df) OVER w AS cumulative
                 FROM idf WHERE df > 0
                 WINDOW w AS (ORDER BY df, term ROWS UNBOUNDED PRECEDING)) kept
              WHERE kept.rank = 1 OR kept.cumulative <= ${budget})::tsquery AS q)`);
    // Each selected chunk is scored with every lexeme of the question (BM25, tf from its term
    // counts, docs/decisions/0102-term-counts.md). At most the budget of chunks is scored, even
    // when the rarest lexeme alone is more frequent than that (then an arbitrary subset of its
    // chunks).
    // A chunk's document (visibility, filters) is checked through the primary key, never by
    // reading every document of the tenant: for every chunk selected, so that the budget goes to
    // chunks the caller sees and that match the filters; or, without filters and when the caller
    // can see nearly all of the scope (`plan.deferDocumentCheck`), only for the best-scored
    // chunks, in score order, until the candidates are found: about `candidates` document
    // lookups instead of one per chunk selected (docs/decisions/0109-deferred-document-check.md).
    const documentCheck = `coalesce((SELECT ${where} FROM documents d WHERE d.id = c.document_id), false)`;
    const defer = plan.deferDocumentCheck;
    let selected = `SELECT c.id, c.document_id, c.tenant_id, c.fts_length, c.term_counts FROM chunks c
            WHERE gw_tenant_lexemes(c.fts, c.tenant_id) @@ (SELECT q FROM tsq)
              ${defer ? '' : `AND ${documentCheck}`}
            LIMIT ${budget}`;
    if (filtered) {
      // A small filtered scope: its chunks holding any of the question's lexemes, not only the
      // rarest, which the budget would otherwise spend on chunks the filters drop.
      ctes.push(`tsq_all AS MATERIALIZED (
      SELECT (SELECT string_agg(${tsqueryLiteral('term')}, ' | ') FROM idf WHERE df > 0)::tsquery AS q)`);
      selected = `SELECT * FROM (${selected}) wide WHERE NOT (SELECT small FROM fscope)
            UNION ALL
            SELECT * FROM (
              SELECT c.id, c.document_id, c.tenant_id, c.fts_length, c.term_counts FROM (${scopeChunks}) c
              WHERE c.fts @@ (SELECT q FROM tsq_all)
              LIMIT ${budget}) narrow WHERE (SELECT small FROM fscope)`;
    }
    const avgdl = p.add(Math.max(statistics.meanLength, 1), 'float8');
    // The question's lexemes as two arrays, so that each chunk's sum is an aggregate over them
    // beside the chunk (no join and grouping over every chunk's matches). Each lexeme's entry is
    // looked up once: OFFSET 0 keeps the planner from copying the lookup into each expression
    // that reads it.
    ctes.push(
      `kw_terms AS MATERIALIZED (SELECT array_agg(key) AS keys, array_agg(idf) AS idfs FROM idf)`,
    );
    ctes.push(`kw_scored AS MATERIALIZED (
      SELECT c.id, c.document_id, c.tenant_id, s.bm25, s.matched_idf FROM (${selected}) c
      CROSS JOIN LATERAL (
        SELECT sum(u.idf * (u.tf * ${K1 + 1}) / (u.tf + ${K1} * (${1 - B} + ${B}::float8 * c.fts_length / ${avgdl}))) AS bm25,
          sum(u.idf) AS matched_idf
        FROM (SELECT t.idf, ${termCounts.count('t.e')} AS tf FROM (
          SELECT t.key, t.idf, ${termCounts.entry('c.term_counts', 't.key')} AS e
          FROM unnest((SELECT keys FROM kw_terms), (SELECT idfs FROM kw_terms)) t(key, idf) OFFSET 0) t
          WHERE ${termCounts.holds('t.e', 't.key')}) u) s
      WHERE s.bm25 IS NOT NULL)`);
    // OFFSET 0 keeps a deferred check above the sort, so it runs only until LIMIT is met.
    ctes.push(`kw AS MATERIALIZED (
      SELECT c.id, c.bm25, c.matched_idf
      FROM (SELECT * FROM kw_scored ORDER BY bm25 DESC, id OFFSET 0) c
      ${defer ? `WHERE ${documentCheck}` : ''}
      LIMIT ${candidates})`);
  }
  // Both arms' candidates in one row each (a hash join, not a scan per row); the cosine of a
  // keyword-only candidate is computed here so that every hit reports it.
  const candidates_ =
    useVector && useKeyword
      ? 'SELECT coalesce(v.id, k.id) AS id, v.cos AS vcos, k.bm25 FROM vec v FULL JOIN kw k ON k.id = v.id'
      : useVector
        ? 'SELECT id, cos AS vcos, NULL::float8 AS bm25 FROM vec'
        : 'SELECT id, NULL::float8 AS vcos, bm25 FROM kw';
  ctes.push(`scored AS (
      SELECT cand.id,
             greatest(0, least(1, coalesce(cand.vcos, 1 - (c.embedding <=> ${emb}))))::float8 AS cos,
             coalesce(cand.bm25, 0)::float8 AS bm25,
             (cand.vcos IS NOT NULL) AS in_vec,
             (cand.bm25 IS NOT NULL) AS in_kw,
             c.document_id
      FROM (${candidates_}) cand
      JOIN chunks c ON c.id = cand.id)`);
  // Min-max normalised over an arm's own candidates (NULL when they all score the same).
  const normalised = (score: string, arm: string) => {
    const [low, high] = ['min', 'max'].map((f) => `${f}(${score}) FILTER (WHERE ${arm}) OVER ()`);
    return `(${score} - ${low}) / nullif(${high} - ${low}, 0)`;
  };
  ctes.push(`norm AS (
      SELECT s.*,
        CASE WHEN NOT in_vec THEN greatest(0, ${normalised('cos', 'in_vec')})
             ELSE coalesce(${normalised('cos', 'in_vec')}, 1) END AS ncos,
        CASE WHEN NOT in_kw THEN 0 ELSE coalesce(${normalised('bm25', 'in_kw')}, 1) END AS nbm
      FROM scored s)`);
  let dense = query.mode === 'hybrid' ? p.add(query.fusion.denseWeight, 'float8') : '';
  const lead = query.fusion.denseLead;
  if (query.mode === 'hybrid' && lead) {
    // The dense arm leads when its best candidate stands out and the keyword arm's best match
    // (by BM25) holds little of the question's idf (FusionSettings.denseLead,
    // docs/decisions/0106-dense-lead.md).
    ctes.push(`fusion_weight AS MATERIALIZED (
      SELECT CASE WHEN
          coalesce((SELECT max(cos) FROM vec), 0)
            - coalesce((SELECT cos FROM vec ORDER BY cos DESC OFFSET 1 LIMIT 1), 0) >= ${p.add(lead.minMargin, 'float8')}
          AND coalesce((SELECT matched_idf FROM kw ORDER BY bm25 DESC, id LIMIT 1)
                       / nullif((SELECT sum(idf) FROM idf), 0), 0) < ${p.add(lead.maxKeywordCoverage, 'float8')}
        THEN ${p.add(lead.denseWeight, 'float8')} ELSE ${dense} END AS w)`);
    dense = '(SELECT w FROM fusion_weight)';
  }
  const fusedExpr =
    query.mode === 'vector'
      ? 'n.cos'
      : query.mode === 'keyword'
        ? 'n.bm25'
        : `${dense} * coalesce(n.ncos, 0) + (1 - ${dense}) * n.nbm`;
  ctes.push(`ranked AS (
      SELECT n.id, n.cos, n.bm25, ${fusedExpr} AS fused,
             row_number() OVER (PARTITION BY n.document_id ORDER BY ${fusedExpr} DESC, n.id) AS per_source
      FROM norm n
      WHERE n.cos >= ${p.add(query.minScore, 'float8')})`);
  // Keyword coverage (for the confidence gate) only for the rows returned.
  const text = `WITH ${ctes.join(',\n')}
    SELECT c.id AS chunk_id, c.document_id, c.chunk_index, c.text, r.cos, r.bm25, r.fused,
           coalesce((SELECT sum(i.idf) FROM idf i WHERE ${termCounts.holds(termCounts.entry('c.term_counts', 'i.key'), 'i.key')})
                    / nullif((SELECT sum(idf) FROM idf), 0), 0)::float8 AS coverage,
           d.source_type, d.title, d.source_uri, d.language, (d.metadata || c.metadata) AS metadata,
           c.start_offset, c.end_offset, coalesce(d.owner_user_id, d.uploaded_by) AS owner_user_id
    FROM (SELECT * FROM ranked WHERE per_source <= ${p.add(query.maxChunksPerSource, 'int')}
          ORDER BY fused DESC, cos DESC, id LIMIT ${p.add(query.topK, 'int')}) r
    JOIN chunks c ON c.id = r.id JOIN documents d ON d.id = c.document_id
    ORDER BY r.fused DESC, r.cos DESC, c.id`;
  return { text, values: p.values, types: p.types, reusable: !filtered };
}

/** {@link PreparationRow}'s columns, in `prepareSql`'s order, for its routine's call. */
const PREPARATION_COLUMNS = `allowed_source_types text[], min_score real,
  max_chunks_per_source int, chunks float8, total_length float8, table_chunks float8,
  restricted_documents int, restricted_chunks float8`;

interface PreparationRow {
  allowed_source_types: string[] | null;
  min_score: number | null;
  max_chunks_per_source: number | null;
  chunks: number;
  total_length: number;
  table_chunks: number;
  restricted_documents: number;
  restricted_chunks: number;
}

/**
 * The read before a search, one round trip: the tenant's policy, the scope's chunks and their
 * total length (`tenant_stats`, one row per tenant, summed whole for the table's size, which is
 * cheaper than reading the planner's estimate while tenants are few; with tens of thousands of
 * tenants, measure again: docs/decisions/0107-hnsw-or-exact-scan.md), and the
 * chunks of the scope's documents that not every caller sees: in the caller's tenant, documents
 * other than indexed `tenant` ones (private documents, documents being re-indexed); in the
 * publishing tenants, documents other than indexed `global` ones. Each side reads at most the cap
 * of documents, through its partial index (migrations/0006).
 */
export function prepareSql(scope: SearchScope, p: SqlParams): string {
  const tenant = p.add(scope.tenantId, 'text');
  const globals = p.add([...scope.globalTenants], 'text[]');
  const tenants = p.add([scope.tenantId, ...scope.globalTenants], 'text[]');
  const cap = p.add(RESTRICTED_DOCUMENTS_CAP, 'int');
  return `SELECT pol.allowed_source_types, pol.min_score, pol.max_chunks_per_source,
           st.chunks, st.total_length, st.table_chunks, r.restricted_documents, r.restricted_chunks
    FROM (SELECT coalesce(sum(chunk_count) FILTER (WHERE tenant_id = ANY(${tenants})), 0)::float8 AS chunks,
                 coalesce(sum(total_length) FILTER (WHERE tenant_id = ANY(${tenants})), 0)::float8 AS total_length,
                 coalesce(sum(chunk_count), 0)::float8 AS table_chunks
          FROM tenant_stats) st
    CROSS JOIN (
      SELECT count(*)::int AS restricted_documents, coalesce(sum(x.chunk_count), 0)::float8 AS restricted_chunks
      FROM ((SELECT d.chunk_count FROM documents d
             WHERE d.tenant_id = ${tenant} AND NOT (d.visibility = 'tenant' AND d.status = 'indexed')
             LIMIT ${cap})
            UNION ALL
            (SELECT d.chunk_count FROM documents d
             WHERE d.tenant_id = ANY(${globals}) AND NOT (d.visibility = 'global' AND d.status = 'indexed')
             LIMIT ${cap})) x) r
    LEFT JOIN tenant_policies pol ON pol.tenant_id = ${tenant}`;
}

/** The names of the search statement's routines start with this. */
export const SEARCH_ROUTINE_PREFIX = 'gw_routine_search_';

/**
 * The role the search statement and its preparation run as (migrations/0013): row-level
 * security would keep the keyword arm and metadata filters from their GIN indexes, so these two
 * statements, which carry their scope's predicates (filter-sql.ts), read under a constant-true
 * policy instead (docs/decisions/0135-row-level-security.md).
 */
export const SEARCH_ROLE = 'groundwork_search';
const SEARCH_ROLE_SETTING: LocalSettings = { role: SEARCH_ROLE };

export function createSearchRepository(
  db: Database,
  options: Partial<SearchSqlOptions> = {},
): SearchStore {
  const cachedPlans = options.cachedPlans ?? DEFAULT_SEARCH_SQL.cachedPlans;
  // Routines found missing (a server not migrated by this release): their statements run
  // directly from then on.
  const missing = new Set<string>();
  /**
   * `stmt` through its routine, in one round trip (the routine applies `settings` for its call),
   * or `direct()` when plans are not cached or the server lacks the routine.
   */
  async function viaRoutine<R extends object>(
    stmt: { text: string; values: unknown[]; types: readonly (string | undefined)[] },
    columns: string,
    settings: LocalSettings,
    direct: () => Promise<R[]>,
  ): Promise<R[]> {
    const routine = cachedPlans ? routineName(SEARCH_ROUTINE_PREFIX, stmt, SEARCH_ROLE) : null;
    if (!routine || missing.has(routine)) return direct();
    const call = routineCall(routine, stmt, columns, settings);
    try {
      // The routine switches to its role itself: no scope transaction around it.
      return (await db.call<R>(call.text, call.values)).rows;
    } catch (error) {
      if (!isUndefinedFunction(error)) throw error;
      missing.add(routine);
      return direct();
    }
  }
  return {
    async search(scope, query, statistics) {
      const stmt = buildSearchSql(scope, query, statistics, options);
      const settings = searchTransactionSettings(query.fusion.candidates);
      const direct = () =>
        db.transaction(async (tx) => (await tx.query<HitRow>(stmt.text, stmt.values)).rows, {
          ...settings,
          ...SEARCH_ROLE_SETTING,
        });
      const rows = stmt.reusable
        ? await viaRoutine(stmt, SEARCH_HIT_COLUMNS, settings, direct)
        : await direct();
      return rows.map((r): SearchHit => ({
        chunkId: r.chunk_id,
        documentId: r.document_id,
        chunkIndex: r.chunk_index,
        text: r.text,
        score: Number(r.cos),
        keywordScore: Number(r.bm25),
        keywordCoverage: Number(r.coverage),
        fusedScore: Number(r.fused),
        sourceType: r.source_type,
        title: r.title,
        sourceUri: r.source_uri,
        language: r.language,
        metadata: r.metadata,
        startOffset: r.start_offset,
        endOffset: r.end_offset,
        ownerUserId: r.owner_user_id,
      }));
    },
    async prepare(scope): Promise<SearchPreparation> {
      const p = new SqlParams();
      const stmt = { text: prepareSql(scope, p), values: p.values, types: p.types };
      const rows = await viaRoutine<PreparationRow>(stmt, PREPARATION_COLUMNS, {}, () =>
        db.transaction(
          async (tx) => (await tx.query<PreparationRow>(stmt.text, stmt.values)).rows,
          SEARCH_ROLE_SETTING,
        ),
      );
      const row = rows[0]!;
      return {
        policy: {
          allowedSourceTypes: row.allowed_source_types ?? null,
          minScore: row.min_score ?? null,
          maxChunksPerSource: row.max_chunks_per_source ?? null,
        },
        statistics: {
          chunks: Number(row.chunks),
          tableChunks: Number(row.table_chunks),
          meanLength: Number(row.total_length) / Math.max(Number(row.chunks), 1),
          restrictedChunks:
            Number(row.restricted_documents) < RESTRICTED_DOCUMENTS_CAP
              ? Number(row.restricted_chunks)
              : null,
        },
      };
    },
  };
}
