/**
 * A small pool of embedding worker threads, one job at a time per worker, with a shared FIFO
 * queue. Speaks the protocol of local-embed-worker.cjs (`ready`, `embed`, `result`, `failure`).
 *
 * Workers are unref'd while idle, so an embedder that is never closed does not keep the process
 * alive, and ref'd while they hold a job, so a process awaiting an embedding does not exit under
 * it. A worker that dies rejects its job with an UnavailableError and is replaced.
 */
import type { Worker } from 'node:worker_threads';
import { UnavailableError } from '../../core/errors';
import type { FromWorkerMessage, ToWorkerMessage } from './local-embed-worker.cjs';

/** How the pool is built. */
export interface WorkerPoolOptions {
  /** Number of workers (at least 1). */
  readonly size: number;
  /** Starts one worker; it must post `{ type: 'ready' }` once it can take jobs. */
  readonly spawn: () => Worker;
}

interface Job {
  readonly id: number;
  readonly texts: string[];
  readonly resolve: (vectors: number[][]) => void;
  readonly reject: (err: Error) => void;
}

interface Slot {
  readonly worker: Worker;
  ready: boolean;
  job: Job | undefined;
  /** The last uncaught error the worker reported, for the crash message. */
  lastError: string | undefined;
}

/** A pool of embedding workers; create it with {@link WorkerPool.start}. */
export class WorkerPool {
  private readonly slots = new Set<Slot>();
  private readonly queue: Job[] = [];
  private nextId = 1;
  private closed = false;

  private constructor(private readonly options: WorkerPoolOptions) {}

  /**
   * Starts `size` workers and resolves once all are ready.
   * @throws UnavailableError if a worker fails to start (the others are terminated).
   */
  static async start(options: WorkerPoolOptions): Promise<WorkerPool> {
    if (!Number.isInteger(options.size) || options.size < 1) {
      throw new RangeError(`WorkerPool size must be a positive integer, got ${options.size}`);
    }
    const pool = new WorkerPool(options);
    const starting = Array.from({ length: options.size }, () => pool.spawnSlotWithRetry());
    try {
      await Promise.all(starting);
    } catch (err) {
      await pool.close();
      throw err;
    }
    return pool;
  }

  /** Number of live workers (ready or starting). */
  get size(): number {
    return this.slots.size;
  }

  /**
   * Embeds one sub-batch on the next free worker.
   * @throws UnavailableError if the worker fails or dies, or the pool is closed.
   */
  run(texts: readonly string[]): Promise<number[][]> {
    if (this.closed) {
      return Promise.reject(new UnavailableError('The local embedding model has been closed'));
    }
    const job = new Promise<number[][]>((resolve, reject) => {
      this.queue.push({ id: this.nextId++, texts: [...texts], resolve, reject });
    });
    this.heal();
    this.dispatch();
    return job;
  }

  /** Rejects queued and running jobs and terminates every worker. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const error = new UnavailableError('The local embedding model has been closed');
    for (const job of this.queue.splice(0)) job.reject(error);
    const slots = [...this.slots];
    this.slots.clear();
    for (const slot of slots) slot.job?.reject(error);
    await Promise.all(slots.map((slot) => slot.worker.terminate()));
  }

  /**
   * Starts a worker, trying a fresh one when loading fails: TF.js's WASM backend has been seen to
   * fail its initialisation now and then on a heavily loaded machine ("Backend 'wasm' has not yet
   * been initialized"), and a new thread loads cleanly.
   */
  private async spawnSlotWithRetry(attempts = 3): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.spawnSlot();
        return;
      } catch (err) {
        if (attempt >= attempts || this.closed) throw err;
      }
    }
  }

  /** Starts a worker; resolves when it is ready, rejects if it dies first. */
  private spawnSlot(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let worker: Worker;
      try {
        worker = this.options.spawn();
      } catch (err) {
        reject(new UnavailableError('Could not start a local embedding worker', err));
        return;
      }
      const slot: Slot = { worker, ready: false, job: undefined, lastError: undefined };
      this.slots.add(slot);

      worker.on('message', (message: FromWorkerMessage) => {
        switch (message.type) {
          case 'ready':
            slot.ready = true;
            worker.unref();
            resolve();
            this.dispatch();
            return;
          case 'init-failure':
            slot.lastError = message.message;
            return;
          case 'result':
          case 'failure': {
            const job = slot.job;
            if (!job || job.id !== message.id) return;
            slot.job = undefined;
            worker.unref();
            if (message.type === 'result') job.resolve(message.vectors);
            else job.reject(new UnavailableError(`Local embedding failed: ${message.message}`));
            this.dispatch();
            return;
          }
        }
      });
      worker.on('error', (err: Error) => {
        slot.lastError = err.message;
      });
      worker.on('exit', (code: number) => {
        if (!this.slots.delete(slot) || this.closed) return;
        const reason = `exit code ${code}${slot.lastError ? `: ${slot.lastError}` : ''}`;
        if (!slot.ready) {
          reject(new UnavailableError(`The local embedding model failed to load (${reason})`));
          this.failQueueIfNoWorkers(reason);
          return;
        }
        slot.job?.reject(new UnavailableError(`A local embedding worker crashed (${reason})`));
        // Replace it at once; a replacement that fails to load is retried on the next run().
        this.spawnSlotWithRetry().catch(() => this.failQueueIfNoWorkers(reason));
      });
    });
  }

  /** Tops the pool back up to `size` after replacements that failed to load. */
  private heal(): void {
    const missing = this.options.size - this.slots.size;
    for (let i = 0; i < missing; i++) {
      this.spawnSlotWithRetry().catch((err: unknown) =>
        this.failQueueIfNoWorkers(err instanceof Error ? err.message : String(err)),
      );
    }
  }

  private failQueueIfNoWorkers(reason: string): void {
    if (this.slots.size > 0) return;
    const error = new UnavailableError(`No local embedding worker is available (${reason})`);
    for (const job of this.queue.splice(0)) job.reject(error);
  }

  private dispatch(): void {
    for (const slot of this.slots) {
      if (this.queue.length === 0) return;
      if (!slot.ready || slot.job) continue;
      const job = this.queue.shift()!;
      slot.job = job;
      // Keep the process alive while a job runs (the worker is unref'd when idle).
      slot.worker.ref();
      const message: ToWorkerMessage = { type: 'embed', id: job.id, texts: job.texts };
      slot.worker.postMessage(message);
    }
  }
}
