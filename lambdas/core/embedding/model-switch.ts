/**
 * The background job of a model switch: re-embeds every chunk with the target model into the
 * second column beside the live one, in bounded batches with a pause between them (so search
 * latency holds), then completes the switch in one step. All of its state is in the database:
 * any number of workers may run it, a crashed one leaves at most its uncommitted batch, and a
 * restart continues where it stopped (docs/decisions/0148-switching-embedding-models.md).
 */
import { ConfigError } from '../errors';
import type { Embedder, Log, MetricsSink, TokenCounter } from '../ports';
import { noMetrics, silentLog } from '../ports';
import {
  chunkEmbeddingInput,
  embedChunkInputs,
  type ChunkEmbeddingSettings,
} from '../ingestion/chunk-embedding';
import type { ModelRegistry, RecordedModels } from './models';

/** A chunk to re-embed, with what its vector is made from. */
interface PendingChunk {
  readonly id: string;
  readonly text: string;
  readonly title: string | null;
}

/** The switch's state in the database. */
export interface ModelSwitchStore extends ModelRegistry {
  /**
   * In one transaction: claims up to `max` chunks that lack a next vector (never one another
   * worker holds), passes them to `embed`, writes the vectors it returns. Returns how many.
   */
  embedPending(
    max: number,
    embed: (chunks: readonly PendingChunk[]) => Promise<number[][]>,
  ): Promise<number>;
  /** Chunks with a next vector, and all chunks. */
  progress(): Promise<{ readonly done: number; readonly total: number }>;
  /**
   * Swaps the columns when no chunk lacks a next vector: `pending` when some do (nothing
   * changed), `none` when no switch is in progress.
   */
  finish(): Promise<'done' | 'pending' | 'none'>;
}

/** How hard the job pushes. */
export interface ModelSwitchSettings {
  /** Chunks per batch (one transaction, embedding calls of `embedBatchSize`). @default 64 */
  readonly batchChunks: number;
  /** Shortest pause between batches, in milliseconds. @default 200 */
  readonly pauseMs: number;
  /**
   * The pause is at least this many times the batch's own duration, so the job takes at most
   * 1 / (1 + restRatio) of the time (the local model shares its threads with queries). @default 1
   */
  readonly restRatio: number;
}

const DEFAULT_MODEL_SWITCH_SETTINGS: ModelSwitchSettings = {
  batchChunks: 64,
  pauseMs: 200,
  restRatio: 1,
};

export interface ModelSwitchStatus extends RecordedModels {
  /** Chunks re-embedded so far, and all chunks (both 0 without a switch). */
  readonly chunksDone: number;
  readonly chunksTotal: number;
}

export interface ModelSwitchDeps {
  readonly store: ModelSwitchStore;
  /** The process's configured model; it works only when it is the switch's target. */
  readonly target: Embedder;
  readonly tokens: TokenCounter;
  /** Ingestion's settings that shape a chunk's vector. */
  readonly embedding: ChunkEmbeddingSettings;
  readonly settings?: Partial<ModelSwitchSettings>;
  /** Called after this worker completed the switch (the process re-reads its live model). */
  readonly onSwitched?: () => Promise<unknown>;
  readonly sleep?: (ms: number) => Promise<void>;
  /** Milliseconds on a monotonic clock, to time each batch. @default performance.now */
  readonly now?: () => number;
  readonly log?: Log;
  readonly metrics?: MetricsSink;
}

export type RunOutcome = 'switched' | 'no-switch' | 'stopped';

export interface ModelSwitch {
  /** The recorded models and the re-embedding's progress. */
  status(): Promise<ModelSwitchStatus>;
  /** Re-embeds one batch of at most `maxChunks`; returns how many chunks it embedded. */
  step(options?: { readonly maxChunks?: number }): Promise<number>;
  /** Completes the switch if every chunk has its next vector. */
  finish(): Promise<'done' | 'pending' | 'none'>;
  /**
   * Steps with a pause between batches until the switch completes (`switched`), there is none
   * for this model (`no-switch`), or `shouldStop` says so before a batch (`stopped`).
   */
  run(options?: { readonly shouldStop?: () => boolean }): Promise<RunOutcome>;
}

export function createModelSwitch(deps: ModelSwitchDeps): ModelSwitch {
  const settings = { ...DEFAULT_MODEL_SWITCH_SETTINGS, ...deps.settings };
  const log = deps.log ?? silentLog;
  const metrics = deps.metrics ?? noMetrics;
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const now = deps.now ?? (() => performance.now());
  const { store, target } = deps;

  /** True when a switch to this process's model is in progress. */
  async function ours(): Promise<boolean> {
    const { target: recorded } = await store.models();
    if (!recorded) return false;
    if (recorded.modelId !== target.modelId || recorded.dimension !== target.dimension) {
      log.warn('a switch to another embedding model is in progress; this process leaves it', {
        switchingTo: recorded.modelId,
        configured: target.modelId,
      });
      return false;
    }
    return true;
  }

  async function step(options: { readonly maxChunks?: number } = {}): Promise<number> {
    if (!(await ours())) return 0;
    const n = await store.embedPending(
      options.maxChunks ?? settings.batchChunks,
      async (chunks) => {
        const vectors = await embedChunkInputs(
          { embedder: target, tokens: deps.tokens },
          deps.embedding,
          chunks.map((c) => chunkEmbeddingInput(deps.embedding, c.title, c.text)),
        );
        if (vectors.some((v) => v.length !== target.dimension))
          throw new ConfigError(
            `${target.modelId} returned vectors of another size than its ${target.dimension} dimensions`,
          );
        return vectors;
      },
    );
    if (n > 0) metrics.count('ChunksReembedded', n);
    return n;
  }

  async function finish(): Promise<'done' | 'pending' | 'none'> {
    const outcome = await store.finish();
    if (outcome === 'done') {
      log.info('embedding model switched', { model: target.modelId });
      metrics.count('EmbeddingModelSwitched');
      await deps.onSwitched?.();
    }
    return outcome;
  }

  return {
    async status() {
      const models = await store.models();
      // Without a switch there is no second column to count.
      const { done, total } = models.target ? await store.progress() : { done: 0, total: 0 };
      return { ...models, chunksDone: done, chunksTotal: total };
    },
    step,
    finish,
    async run(options = {}) {
      for (;;) {
        if (options.shouldStop?.()) return 'stopped';
        if (!(await ours())) return 'no-switch';
        const started = now();
        const n = await step();
        if (n === 0) {
          const outcome = await finish();
          if (outcome === 'done') return 'switched';
          if (outcome === 'none') return 'no-switch';
        }
        const took = now() - started;
        await sleep(Math.max(settings.pauseMs, settings.restRatio * took));
      }
    },
  };
}
