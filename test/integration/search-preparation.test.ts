/**
 * The read before a search (SearchStore.prepare) on both databases: the tenant's policy and the
 * scope's statistics in one statement, as the search statement is then planned with them.
 */
import { createSearchRepository } from '../../lambdas/adapters/postgres/search-repository';
import { ENGINES, seededTestDatabase } from '../support/databases';
import type { SeedDoc } from '../support/seed';

const DOCS: SeedDoc[] = [
  { tenantId: 'acme', key: 'acme/shared', texts: ['One two three.', 'Four five.'] },
  {
    tenantId: 'acme',
    key: 'acme/private',
    visibility: 'user',
    owner: 'someone',
    texts: ['Six seven eight nine.'],
  },
  // The publishing tenant: one published document, one internal to it.
  {
    tenantId: 'library',
    key: 'library/published',
    visibility: 'global',
    texts: ['Ten eleven.'],
  },
  { tenantId: 'library', key: 'library/internal', texts: ['Twelve.', 'Thirteen.', 'Fourteen.'] },
  // Another tenant: counted in the table's size only.
  { tenantId: 'other', key: 'other/doc', texts: ['Fifteen sixteen.'] },
];

describe.each(ENGINES)('search preparation on %s', (engine) => {
  const db = seededTestDatabase(engine, DOCS);

  const lengths = async (tenants: string[]) => {
    const { rows } = await db().query<{ n: number }>(
      'SELECT coalesce(sum(fts_length), 0)::float8 AS n FROM chunks WHERE tenant_id = ANY($1::text[])',
      [tenants],
    );
    return Number(rows[0]!.n);
  };

  it("reads the scope's statistics: its chunks, the table's, their length, the restricted ones", async () => {
    const repo = createSearchRepository(db());
    const { policy, statistics } = await repo.prepare({
      tenantId: 'acme',
      userId: 'u1',
      globalTenants: ['library'],
    });
    expect(policy).toEqual({
      allowedSourceTypes: null,
      sourceTypeMode: 'permissive',
      minScore: null,
      maxChunksPerSource: null,
    });
    expect(statistics.chunks).toBe(3 + 4);
    expect(statistics.tableChunks).toBe(3 + 4 + 1);
    expect(statistics.meanLength).toBeCloseTo((await lengths(['acme', 'library'])) / 7, 9);
    // acme's private document (1 chunk) and library's internal one (3 chunks).
    expect(statistics.restrictedChunks).toBe(4);

    const alone = await repo.prepare({ tenantId: 'other', userId: 'u1', globalTenants: [] });
    expect(alone.statistics).toMatchObject({ chunks: 1, tableChunks: 8, restrictedChunks: 0 });
    const empty = await repo.prepare({ tenantId: 'nobody', userId: 'u1', globalTenants: [] });
    expect(empty.statistics).toEqual({
      filterIndexes: [],
      chunks: 0,
      tableChunks: 8,
      meanLength: 0,
      restrictedChunks: 0,
    });
  });

  it("reads the tenant's policy with them", async () => {
    await db().query(
      `INSERT INTO tenant_policies (tenant_id, allowed_source_types, source_type_mode, min_score,
                                    max_chunks_per_source)
       VALUES ('acme', ARRAY['doc', 'faq'], 'strict', 0.25, 2)`,
    );
    try {
      const { policy } = await createSearchRepository(db()).prepare({
        tenantId: 'acme',
        userId: 'u1',
        globalTenants: ['library'],
      });
      expect(policy).toEqual({
        allowedSourceTypes: ['doc', 'faq'],
        sourceTypeMode: 'strict',
        minScore: 0.25,
        maxChunksPerSource: 2,
      });
    } finally {
      await db().query(`DELETE FROM tenant_policies WHERE tenant_id = 'acme'`);
    }
  });
});
