/** `Database` over node-postgres: used for PostgreSQL 15 + pgvector in tests and Aurora in AWS. */
import { Pool, type PoolClient, type PoolConfig } from 'pg';
import { setLocalSql, type Database, type LocalSettings, type Queryable } from './database';

function wrap(client: Pool | PoolClient): Queryable {
  return {
    async query<R extends object>(text: string, params: readonly unknown[] = []) {
      const result = await client.query(text, params as unknown[]);
      return { rows: result.rows as R[], rowCount: result.rowCount ?? 0 };
    },
    async exec(script: string) {
      await client.query(script);
    },
  };
}

/** Creates a pooled `Database`. Create it once per process (module scope in a Lambda). */
export function createPgDatabase(config: PoolConfig): Database {
  const pool = new Pool({ max: 4, idleTimeoutMillis: 30_000, ...config });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => undefined);
  const root = wrap(pool);
  return {
    kind: 'postgres',
    query: (text, params) => root.query(text, params),
    exec: (script) => root.exec(script),
    async transaction<T>(
      fn: (tx: Queryable) => Promise<T>,
      settings: LocalSettings = {},
    ): Promise<T> {
      const client = await pool.connect();
      try {
        // One round trip for BEGIN and the transaction's settings (simple protocol, no params).
        const local = setLocalSql(settings);
        await client.query(local ? `BEGIN; ${local}` : 'BEGIN');
        const result = await fn(wrap(client));
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        client.release();
      }
    },
    async close() {
      await pool.end();
    },
  };
}
