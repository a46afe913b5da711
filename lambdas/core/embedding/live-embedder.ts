/**
 * An Embedder that follows the index's live model. During a model switch the process is
 * configured with the target model, but queries (and ingestion's `embedding` column) must use
 * the model whose vectors search reads until the switch completes; then the target. It reads
 * the recorded model on every call while a switch is in progress (one primary-key read, so the
 * swap is seen at once), and at most every `ttlMs` otherwise (a switch that starts changes
 * nothing for queries).
 */
import type { Clock, Embedder, EmbeddingPurpose } from '../ports';
import { systemClock } from '../ports';
import type { ModelRecord, ModelRegistry } from './models';

export interface LiveEmbedderDeps {
  readonly registry: ModelRegistry;
  /** The process's configured model (the target of a switch, or the live model). */
  readonly configured: Embedder;
  /** Builds the embedder of a recorded model other than the configured one. */
  readonly build: (record: ModelRecord) => Promise<Embedder>;
  /** How long a read stands when no switch is in progress. @default 5000 */
  readonly ttlMs?: number;
  readonly clock?: Clock;
}

export interface LiveEmbedder extends Embedder {
  /** Re-reads the recorded model now (after this process completed a switch). */
  refresh(): Promise<Embedder>;
}

/**
 * Creates the embedder. It reads the recorded model on its first call (no I/O here, so a Lambda's
 * init makes no network call); until then `modelId` and `dimension` are the configured model's.
 */
export function createLiveEmbedder(deps: LiveEmbedderDeps): LiveEmbedder {
  const ttlMs = deps.ttlMs ?? 5000;
  const clock = deps.clock ?? systemClock;
  const built = new Map<string, Promise<Embedder>>();
  let active: Embedder = deps.configured;
  let switching = false;
  let readAt = -Infinity;

  async function embedderOf(live: ModelRecord | null): Promise<Embedder> {
    if (!live || live.modelId === deps.configured.modelId) return deps.configured;
    let made = built.get(live.modelId);
    if (!made) {
      made = deps.build(live);
      built.set(live.modelId, made);
      made.catch(() => built.delete(live.modelId));
    }
    return made;
  }

  async function refresh(): Promise<Embedder> {
    const { live, target } = await deps.registry.models();
    active = await embedderOf(live);
    switching = target !== null;
    readAt = clock.now().getTime();
    return active;
  }

  async function current(): Promise<Embedder> {
    if (switching || clock.now().getTime() - readAt >= ttlMs) return refresh();
    return active;
  }

  return {
    get modelId() {
      return active.modelId;
    },
    get dimension() {
      return active.dimension;
    },
    async embed(texts: readonly string[], purpose?: EmbeddingPurpose) {
      return (await current()).embed(texts, purpose);
    },
    current,
    refresh,
    async close() {
      const others = await Promise.all([...built.values()].map((p) => p.catch(() => undefined)));
      const all = new Set([deps.configured, ...others]);
      for (const e of all) await e?.close?.();
    },
  };
}
