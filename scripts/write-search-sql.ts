/**
 * Writes lambdas/adapters/postgres/search-routines.sql, every statement the search routines
 * install, from the code that builds them (`npm run sql`).
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { searchRoutinesSql } from '../lambdas/adapters/postgres/search-routines';

const SEARCH_SQL_PATH = path.join(
  __dirname,
  '..',
  'lambdas',
  'adapters',
  'postgres',
  'search-routines.sql',
);

writeFileSync(SEARCH_SQL_PATH, searchRoutinesSql());
console.log(`wrote ${path.relative(process.cwd(), SEARCH_SQL_PATH)}`);
