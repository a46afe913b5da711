/**
 * Hybrid retrieval in one SQL statement (docs/decisions/0114-one-statement-for-both-arms.md):
 * the question's lexemes, the vector arm (search-vector-arm.ts) and the keyword arm
 * (search-keyword-arm.ts) as common table expressions, fused and ranked (search-fusion.ts), then
 * the hits, at most `maxChunksPerSource` per document. The statement's plan is chosen before it
 * is built (search-plan.ts); lambdas/adapters/postgres/search-routines.sql shows the statements
 * it builds.
 */
import type { ScopeStatistics, SearchQuery, SearchScope } from '../../core/retrieval/types';
import { toVectorLiteral } from './database';
import {
  compileFilters,
  DOCUMENT_METADATA,
  indexedFilterSql,
  visibilityParts,
  type CompiledFilters,
} from './filter-sql';
import { fusion } from './search-fusion';
import { holdsLexeme, keywordArm, questionIdf, questionTerms } from './search-keyword-arm';
import {
  DEFAULT_SEARCH_SQL,
  planSearch,
  type SearchPlan,
  type SearchSqlOptions,
} from './search-plan';
import { vectorArm } from './search-vector-arm';
import { SqlParams } from './sql-params';
import { textSearchConfig } from './text-search';

/** One search statement and its parameters. */
export interface SearchStatement {
  readonly text: string;
  readonly values: unknown[];
  /** Each parameter's type (its cast in the text). */
  readonly types: readonly (string | undefined)[];
  /**
   * The statement runs as an installed routine with a cached plan (search-routines.ts): its text
   * depends only on the mode and the plan, not on filters, and it reads the HNSW index or no
   * vectors at all. An exact vector scan is planned on every search: a plan made without the
   * tenant's size served the 0.1 % tenant of the 1M-chunk benchmark in 37.4 ms at p50 against 8.4
   * planned for it (docs/decisions/0151-vector-plan-from-measured-costs.md).
   */
  readonly reusable: boolean;
  /**
   * The chunks the HNSW scan searches, which sizes `hnsw.ef_search` (searchTransactionSettings):
   * the table's, or a filter index's when one serves the statement.
   */
  readonly scanChunks: number;
}

/** What each arm builds on: the statement's parameters and the SQL the arms share. */
export interface StatementParts {
  readonly p: SqlParams;
  /** The question's embedding. */
  readonly emb: string;
  /** What the caller may see, in its two parts (filter-sql.ts). */
  readonly visible: { readonly documents: string; readonly chunkTenants: string };
  /** The request's filters and the tenant's policy over `c` and `d` (`true` without any). */
  readonly filters: string;
  /** Every test a chunk `c` and its document `d` must pass: visibility and filters. */
  readonly where: string;
  /** The candidates per arm. */
  readonly candidates: string;
  /** The scope's tenants: the caller's and the publishing ones. */
  readonly tenants: string;
  /** With filters whose scope is sized (`fscope`): not when a filter index serves them. */
  readonly filtered: boolean;
  readonly plan: SearchPlan;
  /**
   * The chunk's own test for a value with a filter index (filter-sql.ts `indexedFilterSql`), also
   * part of `filters`; null when the filters require none.
   */
  readonly indexed: string | null;
  /** With filters, the chunks of a small filtered scope (`fscope.small`), read by both arms. */
  readonly scopeChunks: string;
}

/**
 * The columns of the statement's rows, in order, with their types: a routine returns `SETOF
 * record`, and its call names them.
 */
export const SEARCH_HIT_COLUMNS = `chunk_id uuid, document_id uuid, chunk_index int, text text,
  cos float8, bm25 float8, fused float8, coverage float8, source_type text, title text,
  source_uri text, language text, metadata jsonb, start_offset int, end_offset int,
  owner_user_id text`;

/**
 * With filters, the scope is the documents that match them, found before any chunk is read: the
 * filters over the documents' own metadata (what a chunk without metadata of its own sees), up to
 * a cap of documents (`fdocs`). A small scope (`fscope.small`) is read from those documents by
 * both arms: HNSW tests filters on every chunk it visits, nearest first, and a selective filter
 * runs it out of its iterative limits before it has found the nearest matching chunks
 * (docs/decisions/0108-filtered-scope-from-documents.md); the keyword arm's rarest lexemes would
 * mostly select chunks the filter then drops. Chunks with metadata of their own are read too,
 * through their partial index (migrations/0008), and every chunk is tested with the full filters,
 * so nothing is missed.
 *
 * `fdocs` has no `LIMIT` of its own: a common table expression is planned to be read whole, so
 * the planner reads the matching documents through the metadata index, and it is read only as far
 * as its readers go (the cap, for sizing). Under a `LIMIT` the planner chose a sequential scan
 * that expects matches spread evenly through the table; documents whose metadata changed lately
 * sit together at its end, and at 1M chunks that scan read 164,262 other documents first
 * (docs/decisions/0165-filtered-scope-read-through-the-index.md).
 */
