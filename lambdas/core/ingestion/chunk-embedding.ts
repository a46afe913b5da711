/**
 * What a chunk's vector is made from, in one place: the ingestion pipeline and the re-embedding
 * of a model switch (core/embedding/model-switch.ts) both embed chunks through it, so a switched
 * index holds exactly the vectors a fresh one would.
 */
import type { Embedder, TokenCounter } from '../ports';
import { withoutHeadingMarks } from '../text/lines';
import { chunkText } from './chunker';

/** The settings of ingestion that shape a chunk's vector. */
export interface ChunkEmbeddingSettings {
  /** Prefix each chunk with its document title when embedding (the stored text is unchanged). */
  readonly embedWithTitle: boolean;
  /** Inputs per embedding call. */
  readonly embedBatchSize: number;
  /**
   * Embed a longer chunk as sentence-aligned windows of this many tokens and store the
   * normalised mean. Null embeds each chunk whole.
   */
  readonly embedWindowTokens: number | null;
}

/** Where the time went (the ingestion benchmark's stage timings share these fields). */
export interface EmbeddingTimings {
  chunkMs: number;
  embedMs: number;
  embedCalls: number;
}

/** Called after each embedding batch with the share of the inputs done (0-1). */
export type OnEmbedded = (fraction: number) => Promise<void>;

/**
 * The text a chunk is embedded as: without the hashes that mark its headings (a model reads a
 * heading's words, not its markup), and with its document title first when so configured.
 */
export function chunkEmbeddingInput(
  settings: Pick<ChunkEmbeddingSettings, 'embedWithTitle'>,
  title: string | null | undefined,
  text: string,
): string {
  const words = withoutHeadingMarks(text);
  return settings.embedWithTitle && title ? `${title}\n${words}` : words;
}

/** One vector per input; with windows, the normalised mean of the windows' vectors. */
export async function embedChunkInputs(
  deps: { readonly embedder: Embedder; readonly tokens: TokenCounter },
  settings: ChunkEmbeddingSettings,
  texts: readonly string[],
  timings?: EmbeddingTimings,
  onEmbedded?: OnEmbedded,
): Promise<number[][]> {
  const { embedder, tokens } = deps;
  const elapsed = (start: number) => performance.now() - start;

  async function embedBatches(inputs: readonly string[]): Promise<number[][]> {
    const vectors: number[][] = [];
    for (let i = 0; i < inputs.length; i += settings.embedBatchSize) {
      const t0 = performance.now();
      const batch = await embedder.embed(inputs.slice(i, i + settings.embedBatchSize));
      if (timings) {
        timings.embedMs += elapsed(t0);
        timings.embedCalls += 1;
      }
      vectors.push(...batch);
      if (vectors.length < inputs.length) await onEmbedded?.(vectors.length / inputs.length);
    }
    return vectors;
  }

  const window = settings.embedWindowTokens;
  if (!window) return embedBatches(texts);
  const t0 = performance.now();
  const windows = texts.map((t) => {
    const parts = chunkText(t, { targetTokens: window, overlapTokens: 0 }, tokens).map(
      (c) => c.text,
    );
    return parts.length > 0 ? parts : [t];
  });
  if (timings) timings.chunkMs += elapsed(t0);
  const flat = await embedBatches(windows.flat());
  let k = 0;
  return windows.map((w) => {
    const sum = new Array<number>(embedder.dimension).fill(0);
    for (let i = 0; i < w.length; i++) {
      const v = flat[k++] ?? [];
      for (let d = 0; d < sum.length; d++) sum[d]! += v[d] ?? 0;
    }
    const norm = Math.hypot(...sum) || 1;
    return sum.map((x) => x / norm);
  });
}
