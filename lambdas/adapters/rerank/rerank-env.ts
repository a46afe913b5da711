/**
 * The rerank stage's settings, read from the environment in one place for the Lambdas
 * (`RERANK_PROVIDER`, `RERANK_*`) and the embedded default (`GROUNDWORK_RERANKER`,
 * `GROUNDWORK_RERANK_*`). No SDK is loaded here; rerank-factory.ts builds the Reranker.
 * docs/retrieval.md lists the variables.
 */
import * as z from '../../core/zod';

/** `none` (the default): no rerank stage; `bedrock`; `http`: a Cohere-style `/rerank` server. */
export const rerankProviderSchema = z._default(z.enum(['none', 'bedrock', 'http']), 'none');
export type RerankProvider = z.infer<typeof rerankProviderSchema>;

const wholeNumber = (min: number) => z.pipe(z.coerce.number(), z.int().check(z.gte(min)));

const SETTINGS = {
  /** Bedrock model id (default `amazon.rerank-v1:0`), or the server's model name (`http`). */
  MODEL_ID: z.optional(z.string().check(z.minLength(1))),
  /** `http`: base URL up to the API version; `/rerank` is appended. */
  BASE_URL: z.optional(z.url({ protocol: /^https?$/ })),
  /** `http`: bearer key. */
  API_KEY: z.optional(z.string().check(z.minLength(1))),
  /** `http`, in AWS: the Secrets Manager secret whose text is the bearer key (read once). */
  API_KEY_SECRET_ARN: z.optional(z.string().check(z.minLength(1))),
  /** Fused candidates sent to the reranker. */
  CANDIDATES: z.optional(z.pipe(wholeNumber(1), z.int().check(z.lte(200)))),
  /** Longest wait for the reranker before the fused order is used, in milliseconds. */
  TIMEOUT_MS: z.optional(wholeNumber(1)),
};
export type RerankSettingSuffix = keyof typeof SETTINGS;
type Suffix = RerankSettingSuffix;

/** The schema of one setting. */
export type RerankSettingSchemas = typeof SETTINGS;

/** The zod shape of the rerank settings under `prefix`, to spread into an env schema. */
export function rerankEnvShape<P extends string>(
  prefix: P,
): { [K in Suffix as `${P}${K}`]: (typeof SETTINGS)[K] } {
  return Object.fromEntries(
    Object.entries(SETTINGS).map(([suffix, schema]) => [`${prefix}${suffix}`, schema]),
  ) as { [K in Suffix as `${P}${K}`]: (typeof SETTINGS)[K] };
}