function filteredScope(
  p: SqlParams,
  tenants: string,
  documents: string,
  compiled: CompiledFilters,
  options: SearchSqlOptions,
  tableChunks: number,
): string[] {
  const cap = p.add(options.filteredDocumentsCap, 'int');
  const documentFilters = compiled.sql(DOCUMENT_METADATA);
  const fdocs = `fdocs AS MATERIALIZED (
      SELECT d.* FROM documents d
      WHERE d.tenant_id = ANY(${tenants}) AND ${documents} AND ${documentFilters})`;
  const tableSize = p.add(Math.max(tableChunks, 1), 'float8');
  const fscope = `fscope AS MATERIALIZED (
      SELECT NOT (count(*) > ${cap}
                  OR coalesce(sum(f.chunk_count), 0)::float8 ^ 2
                     >= ${p.add(options.filteredIndexCrossover, 'float8')} * ${tableSize}) AS small
      FROM (SELECT chunk_count FROM fdocs LIMIT ${cap} + 1) f)`;
  return [fdocs, fscope];
}

/**
 * The chunks of a small filtered scope that pass every test (`where`), with the columns both arms
 * read. The documents are `fdocs` rows (it keeps them whole), so the planner has no other way to
 * the chunks than from those documents.
 */
function scopeChunksSql(where: string): string {
  const columns = 'c.id, c.document_id, c.tenant_id, c.embedding, c.fts_length, c.term_counts';
  return `SELECT ${columns}
          FROM fdocs d JOIN chunks c ON c.document_id = d.id WHERE c.metadata = '{}' AND ${where}
          UNION ALL
          SELECT ${columns}
          FROM chunks c JOIN documents d ON d.id = c.document_id WHERE c.metadata <> '{}' AND ${where}`;
}

/** Builds the statement for one query; exported for the benchmark and tests. */
export function buildSearchSql(
  scope: SearchScope,
  query: SearchQuery,
  statistics: ScopeStatistics,
  overrides: Partial<SearchSqlOptions> = {},
): SearchStatement {
  const options = { ...DEFAULT_SEARCH_SQL, ...overrides };
  const p = new SqlParams();
  // Sent as `vector` whatever the column stores: against `halfvec` (migrations/0024) the server
  // converts it with pgvector's implicit cast, once, into a constant of the plan or the HNSW
  // scan's key, and an index the migration left with `vector` is served by the same text.
  const emb = p.add(toVectorLiteral(query.embedding), 'vector');
  const visible = visibilityParts(scope, p);
  const served = indexedFilterSql(query.filters, statistics.filterIndexes, p);
  const compiled = compileFilters(served?.rest ?? query.filters, query.allowedSourceTypes, p);
  const indexed = served?.sql ?? null;
  const filters = !indexed
    ? compiled.sql()
    : compiled.filtered
      ? `${compiled.sql()} AND ${indexed}`
      : indexed;
  const where = `${visible.documents} AND ${visible.chunkTenants} AND ${filters}`;
  const candidates = p.add(query.fusion.candidates, 'int');
  const filtered = compiled.filtered || indexed !== null;
  const plan = planSearch(statistics, filtered, options);
  // The scope's size: BM25's N (idf is computed in every mode, for the keyword coverage).
  const n = p.add(Math.max(statistics.chunks, 1), 'float8');
  // The question's lexemes in the query language. Their idf also gives every candidate a keyword
  // coverage, in any mode, for the confidence gate.
  const config = p.add(textSearchConfig(query.filters.lang?.[0] ?? 'en'), 'regconfig');
  const qtext = p.add(query.text, 'text');
  const tenants = p.add([scope.tenantId, ...scope.globalTenants], 'text[]');
  const ctes = [questionTerms(config, qtext)];
  // A filter served by a filter index needs no sizing of its scope: however few its chunks, both
  // arms read them from the value's own indexes.
  const scoped = filtered && !indexed;
  if (scoped)
    ctes.push(
      ...filteredScope(p, tenants, visible.documents, compiled, options, statistics.tableChunks),
    );
  const parts: StatementParts = {
    p,
    emb,
    visible,
    filters,
    where,
    candidates,
    tenants,
    filtered: scoped,
    plan,
    indexed,
    scopeChunks: scopeChunksSql(where),
  };
  if (query.mode !== 'keyword') ctes.push(vectorArm(parts));
  ctes.push(questionIdf(n, tenants));
  if (query.mode !== 'vector')
    ctes.push(...keywordArm(parts, options.dfBudget, statistics.meanLength));
  ctes.push(...fusion(p, emb, query));
  // Keyword coverage (for the confidence gate) only for the rows returned.
  const text = `WITH ${ctes.join(',\n')}
    SELECT c.id AS chunk_id, c.document_id, c.chunk_index, c.text, r.cos, r.bm25, r.fused,
           coalesce((SELECT sum(i.idf) FROM idf i WHERE ${holdsLexeme('c.term_counts', 'i.key')})
                    / nullif((SELECT sum(idf) FROM idf), 0), 0)::float8 AS coverage,
           d.source_type, d.title, d.source_uri, d.language, (d.metadata || c.metadata) AS metadata,
           c.start_offset, c.end_offset, coalesce(d.owner_user_id, d.uploaded_by) AS owner_user_id
    FROM (SELECT * FROM ranked WHERE per_source <= ${p.add(query.maxChunksPerSource, 'int')}
          ORDER BY fused DESC, cos DESC, id LIMIT ${p.add(query.topK, 'int')}) r
    JOIN chunks c ON c.id = r.id JOIN documents d ON d.id = c.document_id
    ORDER BY r.fused DESC, r.cos DESC, c.id`;
  const reusable = !filtered && (plan.vectorIndex || query.mode === 'keyword');
  const scanChunks = served?.chunks && served.chunks > 0 ? served.chunks : statistics.tableChunks;
  return { text, values: p.values, types: p.types, reusable, scanChunks };
}
