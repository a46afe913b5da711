/**
 * The embedding model's settings, read from the environment in one place for the Lambdas
 * (`EMBEDDING_*`) and the embedded default (`GROUNDWORK_EMBED_*`): the same suffixes and checks
 * under two prefixes. `embedder-factory.ts` applies the defaults and builds the Embedder; this
 * module loads no SDK, so every Lambda's env schema can include it. docs/ingestion.md lists them.
 */
import * as z from '../../core/zod';

/** Remote embedding providers (the embedded default also has its shipped `local` model). */
export type RemoteEmbeddingProvider = 'bedrock' | 'openai';

const nonEmpty = () => z.string().check(z.minLength(1));
const wholeNumber = (min: number) => z.pipe(z.coerce.number(), z.int().check(z.gte(min)));

/** The settings by suffix; every one is optional, the factory applies the provider's defaults. */
const SETTINGS = {
  /** Bedrock model id, or the OpenAI-compatible server's model name. */
  MODEL_ID: z.optional(nonEmpty()),
  /** Vector size: Titan 256, 512 (default) or 1024; required for `openai`. */
  DIMENSION: z.optional(wholeNumber(1)),
  /** `openai`: base URL up to the API version, e.g. `http://127.0.0.1:11434/v1`. */
  BASE_URL: z.optional(z.url({ protocol: /^https?$/ })),
  /** `openai`: bearer key, when the server needs one. */
  API_KEY: z.optional(nonEmpty()),
  /** `openai`, in AWS: the Secrets Manager secret whose text is the bearer key (read once). */
  API_KEY_SECRET_ARN: z.optional(nonEmpty()),
  /** `openai`: send `dimensions` (servers and models that shorten vectors). */
  SEND_DIMENSIONS: z.optional(z.stringbool()),
  /** `openai`: texts per request. */
  BATCH_SIZE: z.optional(wholeNumber(1)),
  /** Requests in flight per batch. */
  CONCURRENCY: z.optional(wholeNumber(1)),
  /** `openai`: timeout of one HTTP attempt, in milliseconds. */
  TIMEOUT_MS: z.optional(wholeNumber(1)),
  /** `openai`: retries of 408/429/5xx, network failures and timeouts. */
  MAX_RETRIES: z.optional(wholeNumber(0)),
  /** `openai`: prefixes for models trained with them (nomic, e5). */
  QUERY_PREFIX: z.optional(z.string()),
  DOCUMENT_PREFIX: z.optional(z.string()),
};
export type Suffix = keyof typeof SETTINGS;

/** The zod shape of the embedding settings under `prefix`, to spread into an env schema. */
export function embeddingEnvShape<P extends string>(
  prefix: P,
): { [K in Suffix as `${P}${K}`]: (typeof SETTINGS)[K] } {
  return Object.fromEntries(
    Object.entries(SETTINGS).map(([suffix, schema]) => [`${prefix}${suffix}`, schema]),
  ) as { [K in Suffix as `${P}${K}`]: (typeof SETTINGS)[K] };
}

/** Parsed settings, by suffix. */
export type EmbeddingSettings = {
  readonly [K in Suffix]?: z.infer<(typeof SETTINGS)[K]>;
};

/** Picks the settings of `prefix` out of a parsed environment. */
export function embeddingSettings(
  env: Readonly<Record<string, unknown>>,
  prefix: string,
): EmbeddingSettings {
  return Object.fromEntries(
    Object.keys(SETTINGS)
      .filter((suffix) => env[`${prefix}${suffix}`] !== undefined)
      .map((suffix) => [suffix, env[`${prefix}${suffix}`]]),
  );
}
