import {
  isUndefinedFunction,
  normaliseSpace,
  routineCall,
  routineFor,
  routineName,
} from '../../lambdas/adapters/postgres/routines';
import {
  SEARCH_ROLE,
  SEARCH_ROUTINE_PREFIX,
} from '../../lambdas/adapters/postgres/search-repository';
import { buildSearchSql } from '../../lambdas/adapters/postgres/search-statement';
import { searchRoutines } from '../../lambdas/adapters/postgres/search-routines';
import type { SearchQuery } from '../../lambdas/core/retrieval/types';

const stmt = { text: 'SELECT $1::int + 1 AS a, $2::text AS b', types: ['int', 'text'] };

describe('routines', () => {
  it('are named by a hash of their whole definition, whatever its layout', () => {
    const name = routineName('gw_test_', stmt);
    expect(name).toMatch(/^gw_test_[0-9a-f]{16}$/);
    expect(routineName('gw_test_', { ...stmt })).toBe(name);
    expect(routineName('gw_test_', { ...stmt, types: ['bigint', 'text'] })).not.toBe(name);
    expect(routineName('gw_test_', { ...stmt, text: `${stmt.text} + 0` })).not.toBe(name);
    // Whitespace outside quotes is layout; inside a literal or a quoted name it is not.
    const laidOut = { ...stmt, text: '\n  SELECT $1::int  +  1 AS a,\n\t$2::text AS b ' };
    expect(routineName('gw_test_', laidOut)).toBe(name);
    const quoted = { text: 'SELECT \'a  b\' AS "x  y"', types: [] };
    const requoted = { text: 'SELECT  \'a b\'  AS "x  y"', types: [] };
    const renamed = { text: 'SELECT \'a  b\' AS "x y"', types: [] };
    expect(routineName('gw_test_', requoted)).not.toBe(routineName('gw_test_', quoted));
    expect(routineName('gw_test_', renamed)).not.toBe(routineName('gw_test_', quoted));
    expect(normaliseSpace("SELECT  'it''s  so'\n, 1")).toBe("SELECT 'it''s  so' , 1");
  });

  it('wrap the statement in a PL/pgSQL function with a generic plan', () => {
    const { name, definition } = routineFor('gw_test_', stmt);
    expect(definition).toContain(`CREATE OR REPLACE FUNCTION ${name}(int, text, text[], text[])`);
    expect(definition).toContain('RETURNS SETOF record LANGUAGE plpgsql');
    expect(definition).toContain('SET plan_cache_mode = force_generic_plan');
    // The settings first, as SET LOCAL, then the statement.
    expect(definition).toMatch(
      /PERFORM set_config\(s\.name, s\.value, true\) FROM unnest\(\$3, \$4\)[^;]*;\s+RETURN QUERY/,
    );
    expect(definition).toContain(`RETURN QUERY ${stmt.text};`);
    expect(
      routineCall(name, { ...stmt, values: [1, 'x'] }, 'a int, b text', {
        'hnsw.ef_search': 50,
        jit: 'off',
      }),
    ).toEqual({
      text: `SELECT * FROM ${name}($1::int, $2::text, $3::text[], $4::text[]) AS r(a int, b text)`,
      values: [1, 'x', ['hnsw.ef_search', 'jit'], ['50', 'off']],
    });
  });

  it('need every parameter typed, and a body that cannot end the quoting', () => {
    expect(() => routineFor('gw_test_', { text: 'SELECT $1', types: [undefined] })).toThrow(
      /parameter \$1 has no type/,
    );
    expect(() => routineFor('gw_test_', { text: "SELECT '$routine$'", types: [] })).toThrow(
      /\$routine\$/,
    );
  });

  it('recognise the server refusing an unknown function (SQLSTATE 42883) only', () => {
    expect(isUndefinedFunction(Object.assign(new Error('x'), { code: '42883' }))).toBe(true);
    expect(isUndefinedFunction(Object.assign(new Error('x'), { code: '42P01' }))).toBe(false);
    expect(isUndefinedFunction(new Error('42883'))).toBe(false);
    expect(isUndefinedFunction(null)).toBe(false);
  });
});

describe('search routines', () => {
  const query: SearchQuery = {
    text: 'refund',
    embedding: [0.1, 0.2],
    topK: 8,
    mode: 'hybrid',
    filters: {},
    minScore: 0,
    maxChunksPerSource: 3,
    allowedSourceTypes: null,
    fusion: { denseWeight: 0.15, candidates: 50 },
  };
  const scope = { tenantId: 'acme', userId: 'u1', globalTenants: ['global'] };
  const statistics = { chunks: 5000, tableChunks: 10_000, meanLength: 200, restrictedChunks: 0 };

  it('cover a search without filters, whatever its values', () => {
    const names = new Set(searchRoutines().map((r) => r.name));
    const sql = buildSearchSql(scope, query, statistics);
    expect(sql.reusable).toBe(true);
    expect(names.has(routineName(SEARCH_ROUTINE_PREFIX, sql, SEARCH_ROLE))).toBe(true);
    // Other values, the same statement.
    const other = buildSearchSql(
      { tenantId: 'other', userId: 'u2', globalTenants: [] },
      { ...query, text: 'shipping', topK: 3, fusion: { denseWeight: 0.5, candidates: 12 } },
      { ...statistics, meanLength: 80 },
    );
    expect(routineName(SEARCH_ROUTINE_PREFIX, other, SEARCH_ROLE)).toBe(
      routineName(SEARCH_ROUTINE_PREFIX, sql, SEARCH_ROLE),
    );
  });

  it('leave out a search with filters or a tenant policy on source types', () => {
    expect(
      buildSearchSql(scope, { ...query, filters: { lang: ['en'] } }, statistics).reusable,
    ).toBe(false);
    expect(
      buildSearchSql(scope, { ...query, allowedSourceTypes: ['pdf'] }, statistics).reusable,
    ).toBe(false);
  });
});
