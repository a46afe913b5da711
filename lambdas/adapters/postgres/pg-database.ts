/** `Database` over node-postgres: used for PostgreSQL 15 + pgvector in tests and Aurora in AWS. */
import { Pool, type PoolClient, type PoolConfig } from 'pg';
import { UnavailableError } from '../../core/errors';
import {
  setLocalSql,
  type Database,
  type DatabaseOptions,
  type LocalSettings,
  type Queryable,
} from './database';
import { currentDbScope, scopeSql } from './db-scope';

/** Socket errors of a server that is down or unreachable. */
const CONNECTION_ERRNOS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
/**
 * SQLSTATEs of a server that cannot serve now: connection exceptions (class 08),
 * admin_shutdown (a terminated backend), crash_shutdown, cannot_connect_now,
 * too_many_connections.
 */
const UNAVAILABLE_SQLSTATE = /^(08...|57P0[1-3]|53300)$/;

/** Whether `err` says the database is unreachable (rather than the query being wrong). */
function isConnectionFailure(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (CONNECTION_ERRNOS.has(code) || UNAVAILABLE_SQLSTATE.test(code)))
    return true;
  // node-postgres's own errors for a lost or never-made connection carry no code.
  return /^Connection terminated|^timeout exceeded when trying to connect|^Client has encountered a connection error/.test(
    err.message,
  );
}

/** A lost database is a 503 the client may retry (lambdas/core/errors.ts), not a 500. */
function translate(err: unknown): unknown {
  return isConnectionFailure(err)
    ? new UnavailableError('The database is unavailable; retry shortly.', err)
    : err;
}

function wrap(client: Pool | PoolClient): Queryable {
  return {
    async query<R extends object>(text: string, params: readonly unknown[] = []) {
      const result = await client.query(text, params as unknown[]).catch((err: unknown) => {
        throw translate(err);
      });
      return { rows: result.rows as R[], rowCount: result.rowCount ?? 0 };
    },
    async exec(script: string) {
      await client.query(script).catch((err: unknown) => {
        throw translate(err);
      });
    },
  };
}

/**
 * Creates a pooled `Database`. Create it once per process (module scope in a Lambda). Inside a
 * request's scope (db-scope.ts) every statement runs in a transaction that opens with the
 * scope's settings; outside one, as the connection's own role.
 */
export function createPgDatabase(config: PoolConfig, options: DatabaseOptions = {}): Database {
  // A server that does not answer fails the request (503) rather than holding it for ever.
  const pool = new Pool({
    max: 4,
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: 10_000,
    ...config,
  });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => undefined);
  const root = wrap(pool);
  async function transaction<T>(
    fn: (tx: Queryable) => Promise<T>,
    settings: LocalSettings = {},
  ): Promise<T> {
    const client = await pool.connect().catch((err: unknown) => {
      throw translate(err);
    });
    let broken = false;
    // A connection lost while the client is checked out and no statement runs (the transaction
    // awaits other work) is an 'error' event on the client: unheard, it would crash the process.
    // The transaction's next statement fails, and the client is discarded.
    const lost = () => {
      broken = true;
    };
    client.on('error', lost);
    try {
      // One round trip for BEGIN, the scope and the transaction's settings (simple protocol).
      const scope = currentDbScope();
      const head = [
        'BEGIN',
        scope ? scopeSql(scope, options.requestRole) : '',
        setLocalSql(settings),
      ].filter(Boolean);
      await client.query(head.join('; '));
      const result = await fn(wrap(client));
      await client.query('COMMIT');
      return result;
    } catch (err) {
      broken ||=
        isConnectionFailure(err) || isConnectionFailure((err as { cause?: unknown }).cause);
      await client.query('ROLLBACK').catch(() => undefined);
      throw translate(err);
    } finally {
      // A client whose connection failed is discarded, not returned to the pool.
      client.off('error', lost);
      client.release(broken);
    }
  }
  return {
    kind: 'postgres',
    query: (text, params) =>
      currentDbScope() ? transaction((tx) => tx.query(text, params)) : root.query(text, params),
    exec: (script) => (currentDbScope() ? transaction((tx) => tx.exec(script)) : root.exec(script)),
    call: (text, params) => root.query(text, params),
    transaction,
    async close() {
      await pool.end();
    },
  };
}
