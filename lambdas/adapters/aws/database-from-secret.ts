/** Opens the PostgreSQL pool in AWS with credentials read once from Secrets Manager. */
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { errorCode } from '../../core/errors';
import * as z from '../../core/zod';
import type { Database } from '../postgres/database';
import { createPgDatabase } from '../postgres/pg-database';

const secretSchema = z.object({
  username: z.string(),
  password: z.string(),
  host: z.optional(z.string()),
  port: z.optional(z.coerce.number()),
  dbname: z.optional(z.string()),
});

export type DatabaseSecret = z.infer<typeof secretSchema>;

/** Reads a database secret (the shape RDS and Secrets Manager rotation keep). */
export async function readDatabaseSecret(
  secretArn: string,
  region: string,
): Promise<DatabaseSecret> {
  const client = new SecretsManagerClient({ region });
  const out = await client.send(new GetSecretValueCommand({ SecretId: secretArn }));
  return parseDatabaseSecret(out.SecretString, secretArn);
}

/**
 * A database secret's JSON, checked. A malformed one fails naming the secret and the fields at
 * fault, never their values (the message ends up in the logs).
 */
export function parseDatabaseSecret(
  secretString: string | undefined,
  secretArn: string,
): DatabaseSecret {
  let json: unknown;
  try {
    json = JSON.parse(secretString ?? '');
  } catch {
    throw new Error(`The database secret ${secretArn} holds no JSON object.`);
  }
  const result = secretSchema.safeParse(json);
  if (!result.success) {
    throw new Error(
      `The database secret ${secretArn} is malformed: ${z.prettifyError(result.error)}`,
    );
  }
  return result.data;
}

export async function createDatabaseFromSecret(options: {
  secretArn: string;
  region: string;
  host?: string;
  database: string;
}): Promise<Database> {
  const secret = await readDatabaseSecret(options.secretArn, options.region);
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

/** SQLSTATEs of a refused login: invalid_password, invalid_authorization_specification. */
const AUTH_FAILURES = new Set(['28P01', '28000']);

const isAuthFailure = (err: unknown): boolean => AUTH_FAILURES.has(errorCode(err) ?? '');

/**
 * A `Database` opened on first use (so a Lambda's init makes no network call). A failed open
 * is retried by the next request, not cached. A refused login (the secret was rotated since the
 * pool read it: new connections of the old pool carry the old password) closes the pool and
 * retries the call once with credentials read again.
 */
export function lazyDatabase(openDatabase: () => Promise<Database>): Database {
  let pool: Promise<Database> | undefined;
  const open = (): Promise<Database> =>
    (pool ??= openDatabase().catch((err: unknown) => {
      pool = undefined;
      throw err;
    }));
  async function withRetry<T>(call: (db: Database) => Promise<T>): Promise<T> {
    const current = open();
    try {
      return await call(await current);
    } catch (err) {
      if (!isAuthFailure(err)) throw err;
      if (pool === current) {
        pool = undefined;
        void current.then((db) => db.close()).catch(() => undefined);
      }
      return call(await open());
    }
  }
  return {
    kind: 'postgres',
    query: (text, params) => withRetry((db) => db.query(text, params)),
    exec: (script) => withRetry((db) => db.exec(script)),
    transaction: (fn, settings) => withRetry((db) => db.transaction(fn, settings)),
    close: async () => (pool ? (await pool).close() : undefined),
  };
}

/** The database of a Secrets Manager secret, opened on first use (see `lazyDatabase`). */
export function lazyDatabaseFromSecret(options: {
  secretArn: string;
  region: string;
  host?: string;
  database: string;
}): Database {
  return lazyDatabase(() => createDatabaseFromSecret(options));
}
