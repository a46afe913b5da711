/**
 * `npm run bench -- chunker`: chunking a long text (BENCH_CHUNKER_SENTENCES generated sentences,
 * default 20,000, about 1.6 MB) with the real cl100k counter, and the sentence segmentation under
 * it done both ways: a window at a time, as the chunker does, and over the whole string at once,
 * which V8 makes quadratic in the string's length. Prints the times and their ratio from one run.
 */
import { createTokenCounter } from '../lambdas/adapters/tokenizer/gpt-token-counter';
import { chunkText, sentenceSegments } from '../lambdas/core/ingestion/chunker';

const WORDS =
  'the river town council agreed that a new bridge would be built over several years with funds from the region'.split(
    ' ',
  );

/** `n` sentences of 8 to 21 words, seeded, as one text. */
function generatedText(n: number): string {
  let x = 7;
  const next = () => (x = (x * 48271) % 2147483647);
  const sentences: string[] = [];
  for (let i = 0; i < n; i += 1) {
    const words = Array.from({ length: 8 + (next() % 14) }, () => WORDS[next() % WORDS.length]);
    const sentence = words.join(' ');
    sentences.push(`${sentence.charAt(0).toUpperCase()}${sentence.slice(1)}.`);
  }
  return sentences.join(' ');
}

/** How many items an iterable yields, without keeping them (each segment holds a copy of its input). */
function count(items: Iterable<unknown>): number {
  const iterator = items[Symbol.iterator]();
  let n = 0;
  while (!iterator.next().done) n += 1;
  return n;
}

export interface ChunkerBenchReport {
  readonly characters: number;
  readonly sentences: number;
  readonly chunks: number;
  readonly chunkMs: number;
  readonly windowedSegmentMs: number;
  readonly wholeSegmentMs: number;
}

export async function benchChunker(
  options: { sentences?: number } = {},
): Promise<ChunkerBenchReport> {
  const text = generatedText(options.sentences ?? 20_000);
  let t0 = performance.now();
  const chunks = chunkText(text, { targetTokens: 512, overlapTokens: 128 }, createTokenCounter());
  const chunkMs = performance.now() - t0;
  t0 = performance.now();
  const windowed = count(sentenceSegments(text));
  const windowedSegmentMs = performance.now() - t0;
  t0 = performance.now();
  const whole = count(new Intl.Segmenter('en', { granularity: 'sentence' }).segment(text));
  const wholeSegmentMs = performance.now() - t0;
  if (whole !== windowed) throw new Error(`segmentations differ: ${windowed} against ${whole}`);
  const report = {
    characters: text.length,
    sentences: windowed,
    chunks: chunks.length,
    chunkMs,
    windowedSegmentMs,
    wholeSegmentMs,
  };
  console.log(
    `${(text.length / 1e6).toFixed(1)} MB, ${windowed} sentences: ${chunks.length} chunks in ${(chunkMs / 1000).toFixed(1)} s; ` +
      `sentence segmentation ${(windowedSegmentMs / 1000).toFixed(2)} s a window at a time, ` +
      `${(wholeSegmentMs / 1000).toFixed(1)} s over the whole string (${(wholeSegmentMs / windowedSegmentMs).toFixed(0)} times as long)`,
  );
  return report;
}
