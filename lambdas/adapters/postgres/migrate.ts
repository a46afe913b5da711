/**
 * The migration runner: applies `migrations/NNNN_name.sql` in order, each file in its own
 * transaction, recording what ran in `schema_migrations`. A transaction-scoped advisory lock
 * serialises concurrent runners (two Lambdas or two local processes starting at once); the
 * second one waits, then sees the file recorded and skips it. Files are forward-only: an
 * applied file whose content changed is an error, not a silent re-run. The search statement's
 * routines are installed after them.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Database } from './database';
import { installRoutines, type Routine } from './routines';
import { SEARCH_ROUTINE_PREFIX } from './search-repository';
import { searchRoutines } from './search-routines';

/** Arbitrary, fixed key for `pg_advisory_xact_lock`, so all runners contend on the same lock. */
const MIGRATION_LOCK_KEY = 727_150_001;

/** Where the repository keeps its SQL migrations. */
const DEFAULT_MIGRATIONS_DIR = path.join(__dirname, '..', '..', '..', 'migrations');

export interface Migration {
  readonly version: string;
  readonly name: string;
  readonly sql: string;
  readonly checksum: string;
}

/** Reads and orders the migration files of a folder. */
export async function loadMigrations(dir: string = DEFAULT_MIGRATIONS_DIR): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f)).sort();
  return Promise.all(
    files.map(async (file) => {
      const sql = await readFile(path.join(dir, file), 'utf8');
      return {
        version: file.slice(0, 4),
        name: file.slice(5, -4),
        sql,
        checksum: createHash('sha256').update(sql).digest('hex'),
      };
    }),
  );
}

/**
 * Applies pending migrations, then brings the search statement's routines (routines.ts) in line
 * with this code: they are derived from it, not versioned. Returns the versions it applied and the
 * routines it created and dropped. Safe to call on every start.
 */
export async function migrate(
  db: Database,
  migrations?: readonly Migration[],
  routines: readonly Routine[] = searchRoutines(),
): Promise<{ applied: string[]; routines: { created: string[]; dropped: string[] } }> {
  const list = migrations ?? (await loadMigrations());
  const applied: string[] = [];
  for (const migration of list) {
    const ran = await db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
      await tx.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
        version text PRIMARY KEY,
        name text NOT NULL,
        checksum text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`);
      const { rows } = await tx.query<{ checksum: string }>(
        'SELECT checksum FROM schema_migrations WHERE version = $1',
        [migration.version],
      );
      const existing = rows[0];
      if (existing) {
        if (existing.checksum !== migration.checksum) {
          throw new Error(
            `Migration ${migration.version}_${migration.name} was changed after it was applied. ` +
              'Migrations are forward-only: restore the file and add a new numbered migration instead.',
          );
        }
        return false;
      }
      await tx.exec(migration.sql);
      await tx.query(
        'INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)',
        [migration.version, migration.name, migration.checksum],
      );
      return true;
    });
    if (ran) applied.push(migration.version);
  }
  const installed = await db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
    return installRoutines(tx, SEARCH_ROUTINE_PREFIX, routines);
  });
  return { applied, routines: installed };
}
