/**
 * The application's database role on the real PostgreSQL server: the request paths (indexing,
 * search, threads, deletion) work when logged in as it, and schema changes, TRUNCATE and writes
 * to the migration ledger are refused. Roles are cluster-wide, so the names are unique per run
 * and dropped afterwards.
 */
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { ensureAppRole } from '../../lambdas/adapters/postgres/app-role';
import { createConversationRepository } from '../../lambdas/adapters/postgres/conversation-repository';
import type { Database } from '../../lambdas/adapters/postgres/database';
import { dbTenantScope, runInDbScope } from '../../lambdas/adapters/postgres/db-scope';
import { createDocumentRepository } from '../../lambdas/adapters/postgres/document-repository';
import { createPgDatabase } from '../../lambdas/adapters/postgres/pg-database';
import {
  createSearchRepository,
  SEARCH_ROUTINE_PREFIX,
} from '../../lambdas/adapters/postgres/search-repository';
import { quoteIdentifier } from '../../lambdas/adapters/postgres/sql-params';
import { createSearch } from '../../lambdas/core/retrieval/search';
import { openTestDatabase, TEST_DATABASE_URL } from '../support/databases';
import { createHashEmbedder } from '../support/hash-embedder';
import { seedDocuments } from '../support/seed';

const suffix = randomBytes(4).toString('hex');
const group = `gw_test_rw_${suffix}`;
const login = `gw_test_app_${suffix}`;
const password = `pw-'quoted"-${randomBytes(8).toString('hex')}`;
const embedder = createHashEmbedder();
const owner = { tenantId: 'acme', userId: 'u1' };

let ownerDb: Database;
let appDb: Database;
let schema: string;

function connectAs(user: string, pass: string): Database {
  const url = new URL(TEST_DATABASE_URL);
  url.username = user;
  url.password = encodeURIComponent(pass);
  return createPgDatabase({
    connectionString: url.toString(),
    options: `-c search_path=${schema},public`,
    max: 2,
  });
}

/** The SQLSTATE a statement run as the application role fails with (or 'ok'). */
async function codeOf(sql: string): Promise<string> {
  try {
    await appDb.exec(sql);
    return 'ok';
  } catch (err) {
    return (err as { code?: string }).code ?? String(err);
  }
}

beforeAll(async () => {
  ownerDb = await openTestDatabase('postgres');
  schema = (await ownerDb.query<{ s: string }>('SELECT current_schema() AS s')).rows[0]!.s;
  const result = await ensureAppRole(ownerDb, { group, login, password });
  expect(result.created).toEqual([group, login]);
  expect(result.schema).toBe(schema);
  appDb = connectAs(login, password);
});

afterAll(async () => {
  await appDb?.close();
  await ownerDb?.close();
  const admin = new Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  try {
    const database = quoteIdentifier(new URL(TEST_DATABASE_URL).pathname.slice(1));
    await admin.query(`REVOKE CONNECT ON DATABASE ${database} FROM ${quoteIdentifier(group)}`);
    for (const role of [login, group])
      await admin.query(`DROP ROLE IF EXISTS ${quoteIdentifier(role)}`);
  } finally {
    await admin.end();
  }
});

