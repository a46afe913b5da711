/**
 * Threads whose ids the caller names (openThread): created on first use, the same thread again
 * for its owner, and never another owner's, in the request's row-level-security scope, on both
 * databases.
 */
import { APP_GROUP_ROLE, ensureRequestRole } from '../../lambdas/adapters/postgres/app-role';
import { createConversationRepository } from '../../lambdas/adapters/postgres/conversation-repository';
import type { Database } from '../../lambdas/adapters/postgres/database';
import { runInDbScope } from '../../lambdas/adapters/postgres/db-scope';
import type { Owner } from '../../lambdas/core/answer/conversations';
import { ENGINES, openTestDatabase } from '../support/databases';

const ID = '3f0c6a52-7d1e-4c3b-9a55-0b6f1e2d4c01';

describe.each(ENGINES)('threads named by their caller on %s', (engine) => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase(engine);
    await ensureRequestRole(db, APP_GROUP_ROLE);
  });
  afterAll(() => db?.close());

  const open = (owner: Owner, id: string, title = 'refunds') =>
    runInDbScope({ ...owner, allUsers: false }, () =>
      createConversationRepository(db).openThread(owner, id, title),
    );
  const alice = { tenantId: 'acme', userId: 'alice' };

  it('creates the thread on first use and returns the same one afterwards', async () => {
    const created = await open(alice, ID, 'first title');
    expect(created).toMatchObject({ id: ID, title: 'first title', status: 'active' });
    const again = await open(alice, ID, 'second title');
    expect(again).toMatchObject({ id: ID, title: 'first title' });
    const { rows } = await db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM threads WHERE id = $1',
      [ID],
    );
    expect(rows[0]?.n).toBe(1);
  });

  it("never opens another user's or another tenant's thread, and leaves it as it was", async () => {
    expect(await open({ tenantId: 'acme', userId: 'bob' }, ID)).toBeNull();
    expect(await open({ tenantId: 'globex', userId: 'alice' }, ID)).toBeNull();
    const { rows } = await db.query<{ user_id: string; tenant_id: string }>(
      'SELECT tenant_id, user_id FROM threads WHERE id = $1',
      [ID],
    );
    expect(rows).toEqual([{ tenant_id: 'acme', user_id: 'alice' }]);
  });

  it('opens nothing for an id that is not a UUID', async () => {
    expect(await open(alice, 'abc-123')).toBeNull();
  });
});
