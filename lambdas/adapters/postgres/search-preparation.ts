/**
 * The read before every search (its own routine, search-routines.ts): the tenant's policy and the
 * scope's statistics that plan the search statement (search-plan.ts).
 */
import type { SearchPreparation, SearchScope } from '../../core/retrieval/types';
import { DEFAULT_SOURCE_TYPE_POLICY, type SourceTypeMode } from '../../core/retrieval/source-types';
import type { SqlParams } from './sql-params';

/**
 * At most this many documents not every caller sees are counted, on each side of the read (more
 * are not counted, and the keyword arm's document check is then not deferred: search-plan.ts).
 */
const RESTRICTED_DOCUMENTS_CAP = 2000;

/** {@link PreparationRow}'s columns, in `prepareSql`'s order, for its routine's call. */
export const PREPARATION_COLUMNS = `allowed_source_types text[], source_type_mode text, min_score real,
  max_chunks_per_source int, chunks float8, total_length float8, table_chunks float8,
  restricted_documents int, restricted_chunks float8, filter_indexes jsonb`;

export interface PreparationRow {
  allowed_source_types: string[] | null;
  /** Null when the tenant has no policy row. */
  source_type_mode: SourceTypeMode | null;
  min_score: number | null;
  max_chunks_per_source: number | null;
  chunks: number;
  total_length: number;
  table_chunks: number;
  restricted_documents: number;
  restricted_chunks: number;
  /**
   * The filter indexes' values (migrations/0026), `{key, value, chunks}` each: `chunks` is the
   * graph's count of chunks as of its build or last vacuum.
   */
  filter_indexes: { key: string; value: string | number | boolean; chunks: number }[];
}

/**
 * The read before a search, one round trip: the tenant's policy, the scope's chunks and their
 * total length (`tenant_stats`, one row per tenant, summed whole for the table's size, which is
 * cheaper than reading the planner's estimate while tenants are few; with tens of thousands of
 * tenants, measure again: docs/decisions/0107-hnsw-or-exact-scan.md), and the
 * chunks of the scope's documents that not every caller sees: in the caller's tenant, documents
 * other than indexed `tenant` ones (private documents, documents being re-indexed); in the
 * publishing tenants, documents other than indexed `global` ones. Each side reads at most the cap
 * of documents, through its partial index (migrations/0006). And the values of the filter indexes
 * (migrations/0026): those of the valid indexes on `chunks` that describe their value, read from
 * the catalog a moment before the statement that relies on their chunks' copies, never cached. An
 * index is built only once every chunk's copy is filled, and removed before the copies are
 * cleared; a model switch drops it with the old column, and search goes back to the whole graph.
 */
export function prepareSql(scope: SearchScope, p: SqlParams): string {
  const tenant = p.add(scope.tenantId, 'text');
  const globals = p.add([...scope.globalTenants], 'text[]');
  const tenants = p.add([scope.tenantId, ...scope.globalTenants], 'text[]');
  const cap = p.add(RESTRICTED_DOCUMENTS_CAP, 'int');
  return `SELECT pol.allowed_source_types, pol.source_type_mode, pol.min_score, pol.max_chunks_per_source,
           st.chunks, st.total_length, st.table_chunks, r.restricted_documents, r.restricted_chunks,
           (SELECT coalesce(jsonb_agg((obj_description(i.indexrelid, 'pg_class')::jsonb -> 'filterIndex')
                                      || jsonb_build_object('chunks', greatest(ic.reltuples, 0))), '[]')
              FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
             WHERE i.indrelid = 'chunks'::regclass AND i.indisvalid
               AND ic.relname LIKE 'chunks\\_filter\\_%'
               AND obj_description(i.indexrelid, 'pg_class') LIKE '{"filterIndex":%') AS filter_indexes
    FROM (SELECT coalesce(sum(chunk_count) FILTER (WHERE tenant_id = ANY(${tenants})), 0)::float8 AS chunks,
                 coalesce(sum(total_length) FILTER (WHERE tenant_id = ANY(${tenants})), 0)::float8 AS total_length,
                 coalesce(sum(chunk_count), 0)::float8 AS table_chunks
          FROM tenant_stats) st
    CROSS JOIN (
      SELECT count(*)::int AS restricted_documents, coalesce(sum(x.chunk_count), 0)::float8 AS restricted_chunks
      FROM ((SELECT d.chunk_count FROM documents d
             WHERE d.tenant_id = ${tenant} AND NOT (d.visibility = 'tenant' AND d.status = 'indexed')
             LIMIT ${cap})
            UNION ALL
            (SELECT d.chunk_count FROM documents d
             WHERE d.tenant_id = ANY(${globals}) AND NOT (d.visibility = 'global' AND d.status = 'indexed')
             LIMIT ${cap})) x) r
    LEFT JOIN tenant_policies pol ON pol.tenant_id = ${tenant}`;
}

/** The read's row as the policy and the statistics. */
export function toPreparation(row: PreparationRow): SearchPreparation {
  return {
    policy: {
      allowedSourceTypes: row.allowed_source_types ?? null,
      sourceTypeMode: row.source_type_mode ?? DEFAULT_SOURCE_TYPE_POLICY.mode,
      minScore: row.min_score ?? null,
      maxChunksPerSource: row.max_chunks_per_source ?? null,
    },
    statistics: {
      chunks: Number(row.chunks),
      tableChunks: Number(row.table_chunks),
      meanLength: Number(row.total_length) / Math.max(Number(row.chunks), 1),
      restrictedChunks:
        Number(row.restricted_documents) < RESTRICTED_DOCUMENTS_CAP
          ? Number(row.restricted_chunks)
          : null,
      filterIndexes: row.filter_indexes,
    },
  };
}
