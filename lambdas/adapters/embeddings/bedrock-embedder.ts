/**
 * Embedder on Amazon Bedrock, Titan Text Embeddings v2. Titan embeds one text per
 * InvokeModel call, so a batch runs as parallel calls under a concurrency bound; throttling is
 * retried by the client's retry strategy (see bedrock-runtime-client.ts) before it surfaces
 * here as a retryable UnavailableError.
 */
import { InvokeModelCommand, type BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import * as z from '../../core/zod';
import { AppError, ConfigError, UnavailableError, ValidationError } from '../../core/errors';
import type { Embedder } from '../../core/ports';

/** Titan Text Embeddings v2, the default model. */
export const TITAN_EMBED_TEXT_V2 = 'amazon.titan-embed-text-v2:0';

/** Output sizes Titan Text Embeddings v2 supports. */
export type TitanDimension = 256 | 512 | 1024;

const TITAN_DIMENSIONS: readonly number[] = [256, 512, 1024];

/** Options of {@link createBedrockEmbedder}. */
export interface BedrockEmbedderOptions {
  /** Shared client, from `createBedrockRuntimeClient` (it carries the retry policy). */
  readonly client: BedrockRuntimeClient;
  /**
   * Bedrock model id (or inference profile id).
   * @default 'amazon.titan-embed-text-v2:0'
   */
  readonly modelId?: string;
  /**
   * Vector size requested from Titan.
   * @default 512
   */
  readonly dimension?: TitanDimension;
  /**
   * Most InvokeModel calls in flight per `embed()` call.
   * @default 4
   */
  readonly concurrency?: number;
}

/** The body Titan Text Embeddings v2 returns; other fields (`embeddingsByType`) are ignored. */
export const titanEmbeddingResponseSchema = z.object({
  embedding: z.array(z.number()),
  inputTextTokenCount: z.optional(z.int().check(z.nonnegative())),
});
export type TitanEmbeddingResponse = z.infer<typeof titanEmbeddingResponseSchema>;

/**
 * Creates an Embedder backed by Titan Text Embeddings v2; `modelId` is reported as
 * `${modelId}/${dimension}` so vectors of different sizes are never mixed.
 *
 * Empty or whitespace-only texts are refused with a ValidationError before any call: Titan
 * rejects empty input, and substituting a placeholder would store a meaningless vector.
 *
 * @throws ConfigError for invalid options.
 */
export function createBedrockEmbedder(options: BedrockEmbedderOptions): Embedder {
  const { client } = options;
  const modelId = options.modelId ?? TITAN_EMBED_TEXT_V2;
  const dimension = options.dimension ?? 512;
  const concurrency = options.concurrency ?? 4;
  if (!TITAN_DIMENSIONS.includes(dimension)) {
    throw new ConfigError(`Titan embedding dimension must be 256, 512 or 1024, got ${dimension}`);
  }
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new ConfigError(
      `Bedrock embedding concurrency must be a whole number >= 1, got ${concurrency}`,
    );
  }

  async function embedOne(text: string): Promise<number[]> {
    let body: string;
    try {
      const response = await client.send(
        new InvokeModelCommand({
          modelId,
          contentType: 'application/json',
          accept: 'application/json',
          body: JSON.stringify({ inputText: text, dimensions: dimension, normalize: true }),
        }),
      );
      body = response.body.transformToString();
    } catch (err) {
      throw toAppError(err, modelId);
    }
    return parseEmbedding(body, modelId, dimension);
  }

  return {
    modelId: `${modelId}/${dimension}`,
    dimension,
    async embed(texts) {
      const empty = texts.findIndex((text) => text.trim() === '');
      if (empty >= 0) {
        throw new ValidationError(
          `Cannot embed an empty text (batch index ${empty}) with ${modelId}`,
        );
      }
      return mapWithConcurrency(texts, concurrency, embedOne);
    },
  };
}

/** Parses and checks one InvokeModel reply; anything unexpected is an UnavailableError. */
function parseEmbedding(body: string, modelId: string, dimension: number): number[] {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch (err) {
    throw new UnavailableError(`Bedrock returned a reply from ${modelId} that is not JSON`, err);
  }
  const parsed = titanEmbeddingResponseSchema.safeParse(json);
  if (!parsed.success) {
    throw new UnavailableError(
      `Bedrock returned a malformed embedding reply from ${modelId}: ${z.prettifyError(parsed.error)}`,
    );
  }
  const { embedding } = parsed.data;
  if (embedding.length !== dimension) {
    throw new UnavailableError(
      `Bedrock returned an embedding of dimension ${embedding.length} from ${modelId}, expected ${dimension}`,
    );
  }
  // Titan normalises on request; re-normalising costs nothing and guards the port's contract.
  const norm = Math.sqrt(embedding.reduce((sum, x) => sum + x * x, 0));
  if (norm === 0) {
    throw new UnavailableError(`Bedrock returned a zero embedding from ${modelId}`);
  }
  return embedding.map((x) => x / norm);
}

/** Maps an SDK error (after the SDK's own retries) onto the app's error model. */
function toAppError(err: unknown, modelId: string): AppError {
  if (err instanceof AppError) return err;
  const name = err instanceof Error ? err.name : 'Error';
  const message = err instanceof Error ? err.message : String(err);
  const attempts = (err as { $metadata?: { attempts?: number } } | undefined)?.$metadata?.attempts;
  switch (name) {
    case 'ThrottlingException':
    case 'ServiceQuotaExceededException':
      return new UnavailableError(
        `Bedrock is throttling ${modelId}${attempts ? ` (gave up after ${attempts} attempts)` : ''}`,
        err,
      );
    case 'ValidationException':
      return new ValidationError(
        `Bedrock rejected the embedding request for ${modelId}: ${message}`,
      );
    case 'AccessDeniedException':
    case 'ResourceNotFoundException':
    case 'UnrecognizedClientException':
      return new ConfigError(`Bedrock model ${modelId} cannot be used (${name}): ${message}`);
    default:
      return new UnavailableError(
        `Bedrock embedding call to ${modelId} failed (${name}): ${message}`,
        err,
      );
  }
}

/**
 * Maps `items` through `fn` with at most `limit` calls in flight; results keep input order.
 * After the first failure no new call starts, and that failure is thrown.
 */
async function mapWithConcurrency<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  async function lane(): Promise<void> {
    while (!failed && next < items.length) {
      const index = next++;
      try {
        results[index] = await fn(items[index] as T);
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results;
}
