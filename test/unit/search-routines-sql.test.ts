/**
 * lambdas/adapters/postgres/search-routines.sql holds every statement the search routines install,
 * and the search statements planned on every search (an exact vector scan, a filter), so that a change to one is reviewed as a SQL diff. It
 * must be what the code generates.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { searchRoutines, searchRoutinesSql } from '../../lambdas/adapters/postgres/search-routines';

const COMMITTED = path.join(
  __dirname,
  '..',
  '..',
  'lambdas',
  'adapters',
  'postgres',
  'search-routines.sql',
);

describe('search-routines.sql', () => {
  it('is committed as generated (run `npm run sql` after changing a search statement)', () => {
    const committed = readFileSync(COMMITTED, 'utf8');
    const generated = searchRoutinesSql();
    if (committed !== generated) {
      // The first line that differs, so the failure says where without a 1,000-line diff.
      const a = committed.split('\n');
      const b = generated.split('\n');
      const line = a.findIndex((l, i) => l !== b[i]);
      throw new Error(
        `search-routines.sql is stale from line ${line + 1}: run \`npm run sql\` and commit it\n` +
          `  committed: ${a[line] ?? '(end of file)'}\n  generated: ${b[line] ?? '(end of file)'}`,
      );
    }
  });

  it('holds each routine once, every statement shape named above it', () => {
    const sql = searchRoutinesSql();
    const routines = searchRoutines();
    // Through HNSW, hybrid in 4 shapes (document check, lead) and vector in 1; keyword in 2 (its
    // document check); and the read before every search. Exact vector scans are planned on every
    // search, listed below the routines.
    expect(routines).toHaveLength(8);
    expect(sql.split('\n-- Not routines')[1]).toContain('exact vector scan');
    for (const r of routines) {
      expect(sql.split(`FUNCTION ${r.name}(`)).toHaveLength(2);
      expect(sql).toContain(`${r.shape.replace(/^/gm, '-- ')}\n${r.definition};\n`);
    }
  });
});
