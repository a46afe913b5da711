/**
 * `Database` over PGlite with pgvector, in-process: the embedded default. Data lives in a
 * folder and survives restarts (or in memory when no folder is given, for tests).
 */
import type { PGlite, Transaction } from '@electric-sql/pglite';
import { setLocalSql, type Database, type Queryable } from './database';

function wrap(db: PGlite | Transaction): Queryable {
  return {
    async query<R extends object>(text: string, params: readonly unknown[] = []) {
      const result = await db.query<R>(text, params as unknown[]);
      return { rows: result.rows, rowCount: result.affectedRows ?? result.rows.length };
    },
    async exec(script: string) {
      await db.exec(script);
    },
  };
}

/** Wraps an existing PGlite instance (created with the `vector` extension). */
export function fromPGlite(db: PGlite): Database {
  const root = wrap(db);
  return {
    kind: 'pglite',
    query: (text, params) => root.query(text, params),
    exec: (script) => root.exec(script),
    transaction: (fn, settings = {}) =>
      db.transaction(async (tx) => {
        const local = setLocalSql(settings);
        if (local) await tx.exec(local);
        return fn(wrap(tx));
      }),
    close: () => db.close(),
  };
}

/** Opens (or creates) the embedded database in `dataDir`; in memory when `dataDir` is undefined. */
export async function openPGlite(dataDir?: string): Promise<Database> {
  // Loaded lazily: the Lambda bundles never need PGlite's WebAssembly.
  const { PGlite } = await import('@electric-sql/pglite');
  const { vector } = await import('@electric-sql/pglite-pgvector');
  const db = await PGlite.create({ dataDir, extensions: { vector } });
  return fromPGlite(db);
}
