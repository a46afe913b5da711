/**
 * Transaction settings on both databases: `SET LOCAL` for one transaction (the search sets
 * pgvector's scan parameters this way), never left on the pooled session, and refused unless
 * plain.
 */
import type { Database } from '../../lambdas/adapters/postgres/database';
import { ENGINES, openTestDatabase } from '../support/databases';

describe.each(ENGINES)('transaction settings on %s', (engine) => {
  let db: Database;

  beforeAll(async () => {
    db = await openTestDatabase(engine);
  });
  afterAll(() => db?.close());

  const efSearch = async (q: { query: Database['query'] }) =>
    (await q.query<{ v: string }>(`SELECT current_setting('hnsw.ef_search') AS v`)).rows[0]!.v;

  it('applies them inside the transaction only, committed or rolled back', async () => {
    const before = await efSearch(db);
    const inside = await db.transaction(
      async (tx) => [
        await efSearch(tx),
        (await tx.query<{ v: string }>(`SELECT current_setting('hnsw.iterative_scan') AS v`))
          .rows[0]!.v,
      ],
      { 'hnsw.ef_search': 77, 'hnsw.iterative_scan': 'relaxed_order' },
    );
    expect(inside).toEqual(['77', 'relaxed_order']);
    await expect(
      db.transaction(
        async () => {
          throw new Error('boom');
        },
        { 'hnsw.ef_search': 88 },
      ),
    ).rejects.toThrow('boom');
    // Every pooled connection is back to its connection-level value (SET LOCAL ends with the transaction).
    for (let i = 0; i < 6; i++) expect(await efSearch(db)).toBe(before);
    expect(before).not.toBe('77');
  });

  it('refuses a name or value that is not plain, before running anything', async () => {
    let ran = false;
    const attempt = (settings: Record<string, string>) =>
      db.transaction(async () => {
        ran = true;
      }, settings);
    await expect(attempt({ 'hnsw.ef_search; DROP TABLE chunks': '1' })).rejects.toThrow(
      'not a plain setting',
    );
    await expect(attempt({ 'hnsw.ef_search': "40'; DROP TABLE chunks; --" })).rejects.toThrow(
      'not a plain setting',
    );
    expect(ran).toBe(false);
  });
});
