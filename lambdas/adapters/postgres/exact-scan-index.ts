/**
 * The exact-scan index (docs/decisions/0173-exact-scan-index-as-an-option.md): a b-tree on
 * `chunks (tenant_id, document_id)` that also holds each chunk's id and vector, so that the exact
 * scan of a tenant below the plan rule's crossover (search-plan.ts) reads its vectors from the
 * index alone instead of visiting every chunk's row (its term counts and vector, 2.6 KB with
 * `halfvec`).
 * An operator switches it on for a large index (`exactScanIndex` in cdk.json, which the `migrate`
 * function applies; `GROUNDWORK_EXACT_SCAN_INDEX` for `groundwork start`); this module makes the
 * database match: built when wanted and missing (a model switch drops it with the old column),
 * dropped when not wanted. Search needs no change: the planner reads the index when it holds
 * every column the scan needs.
 *
 * These statements run as the migrating role (the owner of the tables), never in a request.
 */
import { dropIndex, ensureIndex, indexValidity } from './concurrent-index';
import type { Database } from './database';
import { embeddingColumns } from './embedding-guard';

export const EXACT_SCAN_INDEX = 'chunks_exact_scan_idx';

/**
 * The largest vector an entry may hold: a b-tree entry holds at most 2,704 bytes (a third of a
 * page), and the tenant id (at most 64 characters), the two ids and the entry's headers take up
 * to 120 of them (measured: a 1,340-dimension `halfvec` beside a 64-character tenant made an entry
 * of 2,800 bytes); 160 are kept for them.
 */
const MAX_VECTOR_BYTES = 2704 - 160;

/**
 * Whether a vector of `dimension` values of `type` fits an entry: pgvector stores 8 bytes of
 * header, then 2 (`halfvec`) or 4 (`vector`) per value.
 */
export function exactScanVectorFits(type: 'vector' | 'halfvec', dimension: number): boolean {
  return 8 + (type === 'halfvec' ? 2 : 4) * dimension <= MAX_VECTOR_BYTES;
}

/** What {@link reconcileExactScanIndex} found or did. */
export type ExactScanIndexChange =
  | 'built'
  | 'kept'
  | 'dropped'
  | 'absent'
  /** Wanted, but the live vectors are too large for an entry: searches go without it. */
  | 'too large';

/** Makes the exact-scan index exist exactly when `wanted` and the live vectors fit an entry. */
export async function reconcileExactScanIndex(
  db: Database,
  wanted: boolean,
  log: (message: string, fields: Record<string, unknown>) => void = () => undefined,
): Promise<ExactScanIndexChange> {
  const column = (await embeddingColumns(db)).find(
    (c) => c.table === 'chunks' && c.column === 'embedding',
  );
  const fits = column !== undefined && exactScanVectorFits(column.type, column.dimension);
  if (!wanted || !fits) {
    const existed = (await indexValidity(db, EXACT_SCAN_INDEX)) !== null;
    if (existed) await dropIndex(db, EXACT_SCAN_INDEX);
    if (wanted)
      log('exact-scan index not built: the vectors are too large for a b-tree entry', {
        type: column?.type,
        dimension: column?.dimension,
        maxBytes: MAX_VECTOR_BYTES,
      });
    else if (existed) log('exact-scan index dropped', {});
    return wanted ? 'too large' : existed ? 'dropped' : 'absent';
  }
  const t0 = Date.now();
  const built = await ensureIndex(
    db,
    EXACT_SCAN_INDEX,
    `CREATE INDEX CONCURRENTLY IF NOT EXISTS ${EXACT_SCAN_INDEX}
       ON chunks (tenant_id, document_id) INCLUDE (id, embedding)`,
  );
  if (built) log('exact-scan index built', { ms: Date.now() - t0 });
  return built ? 'built' : 'kept';
}
