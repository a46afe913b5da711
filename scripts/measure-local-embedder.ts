/**
 * Measures the local embedder's throughput on SciFact-like passages (about 200 words each) for
 * 0 (in-process), 1 and 2 worker threads, in one run.
 *
 *   npx tsx scripts/measure-local-embedder.ts [--count 200] [--batch-size 8] [--threads 0,1,2]
 *
 * Reads /work/shared/eval/scifact-train/corpus.jsonl (override with SCIFACT_CORPUS).
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
    const start = performance.now();
    const vectors = await embedder.embed(passages);
    const seconds = (performance.now() - start) / 1000;
    if (vectors.length !== passages.length) throw new Error('wrong number of vectors');
    return { loadMs, seconds, perSecond: passages.length / seconds };
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
    },
  });
  const count = Number(values.count);
  const batchSize = Number(values['batch-size']);
  const threadCounts = values.threads.split(',').map(Number);
  const passages = loadPassages(count);

  console.log(
    `${count} passages of ${WORDS} words, batchSize ${batchSize}, ` +
      `${os.availableParallelism()} CPUs (${os.cpus()[0]?.model ?? 'unknown'}), node ${process.version}`,
  );
  console.log('threads | load ms | seconds | texts/s | ratio vs in-process');
  let baseline: number | undefined;
  for (const threads of threadCounts) {
    const result = await measure(threads, batchSize, passages);
    baseline ??= result.perSecond;
    console.log(
      [
        String(threads).padStart(7),
        result.loadMs.toFixed(0).padStart(7),
        result.seconds.toFixed(2).padStart(7),
        result.perSecond.toFixed(1).padStart(7),
        `${(result.perSecond / baseline).toFixed(2)}x`,
      ].join(' | '),
    );
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
