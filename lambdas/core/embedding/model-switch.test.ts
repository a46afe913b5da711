/**
 * The model switch's job on an in-memory store and a manual clock: how long it rests between
 * batches (the throttle that keeps search latency), when it finishes, and when it leaves a switch
 * alone. The job against PostgreSQL and PGlite is test/integration/model-switch.test.ts.
 */
import type { Embedder, TokenCounter } from '../ports';
import type { ModelRecord, RecordedModels } from './models';
import { createModelSwitch, type ModelSwitchSettings, type ModelSwitchStore } from './model-switch';

const tokens: TokenCounter = { count: (text) => text.split(/\s+/).length };
const embedding = { embedWithTitle: true, embedBatchSize: 16, embedWindowTokens: null };

function embedder(modelId: string, dimension: number): Embedder {
  return {
    modelId,
    dimension,
    async embed(texts) {
      return texts.map(() => new Array<number>(dimension).fill(1 / Math.sqrt(dimension)));
    },
  };
}

const live: ModelRecord = { modelId: 'old', dimension: 4, settings: null };
const target = { modelId: 'new', dimension: 3, settings: null, startedAt: new Date(0) };

/**
 * A store of `total` chunks that lack a next vector; each claimed batch advances the manual clock
 * by `batchMs(batchNumber)`, as a batch that took that long would.
 */
function fixture(options: {
  total: number;
  batchMs: (batch: number) => number;
  models?: RecordedModels;
  settings?: Partial<ModelSwitchSettings>;
  model?: Embedder;
}) {
  let clock = 0;
  let pending = options.total;
  let batches = 0;
  const writes: number[][][] = [];
  const sleeps: number[] = [];
  const events: string[] = [];
  let models: RecordedModels = options.models ?? { live, target };
  const store: ModelSwitchStore = {
    async models() {
      return models;
    },
    async embedPending(max, embed) {
      const n = Math.min(max, pending);
      if (n === 0) return 0;
      const vectors = await embed(
        Array.from({ length: n }, (_, i) => ({ id: `c${i}`, text: `chunk ${i}`, title: 'Doc' })),
      );
      writes.push(vectors);
      pending -= n;
      clock += options.batchMs(batches);
      batches += 1;
      events.push(`batch ${n}`);
      return n;
    },
    async progress() {
      return { done: options.total - pending, total: options.total };
    },
    async finish() {
      if (!models.target) return 'none';
      if (pending > 0) return 'pending';
      events.push('swap');
      models = { live: models.target, target: null };
      return 'done';
    },
  };
  const job = createModelSwitch({
    store,
    target: options.model ?? embedder('new', 3),
    tokens,
    embedding,
    settings: options.settings,
    now: () => clock,
    sleep: async (ms) => {
      sleeps.push(ms);
      clock += ms;
    },
    onSwitched: async () => events.push('switched'),
  });
  return { job, sleeps, events, writes, elapsed: () => clock };
}

describe('model switch job', () => {
  it('rests at least as long as each batch took (restRatio 1), never less than pauseMs', async () => {
    const took = [50, 300, 1200, 10];
    const f = fixture({
      total: 4 * 64,
      batchMs: (b) => took[b] ?? 0,
      settings: { batchChunks: 64, pauseMs: 200, restRatio: 1 },
    });
    await expect(f.job.run()).resolves.toBe('switched');
    // Four batches, then an empty claim that finishes (no rest after the swap).
    expect(f.sleeps).toEqual([200, 300, 1200, 200]);
    expect(f.events).toEqual(['batch 64', 'batch 64', 'batch 64', 'batch 64', 'swap', 'switched']);
    // The job took at most half of the time it ran: it rested at least as long as it worked.
    const worked = took.reduce((a, b) => a + b, 0);
    expect(worked / f.elapsed()).toBeLessThanOrEqual(0.5);
  });

  it('scales the rest with restRatio, and runs flat out with no pause and no ratio', async () => {
    const slow = fixture({
      total: 2 * 10,
      batchMs: () => 100,
      settings: { batchChunks: 10, pauseMs: 0, restRatio: 3 },
    });
    await slow.job.run();
    expect(slow.sleeps).toEqual([300, 300]);

    const flatOut = fixture({
      total: 3 * 10,
      batchMs: () => 100,
      settings: { batchChunks: 10, pauseMs: 0, restRatio: 0 },
    });
    await flatOut.job.run();
    expect(flatOut.sleeps).toEqual([0, 0, 0]);
  });

  it('stops before a batch when asked, and a later run continues to the swap', async () => {
    const f = fixture({ total: 5 * 8, batchMs: () => 10, settings: { batchChunks: 8 } });
    let batches = 0;
    await expect(f.job.run({ shouldStop: () => batches++ >= 2 })).resolves.toBe('stopped');
    expect(f.events).toEqual(['batch 8', 'batch 8']);
    await expect(f.job.status()).resolves.toMatchObject({ chunksDone: 16, chunksTotal: 40 });
    await expect(f.job.run()).resolves.toBe('switched');
    expect(f.events.filter((e) => e.startsWith('batch'))).toHaveLength(5);
    expect(f.events.slice(-2)).toEqual(['swap', 'switched']);
  });

  it('leaves a switch to another model alone, and does nothing without a switch', async () => {
    const other = fixture({ total: 10, batchMs: () => 1, model: embedder('third', 3) });
    await expect(other.job.run()).resolves.toBe('no-switch');
    await expect(other.job.step()).resolves.toBe(0);
    expect(other.events).toEqual([]);

    const none = fixture({ total: 10, batchMs: () => 1, models: { live, target: null } });
    await expect(none.job.run()).resolves.toBe('no-switch');
    await expect(none.job.status()).resolves.toMatchObject({ chunksDone: 0, chunksTotal: 0 });
  });

  it('refuses vectors of another size than the target model declares, writing nothing', async () => {
    const five = embedder('new', 5);
    const liar: Embedder = { ...embedder('new', 3), embed: (texts) => five.embed(texts) };
    const f = fixture({ total: 10, batchMs: () => 1, model: liar });
    await expect(f.job.step()).rejects.toThrow(/returned vectors of another size/);
    expect(f.writes).toEqual([]);
  });
});
