/**
 * Row-level security (migrations/0013, docs/decisions/0135-row-level-security.md) on both
 * databases: statements that name no tenant at all, run as the application's role, see nothing
 * outside a request's scope and only the scope's rows inside one, for every table that holds a
 * `tenant_id`; a user's private documents and conversations stay theirs; writes into another
 * tenant are refused. The same reads as the owner (exempt) see every tenant, so each check can
 * fail.
 */
import { APP_GROUP_ROLE, ensureRequestRole } from '../../lambdas/adapters/postgres/app-role';
import type { Database } from '../../lambdas/adapters/postgres/database';
import { runInDbScope, type DbScope } from '../../lambdas/adapters/postgres/db-scope';
import { SEARCH_ROLE } from '../../lambdas/adapters/postgres/search-repository';
import { errorCode } from '../../lambdas/core/errors';
import { INGESTION_VERSION } from '../../lambdas/core/ingestion/version';
import { ENGINES, openTestDatabase } from '../support/databases';
import { createHashEmbedder } from '../support/hash-embedder';
import { seedDocuments } from '../support/seed';

const embedder = createHashEmbedder();

/** What each tenant table shows to user a1 of `acme` (tenant ids; null for built-in rows). */
const A1_SEES: Readonly<Record<string, readonly (string | null)[]>> = {
  documents: ['acme', 'global'],
  chunks: ['acme', 'global'],
  term_stats: ['acme'],
  tenant_stats: ['acme'],
  tenant_policies: ['acme'],
  threads: ['acme'],
  messages: ['acme'],
  feedback: ['acme'],
  prompt_configs: ['acme', null],
  training_consent: ['acme'],
};

const a1: DbScope = { tenantId: 'acme', userId: 'a1', allUsers: false };
const acmeAdmin: DbScope = { tenantId: 'acme', userId: 'boss', allUsers: true };

/** Conversations, feedback, consent, prompts and policies of three users in two tenants. */
async function seedConversations(db: Database): Promise<void> {
  for (const [tenant, user] of [
    ['acme', 'a1'],
    ['acme', 'a2'],
    ['beta', 'b1'],
  ] as const) {
    const { rows } = await db.query<{ id: string }>(
      `INSERT INTO threads (tenant_id, user_id, title) VALUES ($1, $2, $3) RETURNING id`,
      [tenant, user, `${user} thread`],
    );
    const thread = rows[0]!.id;
    const { rows: messages } = await db.query<{ id: string }>(
      `INSERT INTO messages (thread_id, tenant_id, user_id, role, content)
       VALUES ($1, $2, $3, 'user', $4) RETURNING id`,
      [thread, tenant, user, `${user} asks`],
    );
    await db.query(
      `INSERT INTO feedback (message_id, tenant_id, user_id, rating) VALUES ($1, $2, $3, 'positive')`,
      [messages[0]!.id, tenant, user],
    );
    await db.query(
      `INSERT INTO training_consent (tenant_id, user_id, opted_in) VALUES ($1, $2, true)`,
      [tenant, user === 'a1' ? '*' : user],
    );
  }
  for (const tenant of ['acme', 'beta']) {
    await db.query(`INSERT INTO tenant_policies (tenant_id, min_score) VALUES ($1, 0.1)`, [tenant]);
    await db.query(
      `INSERT INTO prompt_configs (tenant_id, name, profile, version, instructions, active)
       VALUES ($1, 'mine', 'general', 2, $2, false)`,
      [tenant, `${tenant} instructions`],
    );
  }
}

