/** The search benchmark's section 4: latency of the search use case. */
import { readFileSync } from 'node:fs';
import type { Embedder } from '../lambdas/core/ports';
import type { Database } from '../lambdas/adapters/postgres/database';
import { DEFAULT_SEARCH_SQL } from '../lambdas/adapters/postgres/search-plan';
import { createSearchRepository } from '../lambdas/adapters/postgres/search-repository';
import { createSearch, DEFAULT_SEARCH_SETTINGS } from '../lambdas/core/retrieval/search';
import type { SearchMode, SearchQuery } from '../lambdas/core/retrieval/types';
import { GENERATOR, type BenchQuery } from './search-data';
import { LatencyRun } from './search-config';
import { seconds } from './search-corpus';
import { repositorySettings, mean, percentile } from './search-measure';

/**
 * An embedder the benchmark never calls: query vectors are precomputed (embedding excluded). Its
 * id picks the local model's fusion settings at any dimension, so only the vectors' size changes.
 */
const UNUSED_EMBEDDER: Embedder = {
  modelId: 'local/use-lite-512',
  dimension: GENERATOR.dimension,
  async embed() {
    throw new Error('the search benchmark passes precomputed query vectors');
  },
};

export const HYBRID_TOP_K = 8;
/** What the use case asks of each arm for top_k 8: max(candidates setting, 4 top_k). */
const HYBRID_CANDIDATES = Math.max(DEFAULT_SEARCH_SETTINGS.candidates, HYBRID_TOP_K * 4);
/** What the repository sets for a top_k 8 search in a table of `tableChunks`. */
export const hybridSettings = (tableChunks: number) =>
  repositorySettings(HYBRID_CANDIDATES, tableChunks);

/**
 * The search use case as POST /api/rag/search runs it (top_k 8, no filters), with the store's
 * keyword budget and plan caching given: a run for {@link measureLatency} that returns the hits'
 * chunk ids.
 */
export function useCase(
  db: Database,
  mode: SearchMode,
  store: { dfBudget: number; cachedPlans: boolean } = {
    dfBudget: DEFAULT_SEARCH_SQL.dfBudget,
    cachedPlans: true,
  },
) {
  const search = createSearch({
    store: createSearchRepository(db, store),
    embedder: UNUSED_EMBEDDER,
  });
  return async (tenantId: string, q: BenchQuery) =>
    (
      await search.searchWithEmbedding(
        { tenantId, userId: 'bench-user' },
        { queryText: q.text, topK: HYBRID_TOP_K, mode, filters: {} },
        q.embedding,
      )
    ).hits.map((h) => h.chunkId);
}

/** The query the use case hands the store for a top_k 8 request with no tenant policy. */
export function storeQuery(q: BenchQuery, mode: SearchMode = 'hybrid'): SearchQuery {
  return {
    text: q.text,
    embedding: q.embedding,
    topK: HYBRID_TOP_K,
    mode,
    filters: {},
    minScore: DEFAULT_SEARCH_SETTINGS.defaultMinScore,
    maxChunksPerSource: DEFAULT_SEARCH_SETTINGS.defaultMaxChunksPerSource,
    allowedSourceTypes: null,
    fusion: {
      ...(DEFAULT_SEARCH_SETTINGS.fusionByModel[UNUSED_EMBEDDER.modelId] ?? {
        denseWeight: DEFAULT_SEARCH_SETTINGS.defaultDenseWeight,
      }),
      candidates: HYBRID_CANDIDATES,
    },
  };
}

/** The machine's CPU time counters (/proc/stat, all CPUs): stolen and total; null off Linux. */
function cpuTimes(): { steal: number; total: number } | null {
  try {
    const first = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
    // user nice system idle iowait irq softirq steal (guest time is already in user and nice).
    const fields = first.trim().split(/\s+/).slice(1, 9).map(Number);
    if (fields.length < 8 || fields.some((x) => !Number.isFinite(x))) return null;
    return { steal: fields[7]!, total: fields.reduce((a, b) => a + b, 0) };
  } catch {
    return null;
  }
}

/** One way of answering a query, timed by {@link measureLatency}. */
interface TimedRun {
  readonly label: string;
  readonly run: (tenantId: string, q: BenchQuery) => Promise<string[]>;
}

/**
 * Times each run over the queries (after a warm-up), interleaved: every query is answered by
 * every run in turn, the order rotated from one query to the next, so that runs compared in one
 * call see the same machine (on this shared machine its speed changes within minutes). Stops
 * once past 20 queries and the wall-clock budget per run; the stolen CPU time is the block's.
 */
export async function measureLatency(
  runs: readonly TimedRun[],
  tenantId: string,
  warmup: readonly BenchQuery[],
  queries: readonly BenchQuery[],
  budgetSeconds: number,
): Promise<LatencyRun[]> {
  for (const { run } of runs) for (const q of warmup) await run(tenantId, q);
  const times = runs.map((): number[] => []);
  const hits = runs.map((): number[] => []);
  const cpuBefore = cpuTimes();
  const started = performance.now();
  for (const [i, q] of queries.entries()) {
    if (i >= 20 && seconds(started) > budgetSeconds * runs.length) break;
    for (let j = 0; j < runs.length; j++) {
      const k = (i + j) % runs.length;
      const t0 = performance.now();
      const ids = await runs[k]!.run(tenantId, q);
      times[k]!.push(performance.now() - t0);
      hits[k]!.push(ids.length);
    }
  }
  const cpuAfter = cpuTimes();
  const ticks = cpuBefore && cpuAfter ? cpuAfter.total - cpuBefore.total : 0;
  return runs.map(({ label }, k) => {
    const sorted = [...times[k]!].sort((a, b) => a - b);
    return {
      label,
      tenantId,
      queries: sorted.length,
      timeCapped: sorted.length < queries.length,
      p50Ms: percentile(sorted, 50),
      p95Ms: percentile(sorted, 95),
      p99Ms: percentile(sorted, 99),
      meanMs: mean(sorted),
      avgHits: mean(hits[k]!),
      stealShare:
        cpuBefore && cpuAfter && ticks > 0 ? (cpuAfter.steal - cpuBefore.steal) / ticks : null,
    };
  });
}

/** How many queries {@link measureRepeat} runs twice each. */
export const REPEAT_QUERIES = 30;

/**
 * Each query run twice in a row, the first time and the second timed apart, after the buffer
 * cache is loaded: both runs find every page in shared_buffers, so what the first pays more is
 * the machine's memory (CPU caches and address translation warmed by the first run), not I/O or
 * the plan. On a machine where it is large, figures of a large corpus are not comparable with a
 * run on another machine.
 */
export async function measureRepeat(
  run: (tenantId: string, q: BenchQuery) => Promise<string[]>,
  tenantId: string,
  queries: readonly BenchQuery[],
): Promise<{ queries: number; firstP50Ms: number; secondP50Ms: number }> {
  const first: number[] = [];
  const second: number[] = [];
  for (const q of queries) {
    for (const times of [first, second]) {
      const t0 = performance.now();
      await run(tenantId, q);
      times.push(performance.now() - t0);
    }
  }
  const p50 = (xs: number[]) =>
    percentile(
      [...xs].sort((a, b) => a - b),
      50,
    );
  return { queries: first.length, firstP50Ms: p50(first), secondP50Ms: p50(second) };
}
