/**
 * Ports: the interfaces the core needs from the outside world. Adapters in
 * `lambdas/adapters/` implement them; handlers and `local/` wire them together.
 */

/**
 * What a text is embedded for. Asymmetric models embed the two differently (Cohere's
 * `input_type`, the query and passage prefixes of e5 or nomic models); the others ignore it
 * (docs/decisions/0117-query-document-and-rerank.md).
 */
export type EmbeddingPurpose = 'document' | 'query';

/** Turns text into unit-length vectors. */
export interface Embedder {
  /** A stable id recorded with every chunk, e.g. `local/use-lite-512` or `amazon.titan-embed-text-v2:0/512`. */
  readonly modelId: string;
  readonly dimension: number;
  /**
   * Embeds a batch; the result has one normalised vector per input, in order. `purpose`
   * defaults to `document` (ingestion); searches pass `query`.
   */
  embed(texts: readonly string[], purpose?: EmbeddingPurpose): Promise<number[][]>;
  /** Releases worker threads or sockets. */
  close?(): Promise<void>;
  /**
   * The model to use for a whole piece of work, for an embedder that follows the index's
   * recorded model during a model switch (core/embedding/live-embedder.ts).
   */
  current?(): Promise<Embedder>;
}

/** Counts tokens with a real tokenizer (used for chunk sizing and context budgets). */
export interface TokenCounter {
  count(text: string): number;
}

/** Minimal structured logger (Powertools Logger satisfies it). */
export interface Log {
  debug(message: string, ...extra: unknown[]): void;
  info(message: string, ...extra: unknown[]): void;
  warn(message: string, ...extra: unknown[]): void;
  error(message: string, ...extra: unknown[]): void;
}

/** Counts things for dashboards (Powertools Metrics satisfies it through a thin adapter). */
export interface MetricsSink {
  count(name: string, value?: number): void;
  timing(name: string, milliseconds: number): void;
}

export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

export const silentLog: Log = { debug() {}, info() {}, warn() {}, error() {} };

export const noMetrics: MetricsSink = { count() {}, timing() {} };

/**
 * Runs `work` as work of one tenant, over all of its users (ingestion): the database walls its
 * statements to that tenant (row-level security, lambdas/adapters/postgres/db-scope.ts).
 */
export type TenantScope = <T>(tenantId: string, work: () => Promise<T>) => Promise<T>;

/** No wall: for stores without one (fakes in unit tests). */
export const unscoped: TenantScope = (_tenantId, work) => work();
