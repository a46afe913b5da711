import {
  CHUNK_METADATA,
  compileFilters,
  DOCUMENT_METADATA,
  filtersSql,
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
