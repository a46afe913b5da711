/**
 * The two real databases every integration suite runs against: PGlite (the embedded default)
 * and PostgreSQL 15 + pgvector (what Aurora runs). Each PostgreSQL suite gets its own schema,
 * so suites can run in parallel and leave nothing behind.
 */
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { APP_GROUP_ROLE } from '../../lambdas/adapters/postgres/app-role';
import type { Database } from '../../lambdas/adapters/postgres/database';
import { migrate } from '../../lambdas/adapters/postgres/migrate';
import { createPgDatabase } from '../../lambdas/adapters/postgres/pg-database';
import { openPGlite } from '../../lambdas/adapters/postgres/pglite-database';
import type { Embedder } from '../../lambdas/core/ports';
import { createHashEmbedder } from './hash-embedder';
import { seedDocuments, type SeedDoc } from './seed';

export const TEST_DATABASE_URL =
  process.env.GROUNDWORK_TEST_DATABASE_URL ??
  'postgres://groundwork:groundwork@127.0.0.1:5432/groundwork_test';

export type EngineName = 'pglite' | 'postgres';

/**
 * Opens a migrated, empty database of the given kind. `close()` drops what it created. The
 * session is the owner (PGlite's superuser): statements inside a request's scope (db-scope.ts)
 * switch to the application's group role, as the embedded default's do, once `startLocalStack`
 * or `ensureRequestRole` has created it.
 */
export async function openTestDatabase(
  engine: EngineName,
  options: { migrate?: boolean } = {},
): Promise<Database> {
  const db =
    engine === 'pglite'
      ? await openPGlite(undefined, { requestRole: APP_GROUP_ROLE })
      : await openPostgresSchema();
  if (options.migrate !== false) await migrate(db);
  return db;
}

async function openPostgresSchema(): Promise<Database> {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const admin = new Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  const db = createPgDatabase(
    {
      connectionString: TEST_DATABASE_URL,
      // Tables go to the suite's schema; the vector type comes from public, where the extension lives.
      options: `-c search_path=${schema},public`,
      max: 4,
    },
    { requestRole: APP_GROUP_ROLE },
  );
  return {
    ...db,
    async close() {
      await db.close();
      const cleanup = new Client({ connectionString: TEST_DATABASE_URL });
      await cleanup.connect();
      await cleanup.query(`DROP SCHEMA ${schema} CASCADE`);
      await cleanup.end();
    },
  };
}

export const ENGINES: readonly EngineName[] = ['pglite', 'postgres'];

/**
 * The database of a suite's `describe` block: opened and seeded with `docs` before its tests,
 * closed after them. A getter, since the database exists only once `beforeAll` has run.
 */
export function seededTestDatabase(
  engine: EngineName,
  docs: SeedDoc[],
  embedder: Embedder = createHashEmbedder(),
): () => Database {
  let db: Database | undefined;
  beforeAll(async () => {
    db = await openTestDatabase(engine);
    await seedDocuments(db, embedder, docs);
  });
  afterAll(() => db?.close());
  return () => {
    if (!db) throw new Error('the suite database is opened in beforeAll');
    return db;
  };
}
