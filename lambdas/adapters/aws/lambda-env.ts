/**
 * Environment of the Lambdas in AWS, parsed once at cold start. A missing or malformed variable
 * fails fast with a message naming it.
 */
import * as z from '../../core/zod';
import { ConfigError } from '../../core/errors';
import { embeddingEnvShape } from '../embeddings/embedding-env';
import { rerankEnvShape, rerankProviderSchema } from '../rerank/rerank-env';

export const lambdaEnvSchema = z.object({
  AWS_REGION: z.string().check(z.minLength(1)),
  /** Secrets Manager secret with the database credentials (username, password, host, port, dbname). */
  DB_SECRET_ARN: z.string().check(z.minLength(1)),
  /** RDS Proxy endpoint; overrides the host stored in the secret. */
  DB_HOST: z.optional(z.string().check(z.minLength(1))),
  /**
   * RDS Proxy's read-only endpoint (or the cluster's reader endpoint), where the search
   * repository reads (postgres/databases.ts); unset: it reads from `DB_HOST`.
   */
  DB_READ_HOST: z.optional(z.string().check(z.minLength(1))),
  DB_NAME: z._default(z.string().check(z.minLength(1)), 'groundwork'),
  /** `bedrock` (Titan Text Embeddings v2, the default) or `openai` (any OpenAI-compatible server). */
  EMBEDDING_PROVIDER: z._default(z.enum(['bedrock', 'openai']), 'bedrock'),
  /** EMBEDDING_MODEL_ID, EMBEDDING_DIMENSION, EMBEDDING_BASE_URL, ... (embedding-env.ts). */
  ...embeddingEnvShape('EMBEDDING_'),
  /** Rerank stage of search and answers: `none` (the default), `bedrock` or `http`. */
  RERANK_PROVIDER: rerankProviderSchema,
  /** RERANK_MODEL_ID, RERANK_BASE_URL, RERANK_API_KEY, RERANK_CANDIDATES, RERANK_TIMEOUT_MS. */
  ...rerankEnvShape('RERANK_'),
  MAX_OBJECT_BYTES: z._default(z.coerce.number().check(z.int(), z.positive()), 50 * 1024 * 1024),
});
export type LambdaEnv = z.infer<typeof lambdaEnvSchema>;

/** Parses `process.env` (or the given record); throws a ConfigError naming the bad variable. */
export function parseEnv<S extends z.core.$ZodType>(
  schema: S,
  env: Record<string, string | undefined> = process.env,
): z.infer<S> {
  // The functional safeParse takes classic schemas too (local/config.ts passes one).
  const result = z.safeParse(schema, env);
  if (!result.success) {
    const problems = result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new ConfigError(`Invalid environment: ${problems}`);
  }
  return result.data;
}
