/**
 * `Database` over PGlite with pgvector, in-process: the embedded default. Data lives in a
 * folder and survives restarts (or in memory when no folder is given, for tests).
 *
 * PGlite's one session is its superuser, whom row-level security does not restrict: inside a
 * request's scope (db-scope.ts) every statement runs in a transaction that switches to
 * `requestRole` and applies the scope's settings, so that the embedded default is walled as the
 * application role is in AWS.
 */
import type { PGlite, Transaction } from '@electric-sql/pglite';
import { setLocalSql, type Database, type DatabaseOptions, type Queryable } from './database';
import { currentDbScope, scopeSql } from './db-scope';

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
function fromPGlite(db: PGlite, options: DatabaseOptions = {}): Database {
  const root = wrap(db);
  const transaction: Database['transaction'] = (fn, settings = {}) =>
    db.transaction(async (tx) => {
      const scope = currentDbScope();
      const head = [scope ? scopeSql(scope, options.requestRole) : '', setLocalSql(settings)]
        .filter(Boolean)
        .join('; ');
      if (head) await tx.exec(head);
      return fn(wrap(tx));
    });
  return {
    kind: 'pglite',
    query: (text, params) =>
      currentDbScope() ? transaction((tx) => tx.query(text, params)) : root.query(text, params),
    exec: (script) => (currentDbScope() ? transaction((tx) => tx.exec(script)) : root.exec(script)),
    call: (text, params) => root.query(text, params),
    transaction,
    close: () => db.close(),
  };
}

/** Opens (or creates) the embedded database in `dataDir`; in memory when `dataDir` is undefined. */
export async function openPGlite(
  dataDir?: string,
  options: DatabaseOptions = {},
): Promise<Database> {
  // Loaded lazily: the Lambda bundles never need PGlite's WebAssembly.
  const { PGlite } = await import('@electric-sql/pglite');
  const { vector } = await import('@electric-sql/pglite-pgvector');
  const db = await PGlite.create({ dataDir, extensions: { vector } });
  return fromPGlite(db, options);
}
