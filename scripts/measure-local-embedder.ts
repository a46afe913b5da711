/**
 * Measures the local embedder's throughput on SciFact-like passages (about 200 words each) for
 * 0 (in-process), 1 and 2 worker threads, in one run.
 *
 *   npx tsx scripts/measure-local-embedder.ts [--count 200] [--batch-size 8] [--threads 0,1,2]
 *     [--rounds 1]
 *
 * With several rounds the thread counts are interleaved and the best round of each is kept,
 * which tames noise from other processes. "cores" is process CPU time (all threads) divided
 * by wall time: about 2 means both cores were busy; "texts/cpu-s" is the cost per text, which
 * other processes competing for the CPUs do not change. Reads
 * /work/shared/eval/scifact-train/corpus.jsonl (override with SCIFACT_CORPUS).
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { createLocalEmbedder } from '../lambdas/adapters/embeddings/local-embedder';

const CORPUS = process.env.SCIFACT_CORPUS ?? '/work/shared/eval/scifact-train/corpus.jsonl';
const WORDS = 200;

/** Passages of exactly WORDS words: title and abstract, from documents long enough. */
function loadPassages(count: number): string[] {
  const passages: string[] = [];
  for (const line of readFileSync(CORPUS, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const doc = JSON.parse(line) as { title?: string; text?: string };
    const words = `${doc.title ?? ''}. ${doc.text ?? ''}`.split(/\s+/).filter(Boolean);
    if (words.length < WORDS) continue;
    passages.push(words.slice(0, WORDS).join(' '));
    if (passages.length === count) return passages;
  }
  throw new Error(`Only ${passages.length} passages of ${WORDS} words in ${CORPUS}`);
}

async function measure(threads: number, batchSize: number, passages: string[]) {
  const loadStart = performance.now();
  const embedder = await createLocalEmbedder({ threads, batchSize });
  const loadMs = performance.now() - loadStart;
  try {
    // Warm up every worker (first calls compile WASM kernels) without timing it.
    await embedder.embed(passages.slice(0, Math.max(2, threads * 2)));
    const cpuBefore = process.cpuUsage();
    const start = performance.now();
    const vectors = await embedder.embed(passages);
    const seconds = (performance.now() - start) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    if (vectors.length !== passages.length) throw new Error('wrong number of vectors');
    const cpuSeconds = (cpu.user + cpu.system) / 1e6;
    return {
      loadMs,
      seconds,
      perSecond: passages.length / seconds,
      cores: cpuSeconds / seconds,
      perCpuSecond: passages.length / cpuSeconds,
    };
  } finally {
    await embedder.close?.();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      count: { type: 'string', default: '200' },
      'batch-size': { type: 'string', default: '8' },
      threads: { type: 'string', default: '0,1,2' },
      rounds: { type: 'string', default: '1' },
    },
  });
  const rounds = Number(values.rounds);
  const count = Number(values.count);
  const batchSize = Number(values['batch-size']);
  const threadCounts = values.threads.split(',').map(Number);
  const passages = loadPassages(count);

  console.log(
    `${count} passages of ${WORDS} words, batchSize ${batchSize}, ` +
      `${os.availableParallelism()} CPUs (${os.cpus()[0]?.model ?? 'unknown'}), node ${process.version}, ` +
      `load average ${os.loadavg()[0]?.toFixed(2)}`,
  );
  const best = new Map<number, Awaited<ReturnType<typeof measure>>>();
  for (let round = 1; round <= rounds; round++) {
    for (const threads of threadCounts) {
      const result = await measure(threads, batchSize, passages);
      if (rounds > 1) {
        console.log(
          `round ${round}: threads ${threads}: ${result.perSecond.toFixed(1)} texts/s, ` +
            `${result.cores.toFixed(2)} cores`,
        );
      }
      if (result.perSecond > (best.get(threads)?.perSecond ?? 0)) best.set(threads, result);
    }
  }
  console.log('threads | load ms | seconds | texts/s | cores | texts/cpu-s | ratio vs first');
  const baseline = best.get(threadCounts[0] ?? 0)?.perSecond ?? 1;
  for (const [threads, result] of best) {
    console.log(
      [
        String(threads).padStart(7),
        result.loadMs.toFixed(0).padStart(7),
        result.seconds.toFixed(2).padStart(7),
        result.perSecond.toFixed(1).padStart(7),
        result.cores.toFixed(2).padStart(5),
        result.perCpuSecond.toFixed(1).padStart(11),
        `${(result.perSecond / baseline).toFixed(2)}x`,
      ].join(' | '),
    );
  }
  console.log(`load average at the end ${os.loadavg()[0]?.toFixed(2)}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
