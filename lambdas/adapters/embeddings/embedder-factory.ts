/**
 * Builds the configured Embedder from the settings of embedding-env.ts, with each provider's
 * defaults (one place for them).
 */
import type { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { ConfigError } from '../../core/errors';
import type { Embedder } from '../../core/ports';
import {
  COHERE_EMBED_V3_DIMENSION,
  createBedrockEmbedder,
  createCohereEmbedder,
  isCohereEmbedModel,
  TITAN_EMBED_TEXT_V2,
} from './bedrock-embedder';
import type { EmbeddingSettings, RemoteEmbeddingProvider } from './embedding-env';
import { createOpenAiCompatibleEmbedder } from './openai-compatible-embedder';
import { configuredKey, type SecretReader } from '../secrets/bearer-key';

type Suffix = keyof EmbeddingSettings;

/** What the factory may need besides the settings. */
export interface EmbedderDeps {
  /** The process's shared Bedrock client; only called for the `bedrock` provider. */
  readonly bedrockClient: () => BedrockRuntimeClient;
  /** Reads `API_KEY_SECRET_ARN`'s secret (Secrets Manager in AWS); absent: that setting is refused. */
  readonly readSecret?: SecretReader;
}

/**
 * Builds the configured Embedder. Messages name the variables as `${prefix}${suffix}`.
 * @throws ConfigError when a setting the provider needs is missing or does not fit it.
 */
export function createConfiguredEmbedder(
  provider: RemoteEmbeddingProvider,
  settings: EmbeddingSettings,
  prefix: string,
  deps: EmbedderDeps,
): Embedder {
  const name = (suffix: Suffix) => `${prefix}${suffix}`;
  if (provider === 'openai') {
    const { BASE_URL, MODEL_ID, DIMENSION } = settings;
    if (BASE_URL === undefined || MODEL_ID === undefined || DIMENSION === undefined) {
      throw new ConfigError(
        `The openai embedding provider needs ${name('BASE_URL')}, ${name('MODEL_ID')} and ${name('DIMENSION')}`,
      );
    }
    return createOpenAiCompatibleEmbedder({
      baseUrl: BASE_URL,
      model: MODEL_ID,
      dimension: DIMENSION,
      ...defined({
        apiKey: configuredKey(settings, deps.readSecret, name('API_KEY_SECRET_ARN')),
        sendDimensions: settings.SEND_DIMENSIONS,
        batchSize: settings.BATCH_SIZE,
        concurrency: settings.CONCURRENCY,
        timeoutMs: settings.TIMEOUT_MS,
        maxRetries: settings.MAX_RETRIES,
        queryPrefix: settings.QUERY_PREFIX,
        documentPrefix: settings.DOCUMENT_PREFIX,
      }),
    });
  }
  const modelId = settings.MODEL_ID ?? TITAN_EMBED_TEXT_V2;
  if (isCohereEmbedModel(modelId)) {
    if (settings.DIMENSION !== undefined && settings.DIMENSION !== COHERE_EMBED_V3_DIMENSION) {
      throw new ConfigError(
        `${name('DIMENSION')} must be ${COHERE_EMBED_V3_DIMENSION} (or unset) for ${modelId}, got ${settings.DIMENSION}`,
      );
    }
    return createCohereEmbedder({
      client: deps.bedrockClient(),
      modelId,
      ...defined({ batchSize: settings.BATCH_SIZE, concurrency: settings.CONCURRENCY }),
    });
  }
  const dimension = settings.DIMENSION ?? 512;
  if (dimension !== 256 && dimension !== 512 && dimension !== 1024) {
    throw new ConfigError(
      `${name('DIMENSION')} must be 256, 512 or 1024 for ${modelId}, got ${dimension}`,
    );
  }
  return createBedrockEmbedder({
    client: deps.bedrockClient(),
    modelId,
    dimension,
    ...defined({ concurrency: settings.CONCURRENCY }),
  });
}

/** `record` without its undefined values (the options are `exactOptionalPropertyTypes`). */
function defined<T extends Record<string, unknown>>(
  record: T,
): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>;
  };
}
