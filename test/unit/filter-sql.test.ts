import {
  CHUNK_METADATA,
  compileFilters,
  DOCUMENT_METADATA,
  filtersSql,
  indexedFilterSql,
} from '../../lambdas/adapters/postgres/filter-sql';
import { SqlParams } from '../../lambdas/adapters/postgres/sql-params';
import { searchFiltersSchema, type SearchFilters } from '../../lambdas/core/retrieval/filters';

/** The largest metadata filter the schema accepts: 100 operators, 5 levels deep, `in` of 100. */
const atTheCaps = (): SearchFilters => {
  const leaf = (i: number) =>
    i % 2 === 0
      ? { in: { key: `k${i}`, value: Array.from({ length: 100 }, (_, v) => v) } }
      : { greaterThan: { key: `k${i}`, value: i } };
  let n = 0;
  const group = (size: number) => ({ andAll: Array.from({ length: size }, () => leaf(n++)) });
  const metadata = {
    orAll: [{ andAll: [{ orAll: [group(16)] }] }, group(19), group(19), group(19), group(19)],
  };
  return searchFiltersSchema.parse({
    source_type: 'doc',
    date_from: '2020-01-01',
    metadata,
  });
};

describe('filters compiled once', () => {
  it('adds their parameters once and renders the same predicate over documents and chunks', () => {
    const filters = atTheCaps();
    const p = new SqlParams();
    const compiled = compileFilters(filters, ['doc', 'faq'], p);
    const count = p.values.length;

    const overChunks = compiled.sql();
    const overDocuments = compiled.sql(DOCUMENT_METADATA);

    // Rendering adds nothing, and is what compiling for each target separately would give.
    expect(p.values).toHaveLength(count);
    expect(compiled.filtered).toBe(true);
    expect(overChunks).toBe(filtersSql(filters, ['doc', 'faq'], new SqlParams(), CHUNK_METADATA));
    expect(overDocuments).toBe(
      filtersSql(filters, ['doc', 'faq'], new SqlParams(), DOCUMENT_METADATA),
    );
    expect(overDocuments).not.toContain(CHUNK_METADATA);
    // Each operator costs at most two parameters: far below the protocol's 65,535.
    expect(count).toBeLessThanOrEqual(2 * 100 + 3);
  });

  it('is unfiltered without filters', () => {
    const compiled = compileFilters({}, null, new SqlParams());

    expect(compiled.filtered).toBe(false);
    expect(compiled.sql()).toBe('true');
  });
});

describe('a filter served by a filter index', () => {
  const BLUE = { key: 'team', value: 'blue' };
  const served = [{ ...BLUE, chunks: 200 }];
  const render = (filters: SearchFilters) => {
    const p = new SqlParams();
    const indexed = indexedFilterSql(filters, served, p)!;
    return { indexed, rest: filtersSql(indexed.rest, null, p), values: p.values };
  };

  it("tests the value on the chunk's copy in place of its metadata", () => {
    const { indexed, rest, values } = render({ source_type: ['doc'], metadata: { equals: BLUE } });

    expect(indexed.sql).toBe('c.indexed_metadata @> $1::jsonb');
    expect(indexed.chunks).toBe(200);
    expect(indexed.rest).toEqual({ source_type: ['doc'] });
    expect(rest).not.toContain(CHUNK_METADATA);
    expect(values).toEqual(['{"team":"blue"}', ['doc']]);
  });

  it('keeps every other test of the filter, also those of the same key', () => {
    const other = { notEquals: { key: 'team', value: 'red' } };
    const { indexed } = render({
      metadata: { andAll: [{ equals: BLUE }, other, { andAll: [{ equals: BLUE }] }] },
    });

    expect(indexed.rest).toEqual({ metadata: { andAll: [other] } });
  });

  it('serves nothing where the value is not required, or not declared', () => {
    const p = new SqlParams();
    const red = { equals: { key: 'team', value: 'red' } };

    expect(
      indexedFilterSql({ metadata: { orAll: [{ equals: BLUE }, red] } }, served, p),
    ).toBeNull();
    expect(indexedFilterSql({ metadata: { notEquals: BLUE } }, served, p)).toBeNull();
    expect(indexedFilterSql({ metadata: red }, served, p)).toBeNull();
    expect(indexedFilterSql({ metadata: { equals: BLUE } }, [], p)).toBeNull();
    expect(p.values).toEqual([]);
  });
});
