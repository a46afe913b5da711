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
 * The exact scan orders by the distance plus 0, an expression HNSW cannot serve, so that a plan
 * made without the scope's size (a routine's generic plan) still scans exactly.
 */
export function vectorArm(parts: StatementParts): string {
  const { emb, visible, filters, candidates, scopeChunks } = parts;
  const arm = (
    tenantTest: string,
    order: string,
  ) => `SELECT c.id, 1 - (c.embedding <=> ${emb}) AS cos
        FROM chunks c JOIN documents d ON d.id = c.document_id
        WHERE ${visible.documents} AND ${tenantTest} AND ${filters}
        ORDER BY ${order}
        LIMIT ${candidates}`;
  const scan = parts.plan.vectorIndex
    ? arm(`(${visible.chunkTenants}) IS TRUE`, `c.embedding <=> ${emb}`)
    : arm(visible.chunkTenants, `(c.embedding <=> ${emb}) + 0`);
  // With filters, a small filtered scope is scanned from its documents (a one-time filter on
  // `fscope` runs one of the two); a large one as without filters.
  const vec = parts.filtered
    ? `SELECT * FROM (SELECT c.id, 1 - (c.embedding <=> ${emb}) AS cos
          FROM (${scopeChunks}) c
          ORDER BY c.embedding <=> ${emb}
          LIMIT ${candidates}) scope_scan WHERE (SELECT small FROM fscope)
        UNION ALL
        SELECT * FROM (${scan}) scope_wide WHERE NOT (SELECT small FROM fscope)`
    : scan;
  return `vec AS MATERIALIZED (${vec})`;
}
