/**
 * The optional rerank stage after fusion: a cross-encoder (Bedrock's Amazon or Cohere Rerank, or
 * any Cohere-style `/rerank` endpoint) re-scores the fused candidates against the question. It is
 * best-effort: when the reranker fails or runs past its timeout the fused order stands, and the
 * result says which happened (docs/decisions/0117-query-document-and-rerank.md).
 */
import type { Log, MetricsSink } from '../ports';
import type { SearchHit } from './types';

/** One document's relevance, by its index in the request. */
export interface RerankScore {
  readonly index: number;
  readonly relevance: number;
}

/** Re-scores documents against a query (a port; adapters in lambdas/adapters/rerank). */
export interface Reranker {
  /** e.g. `bedrock/cohere.rerank-v3-5:0` or `rerank/bge-reranker-v2-m3`. */
  readonly modelId: string;
  /**
   * The `topN` most relevant documents, best first. Must stop when `signal` aborts.
   * @throws on any failure; the caller falls back to the fused order.
   */
  rerank(
    query: string,
    documents: readonly string[],
    options: { readonly topN: number; readonly signal: AbortSignal },
  ): Promise<RerankScore[]>;
}

/** How the rerank stage runs. */
export interface RerankSettings {
  /** Fused candidates sent to the reranker (at least the request's top_k). */
  readonly candidates: number;
  /** Longest wait for the reranker, in milliseconds, before the fused order is used. */
  readonly timeoutMs: number;
}

export const DEFAULT_RERANK_SETTINGS: RerankSettings = { candidates: 30, timeoutMs: 2_000 };

/** What the rerank stage did, reported with the results. */
export interface RerankOutcome {
  readonly model: string;
  /** `applied`: reranked; `failed` / `timed_out`: the fused order was kept. */
  readonly status: 'applied' | 'failed' | 'timed_out';
  /** Candidates sent to the reranker. */
  readonly candidates: number;
  readonly ms: number;
}

/**
 * Reorders `hits` (fused order, best first) by the reranker and keeps `topK`; on failure or
 * timeout keeps the first `topK` in fused order. Never throws.
 */
export async function rerankHits(
  reranker: Reranker,
  query: string,
  hits: readonly SearchHit[],
  topK: number,
  settings: RerankSettings,
  deps: { log: Log; metrics: MetricsSink },
): Promise<{ hits: SearchHit[]; outcome: RerankOutcome }> {
  const started = performance.now();
  const outcome = (status: RerankOutcome['status']): RerankOutcome => ({
    model: reranker.modelId,
    status,
    candidates: hits.length,
    ms: Math.round(performance.now() - started),
  });
  if (hits.length === 0) return { hits: [], outcome: outcome('applied') };
  const controller = new AbortController();
  let timedOut = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      timedOut = true;
      const error = new Error(
        `Reranker ${reranker.modelId} timed out after ${settings.timeoutMs} ms`,
      );
      controller.abort(error);
      reject(error);
    }, settings.timeoutMs);
  });
  try {
    const scores = await Promise.race([
      reranker.rerank(
        query,
        hits.map((hit) => hit.text),
        { topN: Math.min(topK, hits.length), signal: controller.signal },
      ),
      deadline,
    ]);
    const reranked = orderByScores(hits, scores, topK);
    deps.metrics.timing('RerankLatency', performance.now() - started);
    return { hits: reranked, outcome: outcome('applied') };
  } catch (err) {
    const status = timedOut ? 'timed_out' : 'failed';
    deps.log.warn('rerank failed; the fused order is used', {
      err,
      status,
      model: reranker.modelId,
    });
    deps.metrics.count(timedOut ? 'RerankTimeouts' : 'RerankErrors');
    return { hits: hits.slice(0, topK), outcome: outcome(status) };
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
}

/**
 * The hits the scores name, best first, then (if the reranker returned fewer than `topK`) the
 * rest in fused order. Scores that name no candidate, or one twice, are a reranker failure.
 */
function orderByScores(
  hits: readonly SearchHit[],
  scores: readonly RerankScore[],
  topK: number,
): SearchHit[] {
  const seen = new Set<number>();
  for (const { index, relevance } of scores) {
    if (!Number.isInteger(index) || index < 0 || index >= hits.length || seen.has(index)) {
      throw new Error(`The reranker returned index ${index} for ${hits.length} candidates`);
    }
    if (!Number.isFinite(relevance)) throw new Error(`The reranker returned score ${relevance}`);
    seen.add(index);
  }
  const ranked = [...scores]
    .sort((a, b) => b.relevance - a.relevance || a.index - b.index)
    .map(({ index, relevance }) => ({ ...hits[index]!, rerankScore: relevance }));
  const rest = hits.filter((_, index) => !seen.has(index));
  return [...ranked, ...rest].slice(0, topK);
}