describe('the application role', () => {
  it('indexes, searches, keeps threads and deletes documents', async () => {
    // Ingestion runs in its tenant's scope (row-level security, migrations/0013).
    const [id] = await dbTenantScope('acme', () =>
      seedDocuments(appDb, embedder, [
        { tenantId: 'acme', key: 'acme/refunds', texts: ['Refunds are issued within 14 days.'] },
      ]),
    );
    const search = createSearch({ store: createSearchRepository(appDb), embedder });
    const { hits } = await search.search(owner, {
      queryText: 'refunds issued',
      topK: 5,
      mode: 'hybrid',
      filters: {},
    });
    expect(hits.map((h) => h.documentId)).toEqual([id]);
    // Through the search routines the owner installed: the role may run them, not change them.
    const { rows: routines } = await appDb.query<{ runs: boolean; owns: boolean }>(
      `SELECT has_function_privilege(p.oid, 'EXECUTE') AS runs,
              pg_has_role(p.proowner, 'USAGE') AS owns
       FROM pg_proc p WHERE starts_with(p.proname, $1)
         AND p.pronamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())`,
      [SEARCH_ROUTINE_PREFIX],
    );
    expect(routines.length).toBeGreaterThan(0);
    expect(routines.every((r) => r.runs && !r.owns)).toBe(true);

    const conversations = createConversationRepository(appDb);
    const request = { ...owner, allUsers: false };
    await runInDbScope(request, async () => {
      const thread = await conversations.createThread(owner, 'refunds');
      await conversations.addUserMessage(owner, thread.id, {
        id: '00000000-0000-4000-8000-000000000001',
        content: 'How long do refunds take?',
        embedding: (await embedder.embed(['How long do refunds take?']))[0]!,
      });
      expect(await conversations.messages(owner, thread.id, 10)).toHaveLength(1);
    });
    // Outside a request's scope the login sees none of it.
    expect((await appDb.query('SELECT id FROM threads')).rows).toEqual([]);
    expect((await appDb.query('SELECT id FROM documents')).rows).toEqual([]);

    const deleted = await dbTenantScope('acme', () =>
      createDocumentRepository(appDb).markDeleted('acme', 's3://bucket/acme/refunds'),
    );
    expect(deleted).toBe(true);
    // The keyword statistics kept by the chunk triggers were written as the application role.
    const { rows } = await ownerDb.query<{ n: string }>(
      "SELECT coalesce(sum(chunk_count), 0) AS n FROM tenant_stats WHERE tenant_id = 'acme'",
    );
    expect(Number(rows[0]!.n)).toBe(0);
  });

  it('cannot change the schema, truncate, or write the migration ledger', async () => {
    expect(await codeOf('CREATE TABLE intruder (id int)')).toBe('42501');
    expect(await codeOf(`CREATE TABLE ${schema}.intruder (id int)`)).toBe('42501');
    expect(await codeOf('DROP TABLE chunks')).toBe('42501');
    expect(await codeOf('ALTER TABLE documents ADD COLUMN x int')).toBe('42501');
    expect(await codeOf('CREATE INDEX intruder_idx ON chunks (id)')).toBe('42501');
    expect(await codeOf('TRUNCATE chunks')).toBe('42501');
    expect(await codeOf("INSERT INTO schema_migrations (version) VALUES ('9999')")).toBe('42501');
    expect(await codeOf('DELETE FROM schema_migrations')).toBe('42501');
    expect(await codeOf('UPDATE embedding_config SET dimension = 1')).toBe('42501');
    expect(
      await codeOf('CREATE FUNCTION intruder() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$'),
    ).toBe('42501');
    // Reading them is allowed (the embedding guard and status pages do).
    expect(await codeOf('SELECT * FROM schema_migrations')).toBe('ok');
    expect(await codeOf('SELECT * FROM embedding_config')).toBe('ok');
  });

  it('is idempotent, and leaves the password to rotation once the login exists', async () => {
    const again = await ensureAppRole(ownerDb, { group, login, password: 'ignored' });
    expect(again.created).toEqual([]);
    // The password is rotation's business once the role exists: the old one still works.
    expect(await codeOf('SELECT 1')).toBe('ok');
  });

  it('lets the login change its own password, as single-user rotation does', async () => {
    const self = connectAs(login, password);
    try {
      await self.exec(`ALTER ROLE ${quoteIdentifier(login)} WITH PASSWORD 'rotated-pw'`);
    } finally {
      await self.close();
    }
    const rotated = connectAs(login, 'rotated-pw');
    try {
      const count = () => rotated.query<{ n: string }>('SELECT count(*) AS n FROM documents');
      const { rows } = await dbTenantScope('acme', count);
      expect(Number(rows[0]!.n)).toBe(1);
      // Row-level security holds for the login itself: no scope, no rows.
      expect(Number((await count()).rows[0]!.n)).toBe(0);
    } finally {
      await rotated.close();
    }
    // A new connection with the old password is refused (a function then reads the secret again).
    const stale = connectAs(login, password);
    try {
      await expect(stale.query('SELECT 1')).rejects.toMatchObject({ code: '28P01' });
    } finally {
      await stale.close();
    }
  });

  it('refuses names that are not plain identifiers', async () => {
    await expect(
      ensureAppRole(ownerDb, { group, login: 'app"; DROP TABLE chunks; --', password }),
    ).rejects.toThrow(/not a plain identifier/);
  });
});
