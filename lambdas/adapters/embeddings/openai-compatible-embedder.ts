/**
 * Embedder on any OpenAI-compatible `POST {baseUrl}/embeddings` endpoint: OpenAI itself, Ollama,
 * vLLM, LM Studio, llama.cpp's server, Text Embeddings Inference. Batches are cut to the
 * configured size and sent with bounded parallelism; each attempt has its own timeout, and
 * 408/429/5xx replies, network failures and timeouts are retried with jittered exponential
 * backoff (or the server's short `Retry-After`).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import * as z from '../../core/zod';
import { AppError, ConfigError, UnavailableError, ValidationError } from '../../core/errors';
import type { Embedder, EmbeddingPurpose } from '../../core/ports';
import { describeError } from '../llm/deadline';
import { bearerHeader, type BearerKey } from '../secrets/bearer-key';
import { chunked, mapWithConcurrency, normalised } from './concurrency';

/** Options of {@link createOpenAiCompatibleEmbedder}. */
export interface OpenAiCompatibleEmbedderOptions {
  /** Base URL up to and including the API version, e.g. `http://127.0.0.1:11434/v1`. */
  readonly baseUrl: string;
  /** The server's model name, e.g. `nomic-embed-text` or `text-embedding-3-small`. */
  readonly model: string;
  /** The vector size the model returns (or is asked for with `sendDimensions`). */
  readonly dimension: number;
  /**
   * Send `dimensions` in each request, for servers and models that can shorten their vectors
   * (OpenAI's text-embedding-3 family); most local servers refuse or ignore it.
   * @default false
   */
  readonly sendDimensions?: boolean;
  /** Sent as `Authorization: Bearer <apiKey>` when set; a function reads it on first use. */
  readonly apiKey?: BearerKey;
  /**
   * Most texts per request (OpenAI accepts 2048; Text Embeddings Inference 32 by default).
   * @default 32
   */
  readonly batchSize?: number;
  /**
   * Most requests in flight per `embed()` call.
   * @default 2
   */
  readonly concurrency?: number;
  /**
   * Timeout of one HTTP attempt, in milliseconds.
   * @default 30000
   */
  readonly timeoutMs?: number;
  /**
   * Retries after the first attempt, for 408/429/5xx, network failures and timeouts.
   * @default 3
   */
  readonly maxRetries?: number;
  /**
   * First backoff delay; it doubles per retry, with jitter.
   * @default 500
   */
  readonly retryDelayMs?: number;
  /** Prepended to queries, for models trained with one (e.g. `search_query: ` for nomic). */
  readonly queryPrefix?: string;
  /** Prepended to documents (e.g. `search_document: ` for nomic, `passage: ` for e5). */
  readonly documentPrefix?: string;
}

/** The reply of `POST /embeddings`; other fields (`object`, `model`, `usage`) are not needed. */
const embeddingsResponseSchema = z.object({
  data: z.array(
    z.object({
      index: z.int().check(z.nonnegative()),
      embedding: z.array(z.number()),
    }),
  ),
});

/** Longest `Retry-After` honoured; longer ones fall back to the adapter's own backoff. */
const MAX_RETRY_AFTER_MS = 10_000;

/**
 * Creates an Embedder on an OpenAI-compatible embeddings endpoint; `modelId` is reported as
 * `openai/${model}/${dimension}` so vectors of different models or sizes are never mixed.
 *
 * Errors: a retryable UnavailableError when the server stays unreachable, throttled, failing or
 * slow past the retries, or answers with something that is not an embeddings list; a
 * ValidationError when it refuses the input (400, 413, 422) or a text is empty; a ConfigError
 * when the key, URL or model is wrong (401, 403, 404, other 4xx) or the vectors are not of the
 * configured dimension.
 *
 * @throws ConfigError for invalid options.
 */
