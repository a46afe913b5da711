/**
 * Types for local-embed-worker.cjs, the plain CommonJS runtime of the local embedding model
 * (it stays JavaScript so that a worker thread can start it without a TS transform).
 */

/** Value of `workerData.role` that makes the script run as an embedding worker. */
export declare const WORKER_ROLE: string;

/** The part of the SentencePiece tokenizer that clipping needs. */
export interface TokenEncoder {
  encode(text: string): number[];
}

/** The loaded model: raw vectors (close to, but not guaranteed, unit length), in input order. */
export interface LocalModel {
  embed(texts: readonly string[]): Promise<number[][]>;
}

/** Loads Universal Sentence Encoder Lite from the bundled files (no network). */
export declare function loadLocalModel(): Promise<LocalModel>;

/**
 * A space-delimited prefix of `text` whose tokenisation reaches `maxTokens` tokens (or
 * `text` itself): the model's output is unchanged, the work on long texts is bounded.
 */
export declare function clipToModelWindow(
  text: string,
  tokenizer: TokenEncoder,
  maxTokens?: number,
): string;

/** Messages the pool sends to a worker. */
export type ToWorkerMessage = { type: 'embed'; id: number; texts: string[] };

/** Messages a worker sends back. */
export type FromWorkerMessage =
  | { type: 'ready' }
  | { type: 'init-failure'; message: string }
  | { type: 'result'; id: number; vectors: number[][] }
  | { type: 'failure'; id: number; message: string };
