/**
 * The search statement's fusion: both arms' candidates joined, each arm's scores min-max
 * normalised over its own candidates and weighted (hybrid), with the dense arm's lead
 * (docs/decisions/0105-min-max-fusion-weight-per-model.md, 0106-dense-lead.md), then ranked with
 * the per-source rank the statement's cap reads. Each candidate carries its exact cosine
 * similarity, whatever the mode, so that scores are comparable and the confidence gate can use
 * them.
 */
import type { SearchQuery } from '../../core/retrieval/types';
import type { SqlParams } from './sql-params';

/** Min-max normalised over an arm's own candidates (NULL when they all score the same). */
function normalised(score: string, arm: string): string {
  const [low, high] = ['min', 'max'].map((f) => `${f}(${score}) FILTER (WHERE ${arm}) OVER ()`);
  return `(${score} - ${low}) / nullif(${high} - ${low}, 0)`;
}

/**
 * The common table expressions after the arms (`vec`, `kw`, as the mode has them), ending with
 * `ranked`: `id`, `cos`, `bm25`, `fused` and `per_source`, the candidate's rank in its document,
 * of the candidates whose cosine reaches the minimum score. `emb` is the question's embedding.
 */
export function fusion(p: SqlParams, emb: string, query: SearchQuery): string[] {
  const useVector = query.mode !== 'keyword';
  const useKeyword = query.mode !== 'vector';
  const ctes: string[] = [];
  // Both arms' candidates in one row each (a hash join, not a scan per row); the cosine of a
  // keyword-only candidate is computed here so that every hit reports it.
  const candidates =
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
      FROM (${candidates}) cand
      JOIN chunks c ON c.id = cand.id)`);
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
  return ctes;
}
