/**
 * `equals` and `in` metadata filters compile to containment (filter-sql.ts), on both databases:
 * they select exactly the documents whose key holds the value (not an array or object holding
 * it, a number whatever its notation), and the documents' GIN index (migrations/0010) can serve
 * them, so a filtered search sizes its scope from the matching documents alone.
 */
import { DOCUMENT_METADATA, metadataFilterSql } from '../../lambdas/adapters/postgres/filter-sql';
import { SqlParams } from '../../lambdas/adapters/postgres/sql-params';
import type { MetadataFilter } from '../../lambdas/core/retrieval/filters';
import { ENGINES, seededTestDatabase } from '../support/databases';
import type { SeedDoc } from '../support/seed';

const SHAPES: Record<string, Record<string, unknown>> = {
  string: { team: 'blue' },
  array: { team: ['blue', 'red'] },
  object: { team: { blue: true } },
  otherString: { team: 'red' },
  integer: { level: 1 },
  decimal: { level: 1.0 },
  numericString: { level: '1' },
  boolean: { flag: true },
  none: {},
};
const DOCS: SeedDoc[] = Object.entries(SHAPES).map(([name, metadata]) => ({
  tenantId: 'shapes',
  key: name,
  texts: [`Document ${name}.`],
  metadata,
}));

describe.each(ENGINES)('metadata containment on %s', (engine) => {
  const db = seededTestDatabase(engine, DOCS);

  /** The documents the filter selects, and whether the GIN index served it (seq scans off). */
  const select = (filter: MetadataFilter) =>
    db().transaction(
      async (tx) => {
        const p = new SqlParams();
        const where = metadataFilterSql(filter, p, DOCUMENT_METADATA);
        // The suite's database holds this tenant alone, so the filter is the whole predicate and
        // the metadata index the only index that can serve it.
        const sql = `SELECT d.source_uri FROM documents d WHERE ${where}`;
        const plan = await tx.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`, p.values);
        const { rows } = await tx.query<{ source_uri: string }>(`${sql} ORDER BY 1`, p.values);
        return {
          keys: rows.map((r) => r.source_uri.replace('s3://bucket/', '')),
          usesIndex: plan.rows.some((r) => r['QUERY PLAN'].includes('documents_metadata_idx')),
        };
      },
      { enable_seqscan: 'off' },
    );

  it.each<[string, MetadataFilter, string[]]>([
    ['a string', { equals: { key: 'team', value: 'blue' } }, ['string']],
    ['a number in either notation', { equals: { key: 'level', value: 1 } }, ['decimal', 'integer']],
    ['a boolean', { equals: { key: 'flag', value: true } }, ['boolean']],
    [
      'any of several values',
      { in: { key: 'team', value: ['blue', 'red'] } },
      ['otherString', 'string'],
    ],
    ['any of mixed types', { in: { key: 'level', value: ['1', 2] } }, ['numericString']],
  ])('selects exactly the documents holding %s, through the index', async (_, filter, want) => {
    const got = await select(filter);
    expect(got.keys).toEqual(want);
    expect(got.usesIndex).toBe(true);
  });

  it('keeps the negations and nesting around them', async () => {
    const got = await select({
      andAll: [
        { in: { key: 'team', value: ['blue', 'red'] } },
        { notEquals: { key: 'team', value: 'red' } },
      ],
    });
    expect(got.keys).toEqual(['string']);
    expect((await select({ notIn: { key: 'team', value: ['blue'] } })).keys).toEqual([
      'array',
      'boolean',
      'decimal',
      'integer',
      'none',
      'numericString',
      'object',
      'otherString',
    ]);
  });
});
