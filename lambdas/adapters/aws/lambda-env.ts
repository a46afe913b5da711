/**
 * Environment of the Lambdas in AWS, parsed once at cold start. A missing or malformed variable
 * fails fast with a message naming it.
 */
import * as z from 'zod';
import { ConfigError } from '../../core/errors';

export const lambdaEnvSchema = z.object({
  AWS_REGION: z.string().min(1),
  /** Secrets Manager secret with the database credentials (username, password, host, port, dbname). */
  DB_SECRET_ARN: z.string().min(1),
  /** RDS Proxy endpoint; overrides the host stored in the secret. */
  DB_HOST: z.string().min(1).optional(),
  DB_NAME: z.string().min(1).default('groundwork'),
  EMBEDDING_MODEL_ID: z.string().min(1).default('amazon.titan-embed-text-v2:0'),
  EMBEDDING_DIMENSION: z.coerce
    .number()
    .pipe(z.union([z.literal(256), z.literal(512), z.literal(1024)]))
    .default(512),
  MAX_OBJECT_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(50 * 1024 * 1024),
});
export type LambdaEnv = z.infer<typeof lambdaEnvSchema>;

/** Parses `process.env` (or the given record); throws a ConfigError naming the bad variable. */
export function parseEnv<S extends z.ZodType>(
  schema: S,
  env: Record<string, string | undefined> = process.env,
): z.infer<S> {
  const result = schema.safeParse(env);
  if (!result.success) {
    const problems = result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new ConfigError(`Invalid environment: ${problems}`);
  }
  return result.data;
}
