/**
 * Embedders on Amazon Bedrock: Titan Text Embeddings v2 and Cohere Embed v3 (English and
 * multilingual). Titan embeds one text per InvokeModel call, Cohere up to 96; either way a batch
 * runs as parallel calls under a concurrency bound. Throttling is retried by the client's retry
 * strategy (see bedrock-runtime-client.ts) before it surfaces here as a retryable
 * UnavailableError.
 */
import { InvokeModelCommand, type BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import * as z from '../../core/zod';
import { AppError, ConfigError, UnavailableError, ValidationError } from '../../core/errors';
import type { Embedder, EmbeddingPurpose } from '../../core/ports';
import { chunked, mapWithConcurrency, normalised } from './concurrency';

/** Titan Text Embeddings v2, the default model. */
export const TITAN_EMBED_TEXT_V2 = 'amazon.titan-embed-text-v2:0';

/** Output sizes Titan Text Embeddings v2 supports. */
type TitanDimension = 256 | 512 | 1024;

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
const titanEmbeddingResponseSchema = z.object({
  embedding: z.array(z.number()),
  inputTextTokenCount: z.optional(z.int().check(z.nonnegative())),
});

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
  checkConcurrency(concurrency);

  async function embedOne(text: string): Promise<number[]> {
    const body = await invokeModel(client, modelId, {
      inputText: text,
      dimensions: dimension,
      normalize: true,
    });
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
  const parsed = titanEmbeddingResponseSchema.safeParse(parseJson(body, modelId));
  if (!parsed.success) {
    throw new UnavailableError(
      `Bedrock returned a malformed embedding reply from ${modelId}: ${z.prettifyError(parsed.error)}`,
    );
  }
  // Titan normalises on request; re-normalising costs nothing and guards the port's contract.
  return unitVector(parsed.data.embedding, modelId, dimension);
}

/** One InvokeModel call with a JSON body; its reply body as text, or the error as an AppError. */
async function invokeModel(
  client: BedrockRuntimeClient,
  modelId: string,
  payload: unknown,
): Promise<string> {
  try {
    const response = await client.send(
      new InvokeModelCommand({
        modelId,
        contentType: 'application/json',
        accept: 'application/json',
        body: JSON.stringify(payload),
      }),
    );
    return response.body.transformToString();
  } catch (err) {
    throw toAppError(err, modelId);
  }
}

function checkConcurrency(concurrency: number): void {
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new ConfigError(
      `Bedrock embedding concurrency must be a whole number >= 1, got ${concurrency}`,
    );
  }
}

/** A reply's vector, checked for its dimension and made unit length (a zero vector is refused). */
function unitVector(embedding: readonly number[], modelId: string, dimension: number): number[] {
  if (embedding.length !== dimension) {
    throw new UnavailableError(
      `Bedrock returned an embedding of dimension ${embedding.length} from ${modelId}, expected ${dimension}`,
    );
  }
  const unit = normalised(embedding);
  if (!unit) throw new UnavailableError(`Bedrock returned a zero embedding from ${modelId}`);
  return unit;
}

function parseJson(body: string, modelId: string): unknown {
  try {
    return JSON.parse(body);
  } catch (err) {
    throw new UnavailableError(`Bedrock returned a reply from ${modelId} that is not JSON`, err);
  }
}

/** The Cohere Embed v3 model used when none is named (`cohere.embed-multilingual-v3` is the other; both 1,024 dimensions). */
const COHERE_EMBED_ENGLISH_V3 = 'cohere.embed-english-v3';

/** Whether `modelId` (a model id, inference profile or ARN) names a Cohere Embed model. */
export function isCohereEmbedModel(modelId: string): boolean {
  return /(^|[./])cohere\.embed-/.test(modelId);
}

/** Cohere Embed v3's vector size. */
export const COHERE_EMBED_V3_DIMENSION = 1024;
/** Most texts Cohere Embed accepts per InvokeModel call. */
const COHERE_MAX_TEXTS = 96;
/** Most characters Bedrock accepts per Cohere Embed text. */
const COHERE_MAX_CHARACTERS = 2048;

