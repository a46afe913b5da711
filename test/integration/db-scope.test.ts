/**
 * The request scope reaches the database exactly as the token said, whatever the user id holds:
 * quotes and backslashes (a `sub` is any string) cannot end the literal the scope is sent in,
 * with `standard_conforming_strings` on or off.
 */
import { APP_GROUP_ROLE, ensureRequestRole } from '../../lambdas/adapters/postgres/app-role';
import type { Database } from '../../lambdas/adapters/postgres/database';
import { runInDbScope } from '../../lambdas/adapters/postgres/db-scope';
import { ENGINES, openTestDatabase } from '../support/databases';

const HOSTILE_USER_IDS = [
  "o'brien",
  'back\\slash',
  "x\\'; SELECT set_config('groundwork.tenant_id', 'other', true); --",
  "\\\\'' OR true --",
];

describe.each(ENGINES)('the database scope on %s', (engine) => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase(engine);
    await ensureRequestRole(db, APP_GROUP_ROLE);
  });
  afterAll(() => db?.close());

  const settings = (userId: string) =>
    runInDbScope({ tenantId: 'tenant-a', userId, allUsers: false }, () =>
      db.query<{ tenant: string; user: string }>(
        "SELECT current_setting('groundwork.tenant_id') AS tenant, current_setting('groundwork.user_id') AS user",
      ),
    );

  it.each(HOSTILE_USER_IDS)(
    'sends the user id %j as it is, and the tenant unchanged',
    async (id) => {
      const { rows } = await settings(id);
      expect(rows).toEqual([{ tenant: 'tenant-a', user: id }]);
    },
  );

  if (engine === 'pglite') {
    // PGlite has one session, so a session setting applies to every statement after it.
    it('reads the same with standard_conforming_strings off', async () => {
      await db.query('SET standard_conforming_strings = off');
      try {
        for (const id of HOSTILE_USER_IDS) {
          const { rows } = await settings(id);
          expect(rows).toEqual([{ tenant: 'tenant-a', user: id }]);
        }
      } finally {
        await db.query('SET standard_conforming_strings = on');
      }
    });
  }
});
