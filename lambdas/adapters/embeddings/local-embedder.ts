/**
 * The embedded default Embedder: Universal Sentence Encoder Lite (512 dims) on TF.js WASM,
 * fully offline. TF.js runs single-threaded under Node, so batches are split into sub-batches
 * and spread over a small pool of worker threads, each holding its own copy of the model.
 */
import { Worker } from 'node:worker_threads';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, UnavailableError, ValidationError } from '../../core/errors';
import type { Embedder } from '../../core/ports';
import { loadLocalModel, WORKER_ROLE } from './local-embed-worker.cjs';
import { WorkerPool } from './worker-pool';

/** Model id recorded with every chunk embedded locally. */
export const LOCAL_MODEL_ID = 'local/use-lite-512';

/** Dimension of the local model's vectors. */
export const LOCAL_DIMENSION = 512;

/** Plain CommonJS worker script: runs the same under node, tsx and jest. */
const WORKER_SCRIPT = path.join(__dirname, 'local-embed-worker.cjs');

/** Texts per model call: larger batches are no faster on TF.js WASM and balance worse. */
const DEFAULT_BATCH_SIZE = 8;

/** Options of {@link createLocalEmbedder}. */
export interface LocalEmbedderOptions {
  /**
   * Worker threads, each loading the model once (about 0.2 s and 100 MB). `0` runs in-process
   * on the calling thread.
   * @default os.availableParallelism(), at least 1
   */
  threads?: number;
  /**
   * Most texts per model call; a batch is split into sub-batches of at most this many, fewer
   * when that is needed to give every worker a share.
   * @default 8
   */
  batchSize?: number;
}

/**
 * Loads the local model and returns an Embedder with `modelId` `local/use-lite-512`.
 * Vectors are re-normalised to unit length. Call `close()` to stop the workers (idle workers
 * do not keep the process alive either way).
 *
 * Empty or whitespace-only texts are refused with a ValidationError, as the Bedrock embedder
 * does (Titan rejects them), so that the embedded default behaves like the AWS deployment.
 * @throws ConfigError for invalid options; UnavailableError if the model cannot be loaded.
 */
export async function createLocalEmbedder(options: LocalEmbedderOptions = {}): Promise<Embedder> {
  const threads = options.threads ?? Math.max(1, os.availableParallelism());
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  if (!Number.isInteger(threads) || threads < 0) {
    throw new ConfigError(`Local embedder threads must be a whole number >= 0, got ${threads}`);
  }
  if (!Number.isInteger(batchSize) || batchSize < 1) {
    throw new ConfigError(`Local embedder batchSize must be a whole number >= 1, got ${batchSize}`);
  }
  return threads === 0 ? createInProcess(batchSize) : createPooled(threads, batchSize);
}

async function createInProcess(batchSize: number): Promise<Embedder> {
  let model: Awaited<ReturnType<typeof loadLocalModel>>;
  try {
    model = await loadLocalModel();
  } catch (err) {
    throw new UnavailableError('The local embedding model failed to load', err);
  }
  let closed = false;
  return {
    modelId: LOCAL_MODEL_ID,
    dimension: LOCAL_DIMENSION,
    async embed(texts) {
      if (closed) throw new UnavailableError('The local embedding model has been closed');
      refuseEmptyTexts(texts);
      const vectors: number[][] = [];
      for (const batch of split(texts, batchSize)) {
        let raw: number[][];
        try {
          raw = await model.embed(batch);
        } catch (err) {
          throw new UnavailableError('Local embedding failed', err);
        }
        vectors.push(...raw);
      }
      return checkAndNormalise(vectors, texts.length);
    },
    async close() {
      closed = true;
    },
  };
}

async function createPooled(threads: number, batchSize: number): Promise<Embedder> {
  const pool = await WorkerPool.start({
    size: threads,
    spawn: () => new Worker(WORKER_SCRIPT, { workerData: { role: WORKER_ROLE } }),
  });
  return {
    modelId: LOCAL_MODEL_ID,
    dimension: LOCAL_DIMENSION,
    async embed(texts) {
      if (texts.length === 0) return [];
      refuseEmptyTexts(texts);
      // Small batches are spread evenly so that every worker gets a share.
      const size = Math.min(batchSize, Math.ceil(texts.length / threads));
      const parts = await Promise.all(split(texts, size).map((part) => pool.run(part)));
      return checkAndNormalise(parts.flat(), texts.length);
    },
    close: () => pool.close(),
  };
}

function refuseEmptyTexts(texts: readonly string[]): void {
  const empty = texts.findIndex((text) => text.trim() === '');
  if (empty >= 0) {
    throw new ValidationError(
      `Cannot embed an empty text (batch index ${empty}) with ${LOCAL_MODEL_ID}`,
    );
  }
}

function split(texts: readonly string[], size: number): string[][] {
  const parts: string[][] = [];
  for (let i = 0; i < texts.length; i += size) parts.push(texts.slice(i, i + size));
  return parts;
}

/** Checks count, dimension and values, and scales every vector to unit length. */
function checkAndNormalise(vectors: number[][], expected: number): number[][] {
  if (vectors.length !== expected) {
    throw new UnavailableError(
      `The local embedding model returned ${vectors.length} vectors for ${expected} texts`,
    );
  }
  return vectors.map((vector) => {
    if (vector.length !== LOCAL_DIMENSION) {
      throw new UnavailableError(
        `The local embedding model returned a vector of dimension ${vector.length}, expected ${LOCAL_DIMENSION}`,
      );
    }
    let sumOfSquares = 0;
    for (const x of vector) sumOfSquares += x * x;
    const norm = Math.sqrt(sumOfSquares);
    if (!Number.isFinite(norm) || norm === 0) {
      throw new UnavailableError('The local embedding model returned a zero or non-finite vector');
    }
    return vector.map((x) => x / norm);
  });
}
