/**
 * `npm run bench [-- part ...]`: the benchmarks, each printing ratios measured in one run.
 * Parts: chunker (a long text's chunking and sentence segmentation; BENCH_CHUNKER_SENTENCES),
 * ingest (SciFact on the embedded default), search (100k chunks on PostgreSQL;
 * BENCH_SEARCH_CHUNKS, BENCH_SEARCH_DIMENSIONS, BENCH_SEARCH_BUDGET_SWEEP=off), search-graph (HNSW
 * build parameters against recall on the same corpus; BENCH_GRAPH_PARAMS), search-covering (the
 * small tenants' exact scans with a covering index beside the migrations' ones), search-selective
 * (the search benchmark's section 5 alone: selective metadata filters and their filter indexes),
 * limiter (DynamoDB calls and over-admission on dynalite), model-switch (search latency during
 * an embedding model switch on PostgreSQL; BENCH_SWITCH_DOCUMENTS), model-switch-swap (the switch's
 * last step on a large index; BENCH_SWAP_CHUNKS), cold-start (Lambda bundle sizes and
 * init times; BENCH_COLD_START_RUNS, BENCH_COLD_START_SOURCE_MAPS=1), load (50 clients on the
 * embedded default's API for 60 s; BENCH_LOAD_SECONDS, BENCH_LOAD_CLIENTS).
 * Nothing here asserts on time: the machines are shared and noisy.
 */
import { benchChunker } from './chunker';
import { benchColdStart, parseColdStartArgs } from './cold-start';
import { benchIngest } from './ingest';
import { benchLimiter } from './limiter';
import { benchLoad } from './load';
import { benchModelSwitch } from './model-switch';
import { benchModelSwitchSwap } from './model-switch-swap';
import { benchSearch } from './search';
import { benchSearchCovering } from './search-covering';
import { benchSearchGraph, parseGraphParams } from './search-graph';
import { benchSearchSelective } from './search-selective';

const PARTS: Record<string, () => Promise<unknown>> = {
  chunker: () =>
    benchChunker(
      process.env.BENCH_CHUNKER_SENTENCES
        ? { sentences: Number(process.env.BENCH_CHUNKER_SENTENCES) }
        : {},
    ),
  ingest: () =>
    benchIngest(
      process.env.BENCH_INGEST_LIMIT ? { limit: Number(process.env.BENCH_INGEST_LIMIT) } : {},
    ),
  search: () =>
    benchSearch({
      ...(process.env.BENCH_SEARCH_CHUNKS
        ? { chunks: Number(process.env.BENCH_SEARCH_CHUNKS) }
        : {}),
      ...(process.env.BENCH_SEARCH_BUDGET_SWEEP === 'off' ? { budgetSweep: false } : {}),
    }),
  'search-graph': () =>
    benchSearchGraph({
      ...(process.env.BENCH_SEARCH_CHUNKS
        ? { chunks: Number(process.env.BENCH_SEARCH_CHUNKS) }
        : {}),
      ...(process.env.BENCH_GRAPH_PARAMS
        ? { params: parseGraphParams(process.env.BENCH_GRAPH_PARAMS) }
        : {}),
    }),
  'search-covering': () =>
    benchSearchCovering(
      process.env.BENCH_SEARCH_CHUNKS ? { chunks: Number(process.env.BENCH_SEARCH_CHUNKS) } : {},
    ),
  'search-selective': () =>
    benchSearchSelective(
      process.env.BENCH_SEARCH_CHUNKS ? { chunks: Number(process.env.BENCH_SEARCH_CHUNKS) } : {},
    ),
  limiter: () => benchLimiter(),
  'model-switch': () =>
    benchModelSwitch(
      process.env.BENCH_SWITCH_DOCUMENTS
        ? { documents: Number(process.env.BENCH_SWITCH_DOCUMENTS) }
        : {},
    ),
  'model-switch-swap': () =>
    benchModelSwitchSwap(
      process.env.BENCH_SWAP_CHUNKS ? { chunks: Number(process.env.BENCH_SWAP_CHUNKS) } : {},
    ),
  load: () =>
    benchLoad({
      ...(process.env.BENCH_LOAD_SECONDS
        ? { seconds: Number(process.env.BENCH_LOAD_SECONDS) }
        : {}),
      ...(process.env.BENCH_LOAD_CLIENTS
        ? { clients: Number(process.env.BENCH_LOAD_CLIENTS) }
        : {}),
    }),
  'cold-start': () =>
    benchColdStart(
      parseColdStartArgs([
        ...(process.env.BENCH_COLD_START_RUNS ? ['--runs', process.env.BENCH_COLD_START_RUNS] : []),
        ...(process.env.BENCH_COLD_START_SOURCE_MAPS === '1' ? ['--source-maps'] : []),
      ]),
    ),
};

/** Parts run only when named: `search-selective` is a section of `search`. */
const NAMED_ONLY = new Set(['search-selective']);

async function main(): Promise<void> {
  const requested = process.argv.slice(2);
  const parts =
    requested.length > 0 ? requested : Object.keys(PARTS).filter((p) => !NAMED_ONLY.has(p));
  for (const part of parts) {
    const run = PARTS[part];
    if (!run)
      throw new Error(`unknown benchmark part "${part}"; parts: ${Object.keys(PARTS).join(', ')}`);
    console.log(`\n== ${part} ==`);
    await run();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
