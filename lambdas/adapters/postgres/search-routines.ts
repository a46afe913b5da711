/**
 * The routines (routines.ts) that `migrate` installs for search: one for every search statement
 * without filters and one for the read that prepares every search. Kept apart from the
 * repository, which only calls them, so that the functions serving requests do not bundle this
 * enumeration. `npm run sql` writes them all to search-routines.sql, checked in, so that a change
 * to a statement is reviewed as a SQL diff (test/unit/search-routines-sql.test.ts fails while the
 * file is stale).
 */
import type {
  ScopeStatistics,
  SearchMode,
  SearchQuery,
  SearchScope,
} from '../../core/retrieval/types';
import type { SearchFilters } from '../../core/retrieval/filters';
import { routineFor, type Routine } from './routines';
import { prepareSql } from './search-preparation';
import { SEARCH_ROLE, SEARCH_ROUTINE_PREFIX } from './search-repository';
import { buildSearchSql, type SearchStatement } from './search-statement';
import { SqlParams } from './sql-params';

/** A routine and the statement shape it serves, in words. */
export interface SearchRoutine extends Routine {
  readonly shape: string;
}

/**
 * The shapes that build one statement, in words: the choices they share, a choice they make
 * either way left out (the statement does not depend on it), or each shape on a line of its own.
 */
function describe(shapes: readonly (readonly string[])[]): string {
  const choices = shapes[0]!.map((_, i) => new Set(shapes.map((s) => s[i])));
  const combinations = choices.reduce((n, c) => n * c.size, 1);
  if (combinations !== shapes.length) return shapes.map((s) => s.join(', ')).join('\n');
  return choices
    .filter((c) => c.size === 1)
    .map((c) => [...c][0])
    .join(', ');
}

/** A statement shape: the choices its text depends on, and the statement. */
interface Shaped {
  readonly words: readonly string[];
  readonly statement: SearchStatement;
}

/**
 * The search statement in each shape: the three modes, each vector plan, the keyword arm's
 * document check deferred or not, and hybrid fusion with or without a dense lead. Without filters
 * its text depends on nothing else; with filters, on them too.
 */
function* searchShapes(filters: SearchFilters): Generator<Shaped> {
  const scope: SearchScope = { tenantId: 'shape', userId: 'shape', globalTenants: [] };
  const lead = { minMargin: 0, maxKeywordCoverage: 0, denseWeight: 0 };
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
            filters,
            minScore: 0,
            maxChunksPerSource: 1,
            allowedSourceTypes: null,
            fusion: { denseWeight: 0, candidates: 1, ...(denseLead ? { denseLead } : {}) },
          };
          yield {
            words: [
              `${mode} search`,
              vectorIndex ? 'HNSW vector scan' : 'exact vector scan',
              defer ? 'deferred document check' : 'document check per chunk',
              denseLead ? 'dense lead' : 'fixed dense weight',
            ],
            statement: buildSearchSql(scope, query, statistics),
          };
        }
}

/** Each distinct statement of {@link searchShapes}, once, with the shapes that build it. */
function distinctStatements(
  filters: SearchFilters,
): { statement: SearchStatement; shape: string }[] {
  const byText = new Map<string, { statement: SearchStatement; words: (readonly string[])[] }>();
  for (const { words, statement } of searchShapes(filters)) {
    const known = byText.get(statement.text);
    if (known) known.words.push(words);
    else byText.set(statement.text, { statement, words: [words] });
  }
  return [...byText.values()].map(({ statement, words }) => ({
    statement,
    shape: describe(words),
  }));
}

/**
 * Every reusable search statement (without filters, with no exact vector scan: see
 * `SearchStatement.reusable`), and the read before every search. Shapes that build the same
 * statement share its routine. In a stable order: the search statements, then the read.
 */
export function searchRoutines(): SearchRoutine[] {
  const scope: SearchScope = { tenantId: 'shape', userId: 'shape', globalTenants: [] };
  const p = new SqlParams();
  const preparation = routineFor(
    SEARCH_ROUTINE_PREFIX,
    { text: prepareSql(scope, p), types: p.types },
    SEARCH_ROLE,
  );
  return [
    ...distinctStatements({})
      .filter(({ statement }) => statement.reusable)
      .map(({ statement, shape }) => ({
        ...routineFor(SEARCH_ROUTINE_PREFIX, statement, SEARCH_ROLE),
        shape,
      })),
    { ...preparation, shape: 'the read before every search' },
  ];
}

/** The filter of the planned-per-search examples in search-routines.sql. */
const EXAMPLE_FILTERS: SearchFilters = { lang: ['en'] };

/**
 * search-routines.sql: every routine's definition, each after a comment naming the shapes it
 * serves, in {@link searchRoutines}' order; then, for review, the statements planned on every
 * search instead: those with an exact vector scan, and those with a filter (their text holds the
 * filters' predicates).
 */
export function searchRoutinesSql(): string {
  const comment = (text: string) => text.replace(/^/gm, '-- ');
  const routines = searchRoutines().map((r) => `${comment(r.shape)}\n${r.definition};\n`);
  const planned = [
    ...distinctStatements({}).filter(({ statement }) => !statement.reusable),
    ...distinctStatements(EXAMPLE_FILTERS),
  ].map(({ statement, shape }) => `${comment(shape)}\n${statement.text};\n`);
  return [
    '-- Generated by `npm run sql` from lambdas/adapters/postgres/search-routines.ts: do not edit.',
    '-- The routines `migrate` installs for search (lambdas/adapters/postgres/routines.ts).',
    '',
    routines.join('\n'),
    '-- Not routines, planned on every search: the statements with an exact vector scan, then those',
    '-- with a filter (here `lang`).',
    '',
    planned.join('\n'),
  ].join('\n');
}
