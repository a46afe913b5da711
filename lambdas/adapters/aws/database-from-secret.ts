/** Opens the PostgreSQL pool in AWS with credentials read once from Secrets Manager. */
import type { Tracer } from '@aws-lambda-powertools/tracer';
import { errorCode } from '../../core/errors';
import * as z from '../../core/zod';
import type { Database } from '../postgres/database';
import { createPgDatabase } from '../postgres/pg-database';
import { readSecretString } from './secret-string';

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
  tracer?: Tracer,
): Promise<DatabaseSecret> {
  return parseDatabaseSecret(await readSecretString(secretArn, region, tracer), secretArn);
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
  /** Give up on a connection attempt after this long; unset: wait as long as TCP does. */
  connectTimeoutMs?: number;
  /** Traces the Secrets Manager read. */
  tracer?: Tracer;
}): Promise<Database> {
  const secret = await readDatabaseSecret(options.secretArn, options.region, options.tracer);
  return createPgDatabase({
    host: options.host ?? secret.host,
    port: secret.port ?? 5432,
    user: secret.username,
    password: secret.password,
    database: secret.dbname ?? options.database,
    // RDS Proxy and Aurora require TLS; the Lambda runtime trusts the RDS CA bundle.
    ssl: { rejectUnauthorized: true },
    max: 2,
    ...(options.connectTimeoutMs ? { connectionTimeoutMillis: options.connectTimeoutMs } : {}),
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
    call: (text, params) => withRetry((db) => db.call(text, params)),
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
  tracer?: Tracer;
}): Database {
  return lazyDatabase(() => createDatabaseFromSecret(options));
}

/**
 * Errors of a database that is not accepting connections yet: refused, unreachable or timed out
 * (a new cluster, a proxy whose target is not yet available, an instance resuming from 0 ACUs),
 * and the SQLSTATEs of a server starting up or a connection that failed before it was made.
 */
const NOT_READY_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  '57P03', // cannot_connect_now
  '08001', // sqlclient_unable_to_establish_sqlconnection
  '08006', // connection_failure
]);

/** Whether `err` says the database is not ready yet (worth waiting for), not that it refused us. */
export function isDatabaseNotReady(err: unknown): boolean {
  const code = errorCode(err);
  if (code !== undefined) return NOT_READY_CODES.has(code);
  // pg reports a connect timeout and a socket closed during start-up without a code.
  const message = err instanceof Error ? err.message : '';
  return /timeout expired|Connection terminated unexpectedly/i.test(message);
}

/**
 * Opens a database and proves it answers (`SELECT 1`), retrying while it is not ready (see
 * isDatabaseNotReady) with a doubling pause of at most 20 seconds, until `deadline` (epoch ms).
 * Any other error, or the deadline, fails at once with the last error.
 */
export async function openWhenReady(
  open: () => Promise<Database>,
  options: {
    readonly deadline: number;
    readonly now?: () => number;
    readonly sleep?: (ms: number) => Promise<void>;
    readonly onRetry?: (attempt: number, err: unknown) => void;
  },
): Promise<Database> {
  const now = options.now ?? Date.now;
  const sleep =
    options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  let pause = 1000;
  for (let attempt = 1; ; attempt++) {
    let db: Database | undefined;
    try {
      db = await open();
      await db.query('SELECT 1');
      return db;
    } catch (err) {
      await db?.close().catch(() => undefined);
      if (!isDatabaseNotReady(err) || now() + pause > options.deadline) throw err;
      options.onRetry?.(attempt, err);
      await sleep(pause);
      pause = Math.min(pause * 2, 20_000);
    }
  }
}
