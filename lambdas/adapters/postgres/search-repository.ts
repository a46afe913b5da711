/**
 * The search store over PostgreSQL: runs the read before a search (search-preparation.ts) and the
 * search statement (search-statement.ts), and maps their rows.
 *
 * Iterative index scans (`hnsw.iterative_scan`, pgvector 0.8) are enabled per transaction with
 * `SET LOCAL` so that selective filters still fill `top_k`; `hnsw.ef_search` is raised to the
 * candidate count, since the index never returns more rows than `ef_search` otherwise; and the
 * random page cost is set for SSD storage, or the planner sorts small tables instead of using
 * HNSW (`searchTransactionSettings`, search-plan.ts).
 *
 * A statement without filters, and the read before every search, run through routines whose
 * plans the server keeps (routines.ts, search-routines.ts); such a routine applies the same
 * settings for its call. Other statements are parsed and planned on every search.
 */
import type { SearchHit, SearchPreparation, SearchStore } from '../../core/retrieval/types';
import type { Database, LocalSettings } from './database';
import { isUndefinedFunction, routineCall, routineName, type RoutineStatement } from './routines';
import {
  DEFAULT_SEARCH_SQL,
  searchTransactionSettings,
  type SearchSqlOptions,
} from './search-plan';
import {
  PREPARATION_COLUMNS,
  prepareSql,
  toPreparation,
  type PreparationRow,
} from './search-preparation';
import { buildSearchSql, SEARCH_HIT_COLUMNS } from './search-statement';
import { SqlParams } from './sql-params';

/** A row of the search statement ({@link SEARCH_HIT_COLUMNS}). */
interface HitRow {
  chunk_id: string;
  document_id: string;
  chunk_index: number;
  text: string;
  cos: number;
  bm25: number;
  coverage: number;
  fused: number;
  source_type: string;
  title: string | null;
  source_uri: string;
  language: string;
  metadata: Record<string, unknown>;
  start_offset: number;
  end_offset: number;
  owner_user_id: string | null;
}

/** The names of the search statement's routines start with this. */
export const SEARCH_ROUTINE_PREFIX = 'gw_routine_search_';

/**
 * The role the search statement and its preparation run as (migrations/0013): row-level
 * security would keep the keyword arm and metadata filters from their GIN indexes, so these two
 * statements, which carry their scope's predicates (filter-sql.ts), read under a constant-true
 * policy instead (docs/decisions/0135-row-level-security.md).
 */
export const SEARCH_ROLE = 'groundwork_search';
const SEARCH_ROLE_SETTING: LocalSettings = { role: SEARCH_ROLE };

export function createSearchRepository(
  db: Database,
  options: Partial<SearchSqlOptions> = {},
): SearchStore {
  const cachedPlans = options.cachedPlans ?? DEFAULT_SEARCH_SQL.cachedPlans;
  // Routines found missing (a server not migrated by this release): their statements run
  // directly from then on.
  const missing = new Set<string>();
  // The routine of each statement text, which holds its parameters' types as casts: one entry
  // per statement shape without filters, and the read.
  const names = new Map<string, string>();
  const nameOf = (stmt: RoutineStatement): string => {
    const name = names.get(stmt.text) ?? routineName(SEARCH_ROUTINE_PREFIX, stmt, SEARCH_ROLE);
    names.set(stmt.text, name);
    return name;
  };
  /**
   * `stmt` through its routine, in one round trip (the routine applies `settings` for its call),
   * or `direct()` when plans are not cached or the server lacks the routine.
   */
  async function viaRoutine<R extends object>(
    stmt: { text: string; values: unknown[]; types: readonly (string | undefined)[] },
    columns: string,
    settings: LocalSettings,
    direct: () => Promise<R[]>,
  ): Promise<R[]> {
    const routine = cachedPlans ? nameOf(stmt) : null;
    if (!routine || missing.has(routine)) return direct();
    const call = routineCall(routine, stmt, columns, settings);
    try {
      // The routine switches to its role itself: no scope transaction around it.
      return (await db.call<R>(call.text, call.values)).rows;
    } catch (error) {
      if (!isUndefinedFunction(error)) throw error;
      missing.add(routine);
      return direct();
    }
  }
  return {
    async search(scope, query, statistics) {
      const stmt = buildSearchSql(scope, query, statistics, options);
      const settings = searchTransactionSettings(query.fusion.candidates, stmt.scanChunks);
      const direct = () =>
        db.transaction(async (tx) => (await tx.query<HitRow>(stmt.text, stmt.values)).rows, {
          ...settings,
          ...SEARCH_ROLE_SETTING,
        });
      const rows = stmt.reusable
        ? await viaRoutine(stmt, SEARCH_HIT_COLUMNS, settings, direct)
        : await direct();
      return rows.map((r): SearchHit => ({
        chunkId: r.chunk_id,
        documentId: r.document_id,
        chunkIndex: r.chunk_index,
        text: r.text,
        score: Number(r.cos),
        keywordScore: Number(r.bm25),
        keywordCoverage: Number(r.coverage),
        fusedScore: Number(r.fused),
        sourceType: r.source_type,
        title: r.title,
        sourceUri: r.source_uri,
        language: r.language,
        metadata: r.metadata,
        startOffset: r.start_offset,
        endOffset: r.end_offset,
        ownerUserId: r.owner_user_id,
      }));
    },
    async prepare(scope): Promise<SearchPreparation> {
      const p = new SqlParams();
      const stmt = { text: prepareSql(scope, p), values: p.values, types: p.types };
      const rows = await viaRoutine<PreparationRow>(stmt, PREPARATION_COLUMNS, {}, () =>
        db.transaction(
          async (tx) => (await tx.query<PreparationRow>(stmt.text, stmt.values)).rows,
          SEARCH_ROLE_SETTING,
        ),
      );
      return toPreparation(rows[0]!);
    },
  };
}