export function createOpenAiCompatibleEmbedder(options: OpenAiCompatibleEmbedderOptions): Embedder {
  const { model, apiKey, dimension } = options;
  const batchSize = options.batchSize ?? 32;
  const concurrency = options.concurrency ?? 2;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const maxRetries = options.maxRetries ?? 3;
  const retryDelayMs = options.retryDelayMs ?? 500;
  const url = embeddingsUrl(options.baseUrl);
  for (const [name, value, min] of [
    ['dimension', dimension, 1],
    ['batchSize', batchSize, 1],
    ['concurrency', concurrency, 1],
    ['maxRetries', maxRetries, 0],
  ] as const) {
    if (!Number.isInteger(value) || value < min) {
      throw new ConfigError(
        `OpenAI-compatible embedder ${name} must be a whole number >= ${min}, got ${value}`,
      );
    }
  }
  if (!(timeoutMs > 0) || !(retryDelayMs >= 0)) {
    throw new ConfigError(
      `OpenAI-compatible embedder timeoutMs must be > 0 and retryDelayMs >= 0, got ${timeoutMs} and ${retryDelayMs}`,
    );
  }
  if (model.trim() === '') throw new ConfigError('OpenAI-compatible embedder model is empty');
  const label = `${model} at ${url}`;
  const authorization = bearerHeader(apiKey);

  /** One attempt: the parsed vectors, or an AppError saying whether to retry. */
  async function attempt(body: string, count: number): Promise<number[][]> {
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json',
      ...(await authorization()),
    };
    let response: Response;
    let raw: string;
    try {
      response = await fetch(url, {
        method: 'POST',
        headers,
        body,
        signal: AbortSignal.timeout(timeoutMs),
      });
      raw = await response.text();
    } catch (err) {
      throw new RetryableFailure(describeFetchFailure(err, label, timeoutMs), err);
    }
    if (!response.ok) throw httpFailure(response, raw, label);
    return parseVectors(raw, count, dimension, label);
  }

  async function embedBatch(texts: readonly string[]): Promise<number[][]> {
    const body = JSON.stringify({
      model,
      input: texts,
      ...(options.sendDimensions ? { dimensions: dimension } : {}),
    });
    for (let tries = 1; ; tries++) {
      try {
        return await attempt(body, texts.length);
      } catch (err) {
        if (!(err instanceof RetryableFailure)) throw err;
        if (tries > maxRetries) {
          throw new UnavailableError(
            `${err.message}${tries > 1 ? ` (gave up after ${tries} attempts)` : ''}`,
            err.cause,
          );
        }
        const backoff = retryDelayMs * 2 ** (tries - 1) * (0.5 + Math.random() / 2);
        await sleep(err.retryAfterMs ?? backoff);
      }
    }
  }

  return {
    modelId: `openai/${model}/${dimension}`,
    dimension,
    async embed(texts, purpose: EmbeddingPurpose = 'document') {
      const empty = texts.findIndex((text) => text.trim() === '');
      if (empty >= 0) {
        throw new ValidationError(
          `Cannot embed an empty text (batch index ${empty}) with ${model}`,
        );
      }
      const prefix = (purpose === 'query' ? options.queryPrefix : options.documentPrefix) ?? '';
      const inputs = texts.map((text) => prefix + text);
      const batches = await mapWithConcurrency(chunked(inputs, batchSize), concurrency, embedBatch);
      return batches.flat();
    },
  };
}

