import { loadMigrations, migrate, type Migration } from '../../lambdas/adapters/postgres/migrate';
import { ENGINES, openTestDatabase } from '../support/databases';

describe.each(ENGINES)('migration runner on %s', (engine) => {
  it('applies every migration once, records it, and is a no-op the second time', async () => {
    const db = await openTestDatabase(engine, { migrate: false });
    try {
      const all = await loadMigrations();
      const first = await migrate(db);
      expect(first.applied).toEqual(all.map((m) => m.version));
      const second = await migrate(db);
      expect(second.applied).toEqual([]);
      const { rows } = await db.query<{ version: string }>(
        'SELECT version FROM schema_migrations ORDER BY version',
      );
      expect(rows.map((r) => r.version)).toEqual(all.map((m) => m.version));
      const tables = await db.query<{ table_name: string }>(
        `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY 1`,
      );
      expect(tables.rows.map((r) => r.table_name)).toEqual(
        expect.arrayContaining(['chunks', 'documents', 'embedding_config', 'schema_migrations']),
      );
    } finally {
      await db.close();
    }
  });

  it('refuses to run when an applied migration was edited', async () => {
    const db = await openTestDatabase(engine, { migrate: false });
    try {
      const all = await loadMigrations();
      await migrate(db, all);
      const edited: Migration[] = all.map((m, i) => (i === 0 ? { ...m, checksum: 'changed' } : m));
      await expect(migrate(db, edited)).rejects.toThrow(/was changed after it was applied/);
    } finally {
      await db.close();
    }
  });

  it('rolls a failing migration back entirely and records nothing for it', async () => {
    const db = await openTestDatabase(engine);
    try {
      const bad: Migration = {
        version: '9999',
        name: 'broken',
        sql: 'CREATE TABLE half_done (id int); SELECT * FROM no_such_table;',
        checksum: 'x',
      };
      await expect(migrate(db, [...(await loadMigrations()), bad])).rejects.toThrow();
      const { rows } = await db.query(`SELECT to_regclass('half_done') AS t`);
      expect(rows[0]).toEqual({ t: null });
      const recorded = await db.query(`SELECT 1 FROM schema_migrations WHERE version = '9999'`);
      expect(recorded.rows).toHaveLength(0);
    } finally {
      await db.close();
    }
  });
});

describe('migration runner on postgres with concurrent runners', () => {
  it('lets two runners start at once without racing (each file applied exactly once)', async () => {
    const db = await openTestDatabase('postgres', { migrate: false });
    try {
      const results = await Promise.all([migrate(db), migrate(db), migrate(db)]);
      const applied = results.flatMap((r) => r.applied).sort();
      const all = (await loadMigrations()).map((m) => m.version);
      expect(applied).toEqual(all);
      const { rows } = await db.query<{ n: string }>(
        'SELECT count(*)::text AS n FROM schema_migrations',
      );
      expect(rows[0]?.n).toBe(String(all.length));
    } finally {
      await db.close();
    }
  });
});
