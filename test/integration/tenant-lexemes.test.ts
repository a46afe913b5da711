/**
 * The keyword arm's index (migrations/0009): every lexeme of a chunk is indexed under its
 * tenant, and a search asks for its own tenants' lexemes only, through a tsquery that quotes
 * them itself. Read through the index (sequential scans off), a tenant's lexemes find its own
 * chunks, all of them, and never another tenant's holding the same word.
 */
import { tsqueryLiteral } from '../../lambdas/adapters/postgres/search-keyword-arm';
import { ENGINES, seededTestDatabase } from '../support/databases';
import type { SeedDoc } from '../support/seed';

const DOCS: SeedDoc[] = [
  ...Array.from({ length: 3 }, (_, i): SeedDoc => ({
    tenantId: 'alpha',
    key: `alpha/doc-${i}`,
    texts: [`Zeppelin ${i} of the alpha fleet.`, `Hangar notes ${i} without the airship word.`],
  })),
  ...Array.from({ length: 4 }, (_, i): SeedDoc => ({
    tenantId: 'beta',
    key: `beta/doc-${i}`,
    texts: [`Zeppelin ${i} of the beta fleet.`],
  })),
];

describe.each(ENGINES)('tenant lexemes index on %s', (engine) => {
  const db = seededTestDatabase(engine, DOCS);

  /** The tenants of the chunks an index scan finds for these (tenant, lexeme) pairs. */
  const indexed = (pairs: [string, string][]) =>
    db().transaction(
      async (tx) => {
        const plan = await tx.query<{ 'QUERY PLAN': string }>(
          `EXPLAIN SELECT c.id FROM chunks c
            WHERE gw_tenant_lexemes(c.fts, c.tenant_id) @@ $1::tsquery`,
          [pairs.map(([t, l]) => `'${t}\u0001${l}'`).join(' | ')],
        );
        const { rows } = await tx.query<{ tenant_id: string }>(
          `SELECT c.tenant_id FROM chunks c
            WHERE gw_tenant_lexemes(c.fts, c.tenant_id) @@ $1::tsquery ORDER BY 1`,
          [pairs.map(([t, l]) => `'${t}\u0001${l}'`).join(' | ')],
        );
        return {
          usesIndex: plan.rows.some((r) => r['QUERY PLAN'].includes('chunks_tenant_lexemes_idx')),
          tenants: rows.map((r) => r.tenant_id),
        };
      },
      { enable_seqscan: 'off' },
    );

  it("finds every chunk of the tenant's lexeme and none of another tenant's", async () => {
    const alpha = await indexed([['alpha', 'zeppelin']]);
    expect(alpha.usesIndex).toBe(true);
    expect(alpha.tenants).toEqual(['alpha', 'alpha', 'alpha']);
    const both = await indexed([
      ['alpha', 'zeppelin'],
      ['beta', 'zeppelin'],
    ]);
    expect(both.tenants).toHaveLength(7);
    // The bare lexeme, as the previous index held it, is not in this one.
    expect((await indexed([['', 'zeppelin']])).tenants).toEqual([]);
  });

  it.each([
    ['a plain lexeme', 'zeppelin'],
    ['a quote', "o'neil"],
    ['a backslash', 'c:\\temp'],
    ['both, and a space', "it's a \\ path"],
  ])('quotes %s as one tsquery operand that matches it exactly', async (_, lexeme) => {
    const { rows } = await db().query<{ matches: boolean; other: boolean }>(
      `SELECT array_to_tsvector(ARRAY[$1::text]) @@ (${tsqueryLiteral('$1::text')})::tsquery AS matches,
              array_to_tsvector(ARRAY[$1::text || 'x']) @@ (${tsqueryLiteral('$1::text')})::tsquery AS other`,
      [lexeme],
    );
    expect(rows[0]).toEqual({ matches: true, other: false });
  });
});
