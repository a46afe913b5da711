/**
 * Indexes that configuration adds to a live table (filter indexes, the exact-scan index): built
 * without blocking writes, and built again when a build stopped half way.
 *
 * These statements run as the migrating role (the owner of the tables), never in a request.
 */
import type { Database } from './database';

/** Whether the index `name` of the current schema is valid; null when there is none. */
export async function indexValidity(db: Database, name: string): Promise<boolean | null> {
  const { rows } = await db.query<{ valid: boolean }>(
    `SELECT i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
      WHERE c.relname = $1 AND c.relnamespace = current_schema()::regnamespace`,
    [name],
  );
  return rows[0]?.valid ?? null;
}

/**
 * Makes `name` a valid index built by `ddl` (a `CREATE INDEX CONCURRENTLY IF NOT EXISTS` of that
 * name): nothing when it is, a build when it is missing, and a drop before the build when it is
 * invalid (what an interrupted concurrent build leaves). True when it was built.
 */
export async function ensureIndex(db: Database, name: string, ddl: string): Promise<boolean> {
  const valid = await indexValidity(db, name);
  if (valid === true) return false;
  if (valid === false) await dropIndex(db, name);
  await db.call(ddl);
  return true;
}

/** Drops the index `name` if it exists, without blocking reads or writes. */
export async function dropIndex(db: Database, name: string): Promise<void> {
  await db.call(`DROP INDEX CONCURRENTLY IF EXISTS ${quoteName(name)}`);
}

/** An index name of letters, digits and underscores (the only kind made here) as an identifier. */
function quoteName(name: string): string {
  if (!/^[a-z0-9_]+$/.test(name)) throw new Error(`unexpected index name ${name}`);
  return `"${name}"`;
}
