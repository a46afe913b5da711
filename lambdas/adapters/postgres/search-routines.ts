/**
 * The routines (routines.ts) that `migrate` installs for search: one for every search statement
 * without filters and one for the read that prepares every search. Kept apart from the
 * repository, which only calls them, so that the functions serving requests do not bundle this
 * enumeration.
 */
import type {
  ScopeStatistics,
  SearchMode,
  SearchQuery,
  SearchScope,
} from '../../core/retrieval/types';
import { routineFor, type Routine } from './routines';
import {
  buildSearchSql,
  prepareSql,
  SEARCH_ROLE,
  SEARCH_ROUTINE_PREFIX,
} from './search-repository';
import { SqlParams } from './sql-params';

/**
 * The three modes, each vector plan, the keyword arm's document check deferred or not, and
 * hybrid fusion with or without a dense lead: a statement without filters depends on nothing
 * else. With filters it depends on them, and is planned on every search.
 */
export function searchRoutines(): Routine[] {
  const scope: SearchScope = { tenantId: 'shape', userId: 'shape', globalTenants: [] };
  const lead = { minMargin: 0, maxKeywordCoverage: 0, denseWeight: 0 };
  const routines = new Map<string, Routine>();
  for (const mode of ['hybrid', 'vector', 'keyword'] as SearchMode[])
    for (const vectorIndex of [true, false])
      for (const defer of [true, false])
        for (const denseLead of [lead, undefined]) {
          // Statistics that make planSearch choose this vector plan and document check.
          const statistics: ScopeStatistics = {
            chunks: vectorIndex ? 1_000_000 : 1,
            tableChunks: 1_000_000,
            meanLength: 1,
            restrictedChunks: defer ? 0 : null,
          };
          const query: SearchQuery = {
            text: '',
            embedding: [0],
            topK: 1,
            mode,
            filters: {},
            minScore: 0,
            maxChunksPerSource: 1,
            allowedSourceTypes: null,
            fusion: { denseWeight: 0, candidates: 1, ...(denseLead ? { denseLead } : {}) },
          };
          const routine = routineFor(
            SEARCH_ROUTINE_PREFIX,
            buildSearchSql(scope, query, statistics),
            SEARCH_ROLE,
          );
          routines.set(routine.name, routine);
        }
  const p = new SqlParams();
  const preparation = routineFor(
    SEARCH_ROUTINE_PREFIX,
    { text: prepareSql(scope, p), types: p.types },
    SEARCH_ROLE,
  );
  routines.set(preparation.name, preparation);
  return [...routines.values()];
}
