/** Opens the PostgreSQL pool in AWS with credentials read once from Secrets Manager. */
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import * as z from 'zod';
import type { Database } from '../postgres/database';
import { createPgDatabase } from '../postgres/pg-database';

const secretSchema = z.object({
  username: z.string(),
  password: z.string(),
  host: z.string().optional(),
  port: z.coerce.number().optional(),
  dbname: z.string().optional(),
});

export async function createDatabaseFromSecret(options: {
  secretArn: string;
  region: string;
  host?: string;
  database: string;
}): Promise<Database> {
  const client = new SecretsManagerClient({ region: options.region });
  const out = await client.send(new GetSecretValueCommand({ SecretId: options.secretArn }));
  const secret = secretSchema.parse(JSON.parse(out.SecretString ?? '{}'));
  return createPgDatabase({
    host: options.host ?? secret.host,
    port: secret.port ?? 5432,
    user: secret.username,
    password: secret.password,
    database: secret.dbname ?? options.database,
    // RDS Proxy and Aurora require TLS; the Lambda runtime trusts the RDS CA bundle.
    ssl: { rejectUnauthorized: true },
    max: 2,
  });
}

/**
 * A `Database` whose pool opens on first use (so a Lambda's init makes no network call); a
 * failed open is retried by the next request, not cached.
 */
export function lazyDatabaseFromSecret(options: {
  secretArn: string;
  region: string;
  host?: string;
  database: string;
}): Database {
  let pool: Promise<Database> | undefined;
  const open = (): Promise<Database> =>
    (pool ??= createDatabaseFromSecret(options).catch((err: unknown) => {
      pool = undefined;
      throw err;
    }));
  return {
    kind: 'postgres',
    query: async (text, params) => (await open()).query(text, params),
    exec: async (script) => (await open()).exec(script),
    transaction: async (fn) => (await open()).transaction(fn),
    close: async () => (pool ? (await pool).close() : undefined),
  };
}
