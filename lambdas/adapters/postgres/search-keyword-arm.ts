/**
 * The search statement's keyword arm: BM25 over the question's lexemes, with statistics from
 * `term_stats` / `tenant_stats` and each chunk's term frequencies from its `term_counts`
 * (docs/decisions/0102-term-counts.md). The arm is bounded: it scores only the chunks holding the
 * question's rarest lexemes, up to a document-frequency budget, so its cost does not grow with the
 * tenant (docs/decisions/0104-keyword-budget.md). The question's lexemes and their idf are read in
 * every mode: they give every hit its keyword coverage, for the confidence gate.
 */
import type { StatementParts } from './search-statement';

/**
 * The lexemes of a chunk (`alias`) prefixed with its tenant: the expression of the tenant-lexeme
 * GIN index (migrations/0009) and of each filter index's lexeme index (filter-indexes.ts), which
 * must be written the same way for the planner to use them.
 */
export const TENANT_LEXEMES = (alias?: string): string =>
  alias
    ? `gw_tenant_lexemes(${alias}.fts, ${alias}.tenant_id)`
    : 'gw_tenant_lexemes(fts, tenant_id)';

/** BM25 parameters (the usual Robertson / Lucene defaults). */
const K1 = 1.2;
const B = 0.75;

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

/** SQL for whether a chunk's term counts (`counts`) hold the lexeme of `key`. */
export const holdsLexeme = (counts: string, key: string): string =>
  termCounts.holds(termCounts.entry(counts, key), key);

/**
 * `terms`: the lexemes of the question (`qtext`) in the query language (`config`); stemmed once,
 * then cast with ::tsquery (going through to_tsquery again would stem them a second time).
 */
export function questionTerms(config: string, qtext: string): string {
  return `terms AS MATERIALIZED (
      SELECT coalesce(array_agg(DISTINCT lexeme), '{}') AS lexemes FROM unnest(to_tsvector(${config}, ${qtext})))`;
}

/**
 * `idf`: each lexeme of the question with its key, its document frequency in the scope's
 * `tenants` and its BM25 idf for a scope of `n` chunks.
 */
export function questionIdf(n: string, tenants: string): string {
  return `idf AS MATERIALIZED (
      SELECT t.lexeme AS term, gw_term_key(t.lexeme) AS key, coalesce(df.df, 0) AS df,
             ln(1 + (${n} - coalesce(df.df, 0) + 0.5) / (coalesce(df.df, 0) + 0.5)) AS idf
      FROM unnest((SELECT lexemes FROM terms)) t(lexeme)
      LEFT JOIN (SELECT term, sum(doc_freq)::float8 AS df FROM term_stats
                 WHERE tenant_id = ANY(${tenants}) AND term = ANY((SELECT lexemes FROM terms)::text[]) GROUP BY term) df
        ON df.term = t.lexeme)`;
}

/**
 * The arm's common table expressions, ending with `kw`: its candidates (`id`, `bm25`,
 * `matched_idf`, the idf of the question's lexemes the chunk holds), best first. `budget` is
 * {@link SearchSqlOptions.dfBudget}, `meanLength` the scope's mean chunk length in lexemes.
 */
export function keywordArm(parts: StatementParts, budget: number, meanLength: number): string[] {
  const { p, tenants, where, filtered, scopeChunks, candidates } = parts;
  const ctes: string[] = [];
  const limit = p.add(budget, 'int');
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
              WHERE kept.rank = 1 OR kept.cumulative <= ${limit})::tsquery AS q)`);
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
  const defer = parts.plan.deferDocumentCheck;
  // With a filter index's value required, its test on the chunk itself comes first, where the
  // value's lexeme index (filter-indexes.ts) can serve it: the chunks holding the lexemes are
  // then read among the value's chunks only, not among the whole tenant's.
  const tests = [
    `${TENANT_LEXEMES('c')} @@ (SELECT q FROM tsq)`,
    ...(parts.indexed ? [parts.indexed] : []),
    ...(defer ? [] : [documentCheck]),
  ];
  let selected = `SELECT c.id, c.document_id, c.tenant_id, c.fts_length, c.term_counts FROM chunks c
            WHERE ${tests.join('\n              AND ')}
            LIMIT ${limit}`;
  if (filtered) {
    // A small filtered scope: its chunks holding any of the question's lexemes, not only the
    // rarest, which the budget would otherwise spend on chunks the filters drop. Tested on the
    // term counts in the row, not the full-text vector, which is stored out of it
    // (docs/decisions/0150-full-text-vector-out-of-line.md).
    selected = `SELECT * FROM (${selected}) wide WHERE NOT (SELECT small FROM fscope)
            UNION ALL
            SELECT * FROM (
              SELECT c.id, c.document_id, c.tenant_id, c.fts_length, c.term_counts FROM (${scopeChunks}) c
              WHERE EXISTS (SELECT 1 FROM idf i WHERE i.df > 0 AND ${holdsLexeme('c.term_counts', 'i.key')})
              LIMIT ${limit}) narrow WHERE (SELECT small FROM fscope)`;
  }
  const avgdl = p.add(Math.max(meanLength, 1), 'float8');
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
  return ctes;
}
