/**
 * Environment of the Lambdas in AWS, parsed once at cold start. A missing or malformed variable
 * fails fast with a message naming it.
 */
import * as z from '../../core/zod';
import { ConfigError } from '../../core/errors';

export const lambdaEnvSchema = z.object({
  AWS_REGION: z.string().check(z.minLength(1)),
  /** Secrets Manager secret with the database credentials (username, password, host, port, dbname). */
  DB_SECRET_ARN: z.string().check(z.minLength(1)),
  /** RDS Proxy endpoint; overrides the host stored in the secret. */
  DB_HOST: z.optional(z.string().check(z.minLength(1))),
  DB_NAME: z._default(z.string().check(z.minLength(1)), 'groundwork'),
  EMBEDDING_MODEL_ID: z._default(z.string().check(z.minLength(1)), 'amazon.titan-embed-text-v2:0'),
  EMBEDDING_DIMENSION: z._default(
    z.pipe(z.coerce.number(), z.union([z.literal(256), z.literal(512), z.literal(1024)])),
    512,
  ),
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