/** A failed attempt worth retrying (408, 429, 5xx, network failure, timeout). */
class RetryableFailure extends Error {
  constructor(
    message: string,
    override readonly cause?: unknown,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

function embeddingsUrl(baseUrl: string): string {
  let parsed: URL;
  try {
    parsed = new URL(baseUrl);
  } catch {
    throw new ConfigError(`Embeddings baseUrl is not a URL: ${JSON.stringify(baseUrl)}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new ConfigError(`Embeddings baseUrl must be http or https, got ${parsed.protocol}`);
  }
  return `${baseUrl.replace(/\/+$/, '')}/embeddings`;
}

/** Maps a non-2xx reply onto a retryable failure or the error model. */
function httpFailure(response: Response, raw: string, label: string): Error {
  const { status } = response;
  const message = `Embeddings server ${label} answered HTTP ${status}: ${errorDetail(raw, response.statusText)}`;
  if (status === 408 || status === 429 || status >= 500) {
    return new RetryableFailure(
      message,
      undefined,
      parseRetryAfter(response.headers.get('retry-after')),
    );
  }
  if (status === 400 || status === 413 || status === 422) return new ValidationError(message);
  return new ConfigError(
    status === 401 || status === 403
      ? `${message} (check the API key)`
      : status === 404
        ? `${message} (check the base URL and the model name)`
        : message,
  );
}

/** The vectors of a 2xx reply, in input order, normalised; anything else is an AppError. */
function parseVectors(raw: string, count: number, dimension: number, label: string): number[][] {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (err) {
    throw new UnavailableError(`Embeddings server ${label} returned a reply that is not JSON`, err);
  }
  const parsed = embeddingsResponseSchema.safeParse(json);
  if (!parsed.success) {
    throw new UnavailableError(
      `Embeddings server ${label} returned a malformed reply: ${z.prettifyError(parsed.error)}`,
    );
  }
  // The spec gives each vector its input's index; servers may list them in any order.
  const vectors = new Array<number[] | undefined>(count);
  for (const item of parsed.data.data) {
    if (item.index >= count || vectors[item.index] !== undefined) {
      throw new UnavailableError(
        `Embeddings server ${label} returned index ${item.index} for a batch of ${count} (missing, repeated or out of range)`,
      );
    }
    if (item.embedding.length !== dimension) {
      throw new ConfigError(
        `Embeddings server ${label} returned vectors of dimension ${item.embedding.length}, but the configured dimension is ${dimension}`,
      );
    }
    const unit = normalised(item.embedding);
    if (!unit) throw new UnavailableError(`Embeddings server ${label} returned a zero vector`);
    vectors[item.index] = unit;
  }
  const missing = vectors.findIndex((vector) => vector === undefined);
  if (missing >= 0 || parsed.data.data.length !== count) {
    throw new UnavailableError(
      `Embeddings server ${label} returned ${parsed.data.data.length} vectors for ${count} inputs`,
    );
  }
  return vectors as number[][];
}

/** OpenAI-style `error.message` (or `error` string, as Ollama sends), else the start of the body. */
function errorDetail(raw: string, statusText: string): string {
  try {
    const body = JSON.parse(raw) as { error?: unknown; message?: unknown };
    const { error } = body;
    if (typeof error === 'string') return error.slice(0, 300);
    if (typeof error === 'object' && error !== null && 'message' in error) {
      return String(error.message).slice(0, 300);
    }
    if (typeof body.message === 'string') return body.message.slice(0, 300);
  } catch {
    // Not JSON: the raw text is the detail.
  }
  return raw.slice(0, 300) || statusText;
}

function parseRetryAfter(value: string | null): number | undefined {
  if (value === null || !/^\d+(\.\d+)?$/.test(value.trim())) return undefined;
  const ms = Number(value) * 1000;
  return ms <= MAX_RETRY_AFTER_MS ? ms : undefined;
}

/** A network failure or timeout, described (fetch hides the real failure in `cause`). */
function describeFetchFailure(err: unknown, label: string, timeoutMs: number): string {
  if (err instanceof AppError) return err.message;
  const outer = describeError(err);
  if (outer.name === 'TimeoutError') {
    return `Embeddings server ${label} did not answer within ${timeoutMs} ms`;
  }
  const inner = outer.cause !== undefined ? describeError(outer.cause) : undefined;
  const detail = inner
    ? `${outer.message} (${inner.name}: ${inner.message})`
    : `${outer.name}: ${outer.message}`;
  return `Embeddings call to ${label} failed: ${detail}`;
}
