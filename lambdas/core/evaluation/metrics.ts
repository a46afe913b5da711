/**
 * Standard IR metrics, as BEIR reports them: nDCG@k with graded (linear) gains and a log2
 * discount against the ideal ranking from the judgements, Recall@k and MRR@k.
 */

/** Relevance judgements of one query: document id to grade (> 0 is relevant). */
export type Judgements = ReadonlyMap<string, number>;

export function ndcgAt(k: number, ranked: readonly string[], rel: Judgements): number {
  let dcg = 0;
  ranked.slice(0, k).forEach((id, i) => {
    const g = rel.get(id) ?? 0;
    if (g > 0) dcg += g / Math.log2(i + 2);
  });
  const ideal = [...rel.values()]
    .filter((g) => g > 0)
    .sort((a, b) => b - a)
    .slice(0, k);
  const idcg = ideal.reduce((sum, g, i) => sum + g / Math.log2(i + 2), 0);
  return idcg === 0 ? 0 : dcg / idcg;
}

export function recallAt(k: number, ranked: readonly string[], rel: Judgements): number {
  const relevant = [...rel.entries()].filter(([, g]) => g > 0).map(([id]) => id);
  if (relevant.length === 0) return 0;
  const top = new Set(ranked.slice(0, k));
  return relevant.filter((id) => top.has(id)).length / relevant.length;
}

export function mrrAt(k: number, ranked: readonly string[], rel: Judgements): number {
  const i = ranked.slice(0, k).findIndex((id) => (rel.get(id) ?? 0) > 0);
  return i < 0 ? 0 : 1 / (i + 1);
}

export interface RetrievalScores {
  readonly ndcg10: number;
  readonly recall100: number;
  readonly mrr10: number;
  readonly queries: number;
}

/** Averages the metrics over the queries that have at least one relevant document. */
export function scoreRun(
  run: ReadonlyMap<string, readonly string[]>,
  qrels: ReadonlyMap<string, Judgements>,
): RetrievalScores {
  let n = 0;
  let ndcg = 0;
  let recall = 0;
  let mrr = 0;
  for (const [queryId, rel] of qrels) {
    if (![...rel.values()].some((g) => g > 0)) continue;
    const ranked = run.get(queryId) ?? [];
    n += 1;
    ndcg += ndcgAt(10, ranked, rel);
    recall += recallAt(100, ranked, rel);
    mrr += mrrAt(10, ranked, rel);
  }
  return n === 0
    ? { ndcg10: 0, recall100: 0, mrr10: 0, queries: 0 }
    : { ndcg10: ndcg / n, recall100: recall / n, mrr10: mrr / n, queries: n };
}
