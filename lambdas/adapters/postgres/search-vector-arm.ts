/**
 * The search statement's vector arm: the nearest chunks by cosine distance, through pgvector's
 * HNSW index or an exact scan of the scope, as planned (search-plan.ts).
 */
import type { StatementParts } from './search-statement';

/**
 * `vec`: the arm's candidates (`id`, `cos`), nearest first. The scope's vectors are read by an
 * exact scan through the tenant b-tree while the scope is small, by the HNSW index with the
 * iterative scan beyond that (`plan.vectorIndex`). The planner cannot make this choice itself:
 * for a mid-size tenant it prefers the b-tree and a sort, many times slower than HNSW
 * (docs/decisions/0107-hnsw-or-exact-scan.md). `(..) IS TRUE` hides the tenant test from the
 * b-tree while keeping its selectivity estimate, so HNSW is the cheap ordered path left.
 * The exact scan orders by the distance plus 0, an expression HNSW cannot serve, so that it stays
 * exact whatever the planner estimates; it is planned on every search, never kept in a routine
 * (docs/decisions/0151-vector-plan-from-measured-costs.md).
 */
export function vectorArm(parts: StatementParts): string {
  const { emb, candidates, scopeChunks } = parts;
  const scan = parts.plan.vectorIndex
    ? hnswScan(parts)
    : parts.plan.deferDocumentCheck
      ? deferredExactScan(parts)
      : exactScan(parts);
  // With filters, a small filtered scope is scanned from its documents (a one-time filter on
  // `fscope` runs one of the two); a large one as without filters.
  const vec = parts.filtered
    ? `SELECT * FROM (SELECT c.id, 1 - c.distance AS cos FROM (
            SELECT c.id, c.embedding <=> ${emb} AS distance FROM (${scopeChunks}) c
            ORDER BY distance
            LIMIT ${candidates}) c) scope_scan WHERE (SELECT small FROM fscope)
        UNION ALL
        SELECT * FROM (${scan}) scope_wide WHERE NOT (SELECT small FROM fscope)`
    : scan;
  return `vec AS MATERIALIZED (${vec})`;
}

/** HNSW with the iterative scan; the distance is recomputed only for the rows it returns. */
function hnswScan(parts: StatementParts): string {
  const { emb, visible, filters, candidates } = parts;
  return `SELECT c.id, 1 - (c.embedding <=> ${emb}) AS cos
        FROM chunks c JOIN documents d ON d.id = c.document_id
        WHERE ${visible.documents} AND (${visible.chunkTenants}) IS TRUE AND ${filters}
        ORDER BY c.embedding <=> ${emb}
        LIMIT ${candidates}`;
}

/**
 * The exact scan: the scope's chunks (through the tenant b-tree) and their documents, nearest
 * first. Each distance is computed once, as a column the sort reads (in the ORDER BY and in the
 * select list it was computed twice per chunk).
 */
function exactScan(parts: StatementParts): string {
  const { emb, visible, filters, candidates } = parts;
  return `SELECT c.id, 1 - c.distance AS cos FROM (
          SELECT c.id, (c.embedding <=> ${emb}) + 0 AS distance
          FROM chunks c JOIN documents d ON d.id = c.document_id
          WHERE ${visible.documents} AND ${visible.chunkTenants} AND ${filters}
          ORDER BY distance
          LIMIT ${candidates}) c`;
}

/**
 * The exact scan when the caller sees nearly all of the scope (`plan.deferDocumentCheck`, which
 * holds only without filters): every chunk of the scope's tenants is ranked by distance, read in
 * one pass through the tenant b-tree, then documents are checked in that order, through their
 * primary key, until the candidates are found. Joining documents first made the planner descend
 * the chunk index once per document; this checks about `candidates` documents
 * (docs/decisions/0151-vector-plan-from-measured-costs.md). OFFSET 0 keeps the check above the
 * sort, so it runs only until LIMIT is met.
 */
function deferredExactScan(parts: StatementParts): string {
  const { emb, visible, candidates } = parts;
  return `SELECT c.id, 1 - c.distance AS cos FROM (
          SELECT c.id, c.document_id, (c.embedding <=> ${emb}) + 0 AS distance
          FROM chunks c WHERE ${visible.chunkTenants}
          ORDER BY distance OFFSET 0) c
        WHERE coalesce((SELECT ${visible.documents} FROM documents d WHERE d.id = c.document_id), false)
        LIMIT ${candidates}`;
}