/** Options of {@link createCohereEmbedder}. */
export interface CohereEmbedderOptions {
  /** Shared client, from `createBedrockRuntimeClient` (it carries the retry policy). */
  readonly client: BedrockRuntimeClient;
  /**
   * `cohere.embed-english-v3`, `cohere.embed-multilingual-v3`, or an inference profile of one.
   * @default 'cohere.embed-english-v3'
   */
  readonly modelId?: string;
  /**
   * Texts per InvokeModel call, at most 96.
   * @default 96
   */
  readonly batchSize?: number;
  /**
   * Most InvokeModel calls in flight per `embed()` call.
   * @default 4
   */
  readonly concurrency?: number;
}

/** The body Cohere Embed returns with float embeddings (`response_type: embeddings_floats`). */
const cohereEmbeddingResponseSchema = z.object({
  embeddings: z.array(z.array(z.number())),
  id: z.optional(z.string()),
  response_type: z.optional(z.string()),
});

const COHERE_INPUT_TYPES: Record<EmbeddingPurpose, string> = {
  document: 'search_document',
  query: 'search_query',
};

/**
 * Creates an Embedder backed by Cohere Embed v3 on Bedrock; `modelId` is reported as
 * `${modelId}/1024`. Documents are embedded with `input_type: search_document`, queries with
 * `search_query`, as Cohere requires for retrieval. Texts longer than Bedrock's 2,048 characters
 * are clipped to them (the model reads about 512 tokens, roughly that many characters), and
 * `truncate: END` lets the model drop whatever it cannot read instead of failing.
 *
 * @throws ConfigError for invalid options.
 */
export function createCohereEmbedder(options: CohereEmbedderOptions): Embedder {
  const { client } = options;
  const modelId = options.modelId ?? COHERE_EMBED_ENGLISH_V3;
  const batchSize = options.batchSize ?? COHERE_MAX_TEXTS;
  const concurrency = options.concurrency ?? 4;
  if (!isCohereEmbedModel(modelId)) {
    throw new ConfigError(`${modelId} is not a Cohere Embed model`);
  }
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > COHERE_MAX_TEXTS) {
    throw new ConfigError(
      `Cohere embedding batch size must be 1-${COHERE_MAX_TEXTS}, got ${batchSize}`,
    );
  }
  checkConcurrency(concurrency);

  async function embedBatch(texts: readonly string[], inputType: string): Promise<number[][]> {
    const body = await invokeModel(client, modelId, {
      texts: texts.map((text) => text.slice(0, COHERE_MAX_CHARACTERS)),
      input_type: inputType,
      truncate: 'END',
    });
    const parsed = cohereEmbeddingResponseSchema.safeParse(parseJson(body, modelId));
    if (!parsed.success) {
      throw new UnavailableError(
        `Bedrock returned a malformed embedding reply from ${modelId}: ${z.prettifyError(parsed.error)}`,
      );
    }
    const { embeddings } = parsed.data;
    if (embeddings.length !== texts.length) {
      throw new UnavailableError(
        `Bedrock returned ${embeddings.length} embeddings from ${modelId} for ${texts.length} texts`,
      );
    }
    return embeddings.map((embedding) => unitVector(embedding, modelId, COHERE_EMBED_V3_DIMENSION));
  }

  return {
    modelId: `${modelId}/${COHERE_EMBED_V3_DIMENSION}`,
    dimension: COHERE_EMBED_V3_DIMENSION,
    async embed(texts, purpose = 'document') {
      const empty = texts.findIndex((text) => text.trim() === '');
      if (empty >= 0) {
        throw new ValidationError(
          `Cannot embed an empty text (batch index ${empty}) with ${modelId}`,
        );
      }
      const inputType = COHERE_INPUT_TYPES[purpose];
      const batches = await mapWithConcurrency(chunked(texts, batchSize), concurrency, (batch) =>
        embedBatch(batch, inputType),
      );
      return batches.flat();
    },
  };
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