describe.each(ENGINES)('row-level security on %s', (engine) => {
  let db: Database;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    db = await openTestDatabase(engine);
    await ensureRequestRole(db, APP_GROUP_ROLE);
    const docs = [
      { tenantId: 'acme', key: 'acme/handbook', texts: ['The acme handbook.'] },
      {
        tenantId: 'acme',
        key: 'acme/a1-notes',
        texts: ['Notes of a1.'],
        visibility: 'user' as const,
        owner: 'a1',
      },
      {
        tenantId: 'acme',
        key: 'acme/a2-notes',
        texts: ['Notes of a2.'],
        visibility: 'user' as const,
        owner: 'a2',
      },
      { tenantId: 'beta', key: 'beta/handbook', texts: ['The beta handbook.'] },
      {
        tenantId: 'beta',
        key: 'beta/b1-notes',
        texts: ['Notes of b1.'],
        visibility: 'user' as const,
        owner: 'b1',
      },
      {
        tenantId: 'global',
        key: 'global/published',
        texts: ['Published for all.'],
        visibility: 'global' as const,
      },
      { tenantId: 'global', key: 'global/internal', texts: ['Internal to the publisher.'] },
    ];
    const seeded = await seedDocuments(db, embedder, docs);
    docs.forEach((d, i) => (ids[d.key] = seeded[i]!));
    await seedConversations(db);
  });
  afterAll(() => db?.close());

  /** `sql` as the application's role, with no scope: no tenant setting at all. */
  const asAppRole = <R extends object>(sql: string) =>
    db.transaction(async (tx) => (await tx.query<R>(sql)).rows, { role: APP_GROUP_ROLE });
  const tenantsOf = (rows: { tenant_id: string | null }[]) =>
    [...new Set(rows.map((r) => r.tenant_id))].sort((a, b) => String(a).localeCompare(String(b)));

  it('guards every table with a tenant_id, for a role that neither owns them nor bypasses', async () => {
    const { rows: tables } = await db.query<{ table: string; rls: boolean; owner: string }>(
      `SELECT c.relname AS table, c.relrowsecurity AS rls, pg_get_userbyid(c.relowner) AS owner
         FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
        WHERE c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())
          AND c.relkind = 'r' AND a.attname = 'tenant_id' AND NOT a.attisdropped`,
    );
    expect(tables.map((t) => t.table).sort()).toEqual(Object.keys(A1_SEES).sort());
    expect(tables.filter((t) => !t.rls)).toEqual([]);
    expect(tables.filter((t) => t.owner === APP_GROUP_ROLE)).toEqual([]);
    const { rows: roles } = await db.query<{ bypass: boolean; inherits_search: boolean }>(
      `SELECT rolbypassrls AS bypass, has_table_privilege($1, 'documents', 'SELECT')
                AND pg_has_role($1, $2, 'USAGE') AS inherits_search
         FROM pg_roles WHERE rolname = $1`,
      [APP_GROUP_ROLE, SEARCH_ROLE],
    );
    expect(roles).toEqual([{ bypass: false, inherits_search: false }]);
  });

  it.each(Object.keys(A1_SEES))(
    'an unscoped read of %s as the application role returns nothing outside a scope',
    async (table) => {
      // The control: the owner (exempt) sees rows, so the read itself is not empty.
      expect((await db.query(`SELECT tenant_id FROM ${table}`)).rows.length).toBeGreaterThan(0);
      expect(await asAppRole(`SELECT tenant_id FROM ${table}`)).toEqual([]);
    },
  );

  it.each(Object.keys(A1_SEES))(
    'an unscoped read of %s in a request of acme returns only what acme may see',
    async (table) => {
      const owner = await db.query<{ tenant_id: string | null }>(`SELECT tenant_id FROM ${table}`);
      expect(tenantsOf(owner.rows)).toContain('beta');
      const rows = await runInDbScope(
        a1,
        async () =>
          (await db.query<{ tenant_id: string | null }>(`SELECT tenant_id FROM ${table}`)).rows,
      );
      expect(rows.length).toBeGreaterThan(0);
      expect(tenantsOf(rows)).toEqual(
        [...A1_SEES[table]!].sort((a, b) => String(a).localeCompare(String(b))),
      );
    },
  );

  it("keeps another user's private documents, their chunks and conversations from a1", async () => {
    const seen = await runInDbScope(a1, async () => ({
      documents: (await db.query<{ id: string }>('SELECT id FROM documents')).rows.map((r) => r.id),
      chunks: (
        await db.query<{ d: string }>('SELECT DISTINCT document_id AS d FROM chunks')
      ).rows.map((r) => r.d),
      users: (
        await db.query<{ user_id: string }>(
          'SELECT user_id FROM threads UNION SELECT user_id FROM messages UNION SELECT user_id FROM feedback',
        )
      ).rows.map((r) => r.user_id),
    }));
    const expected = ['acme/handbook', 'acme/a1-notes', 'global/published'].map((k) => ids[k]);
    expect(seen.documents.sort()).toEqual([...expected].sort());
    expect(seen.chunks.sort()).toEqual([...expected].sort());
    expect(seen.users).toEqual(['a1']);
    // A tenant admin's requests and ingestion cover every user of the tenant, and still no other tenant.
    const admin = await runInDbScope(acmeAdmin, async () => ({
      documents: (
        await db.query<{ id: string }>("SELECT id FROM documents WHERE visibility = 'user'")
      ).rows,
      tenants: (await db.query<{ tenant_id: string }>('SELECT DISTINCT tenant_id FROM threads'))
        .rows,
    }));
    expect(admin.documents.map((r) => r.id).sort()).toEqual(
      [ids['acme/a1-notes'], ids['acme/a2-notes']].sort(),
    );
    expect(admin.tenants).toEqual([{ tenant_id: 'acme' }]);
  });

  it('answers a query that forgets its tenant predicate with the scope rows only', async () => {
    // A read of chunks by document id alone, with no tenant or visibility predicate.
    const byDocument = async (id: string) =>
      (await db.query('SELECT text FROM chunks WHERE document_id = $1::uuid', [id])).rows;
    const passage = (key: string) => runInDbScope(a1, () => byDocument(ids[key]!));
    expect(await passage('beta/b1-notes')).toEqual([]);
    expect(await passage('beta/handbook')).toEqual([]);
    expect(await passage('acme/a2-notes')).toEqual([]);
    expect(await passage('global/internal')).toEqual([]);
    expect(await passage('acme/handbook')).toHaveLength(1);
    expect(await passage('global/published')).toHaveLength(1);
    // The same read with no scope at all (the owner's session) finds another tenant's chunks.
    expect(await byDocument(ids['beta/b1-notes']!)).toHaveLength(1);
  });

  it('refuses writes into another tenant and leaves its rows untouched', async () => {
    const attempt = (sql: string) =>
      runInDbScope(a1, () => db.query(sql)).then(
        (r) => r.rowCount,
        (err: unknown) => errorCode(err),
      );
    expect(
      await attempt(
        "INSERT INTO documents (tenant_id, source_uri) VALUES ('beta', 's3://bucket/beta/planted')",
      ),
    ).toBe('42501');
    expect(
      await attempt(
        "INSERT INTO documents (tenant_id, source_uri, visibility, owner_user_id) VALUES ('acme', 's3://bucket/acme/planted', 'user', 'a2')",
      ),
    ).toBe('42501');
    expect(await attempt("UPDATE documents SET title = 'taken' WHERE tenant_id = 'beta'")).toBe(0);
    expect(await attempt("DELETE FROM chunks WHERE true AND tenant_id = 'beta'")).toBe(0);
    expect(await attempt("UPDATE threads SET title = 'renamed'")).toBe(1);
    const { rows } = await db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM chunks WHERE tenant_id = 'beta'",
    );
    expect(rows[0]!.n).toBe(2);
  });

  it('lets the sweep name documents an older ingestion version indexed, in every tenant, through its one function', async () => {
    const id = ids['beta/handbook']!;
    await db.query('UPDATE documents SET ingestion_version = 0 WHERE id = $1', [id]);
    try {
      const named = await db.transaction(
        async (tx) =>
          (
            await tx.query<{ tenant_id: string; source_uri: string }>(
              'SELECT tenant_id, source_uri FROM gw_outdated_documents($1, 3, 10)',
              [INGESTION_VERSION],
            )
          ).rows,
        { role: APP_GROUP_ROLE },
      );
      expect(named).toEqual([
        { tenant_id: 'beta', source_uri: expect.stringContaining('beta/handbook') },
      ]);
      const { rows } = await db.query<{ public: boolean }>(
        `SELECT has_function_privilege('public', 'gw_outdated_documents(integer, integer, integer)',
                'EXECUTE') AS public`,
      );
      expect(rows).toEqual([{ public: false }]);
    } finally {
      await db.query('UPDATE documents SET ingestion_version = $2 WHERE id = $1', [
        id,
        INGESTION_VERSION,
      ]);
    }
  });

  it('lets the lease sweep claim expired leases of every tenant through its one function', async () => {
    const id = ids['beta/handbook']!;
    await db.query(
      `UPDATE documents SET status = 'processing', lease_renewed_at = now() - interval '1 hour'
        WHERE id = $1`,
      [id],
    );
    try {
      const claimed = await db.transaction(
        async (tx) =>
          (
            await tx.query<{ tenant_id: string; source_uri: string }>(
              `SELECT tenant_id, source_uri
                 FROM gw_claim_expired_leases(now() - interval '15 minutes', 10)`,
            )
          ).rows,
        { role: APP_GROUP_ROLE },
      );
      expect(claimed).toEqual([
        { tenant_id: 'beta', source_uri: expect.stringContaining('beta/handbook') },
      ]);
      // The same rows stay out of the role's own reads.
      expect(await asAppRole(`SELECT id FROM documents WHERE status = 'processing'`)).toEqual([]);
      const { rows } = await db.query<{ public: boolean }>(
        `SELECT has_function_privilege('public', 'gw_claim_expired_leases(timestamptz, integer)',
                'EXECUTE') AS public`,
      );
      expect(rows).toEqual([{ public: false }]);
    } finally {
      await db.query(
        `UPDATE documents SET status = 'indexed', lease_renewed_at = NULL, lease_expiries = 0
          WHERE id = $1`,
        [id],
      );
    }
  });

  it('runs request statements as the application role, and the search statement as its own', async () => {
    const roles = await runInDbScope(a1, async () => ({
      request: (await db.query<{ r: string }>('SELECT current_user AS r')).rows[0]!.r,
      search: await db.transaction(
        async (tx) => (await tx.query<{ r: string }>('SELECT current_user AS r')).rows[0]!.r,
        { role: SEARCH_ROLE },
      ),
    }));
    expect(roles).toEqual({ request: APP_GROUP_ROLE, search: SEARCH_ROLE });
  });
});
