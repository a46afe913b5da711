/**
 * Settings of the embedded default, from the environment (validated once, at start).
 */
import path from 'node:path';
import { z } from 'zod';
import { parseEnv } from '../lambdas/adapters/aws/lambda-env';

export const localEnvSchema = z.object({
  /** Where PGlite's data, the S3 emulator's objects and the signing keys live. */
  GROUNDWORK_DATA_DIR: z.string().min(1).default('.groundwork'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  /** Port of the S3 emulator; 0 picks a free one. */
  GROUNDWORK_S3_PORT: z.coerce.number().int().min(0).max(65535).default(0),
  GROUNDWORK_BUCKET: z.string().min(3).default('groundwork-local'),
  GROUNDWORK_LOG_LEVEL: z.enum(['DEBUG', 'INFO', 'WARN', 'ERROR', 'SILENT']).default('WARN'),
  /** Worker threads for the local embedding model (default: one per core). */
  GROUNDWORK_EMBED_THREADS: z.coerce.number().int().min(0).max(64).optional(),
});
export type LocalEnv = z.infer<typeof localEnvSchema>;

export function loadLocalEnv(
  env: Record<string, string | undefined> = process.env,
): LocalEnv & { dataDir: string } {
  const parsed = parseEnv(localEnvSchema, env);
  return { ...parsed, dataDir: path.resolve(parsed.GROUNDWORK_DATA_DIR) };
}
