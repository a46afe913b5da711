/**
 * The worker pool's scheduling and failure handling, with tiny inline workers that speak the
 * embedding protocol (no model involved).
 */
import { Worker } from 'node:worker_threads';
import { UnavailableError } from '../../core/errors';
import { WorkerPool } from './worker-pool';

/** Answers each text with [text length, threadId]; 'crash' exits, 'fail' reports a failure. */
const FAKE_WORKER = `
const { parentPort, threadId, workerData } = require('node:worker_threads');
if (workerData.failToLoad) {
  parentPort.postMessage({ type: 'init-failure', message: 'model files missing' });
  process.exit(1);
}
parentPort.on('message', (m) => {
  if (m.texts.includes('crash')) process.exit(3);
  if (m.texts.includes('fail')) {
    parentPort.postMessage({ type: 'failure', id: m.id, message: 'boom' });
    return;
  }
  setTimeout(() => {
    parentPort.postMessage({ type: 'result', id: m.id, vectors: m.texts.map((t) => [t.length, threadId]) });
  }, workerData.delayMs);
});
parentPort.postMessage({ type: 'ready' });
`;

function fakeWorker(options: { delayMs?: number; failToLoad?: boolean } = {}): () => Worker {
  return () =>
    new Worker(FAKE_WORKER, {
      eval: true,
      workerData: { delayMs: options.delayMs ?? 0, failToLoad: options.failToLoad ?? false },
    });
}

const pools: WorkerPool[] = [];
async function startPool(size: number, spawn: () => Worker): Promise<WorkerPool> {
  const pool = await WorkerPool.start({ size, spawn });
  pools.push(pool);
  return pool;
}

afterEach(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.close()));
});

describe('WorkerPool', () => {
  it('returns each job its own results, spread over the workers', async () => {
    const pool = await startPool(2, fakeWorker({ delayMs: 20 }));

    const results = await Promise.all([
      pool.run(['a', 'bb']),
      pool.run(['ccc']),
      pool.run(['dddd']),
    ]);

    expect(results.map((vectors) => vectors.map(([length]) => length))).toEqual([[1, 2], [3], [4]]);
    const threads = new Set(results.flat().map(([, threadId]) => threadId));
    expect(threads.size).toBe(2);
  });

  it('rejects the job of a crashed worker with an UnavailableError and replaces the worker', async () => {
    const pool = await startPool(2, fakeWorker());

    const error: unknown = await pool.run(['crash']).catch((err: unknown) => err);

    expect(error).toBeInstanceOf(UnavailableError);
    expect((error as Error).message).toMatch(/crashed \(exit code 3\)/);
    expect(pool.size).toBe(2);
    const later = await Promise.all([pool.run(['x']), pool.run(['yy'])]);
    expect(later.map((vectors) => vectors[0]?.[0])).toEqual([1, 2]);
  });

  it('rejects a job the worker reports as failed, and keeps the worker', async () => {
    const pool = await startPool(1, fakeWorker());

    await expect(pool.run(['fail'])).rejects.toThrow(/Local embedding failed: boom/);
    await expect(pool.run(['ok'])).resolves.toEqual([[2, expect.any(Number)]]);
  });

  it('fails to start with an UnavailableError carrying the worker message', async () => {
    const error: unknown = await WorkerPool.start({
      size: 2,
      spawn: fakeWorker({ failToLoad: true }),
    }).catch((err: unknown) => err);

    expect(error).toBeInstanceOf(UnavailableError);
    expect((error as Error).message).toMatch(/failed to load .*model files missing/);
  });

  it('rejects queued jobs and later calls once closed', async () => {
    const pool = await WorkerPool.start({ size: 1, spawn: fakeWorker({ delayMs: 200 }) });
    const running = pool.run(['a']).catch((err: unknown) => err);
    const queued = pool.run(['b']).catch((err: unknown) => err);

    await pool.close();

    expect(await running).toBeInstanceOf(UnavailableError);
    expect(await queued).toBeInstanceOf(UnavailableError);
    await expect(pool.run(['c'])).rejects.toThrow(/closed/);
  });
});
