/**
 * Filter indexes (migrations/0026, docs/decisions/0172-filter-indexes.md): metadata values that an
 * operator declares because filters ask for them, each served by a partial HNSW index over
 * exactly its chunks. Declared in one place per deployment (`filterIndexes` in cdk.json, which
 * the `migrate` function applies; `GROUNDWORK_FILTER_INDEXES` for `groundwork start`) and
 * reconciled here: a new value is added, a value no longer declared is removed.
 *
 * These statements run as the migrating role (the owner of the tables), never in a request.
 */
import * as z from '../../core/zod';
import { ConfigError } from '../../core/errors';
import { metadataEqualsSchema, type MetadataEquals } from '../../core/retrieval/filters';
import { dropIndex, ensureIndex } from './concurrent-index';
import type { Database } from './database';
import { TENANT_LEXEMES } from './search-keyword-arm';

/** One declared value: filters `equals` on its key with its value are served by its index. */
export type FilterIndexValue = MetadataEquals;

/** A declared value as the database holds it. */
export interface FilterIndexState extends FilterIndexValue {
  /** Every chunk's copy is filled, so its index may be built. */
  readonly ready: boolean;
  readonly indexName: string;
  /**
   * Its two indexes (graph and lexemes) are valid and the graph describes its value, so search
   * uses them (a model switch drops the graph with the old column).
   */
  readonly served: boolean;
}

/**
 * At most this many values: each is an HNSW graph that every write of a matching chunk updates
 * and that the buffer cache must hold.
 */
const MAX_FILTER_INDEXES = 20;

/** The declarations' schema (cdk.json's `filterIndexes`, `GROUNDWORK_FILTER_INDEXES`). */
const filterIndexesSchema = z
  .array(metadataEqualsSchema)
  .check(z.maxLength(MAX_FILTER_INDEXES, `at most ${MAX_FILTER_INDEXES} filter indexes`));

/**
 * Declarations from their JSON text (`[{"key": "category", "value": "manual"}]`, an environment
 * variable's value; none when unset or blank). `source` names it in the error.
 */
export function parseFilterIndexes(json: string | undefined, source: string): FilterIndexValue[] {
  if (json === undefined || json.trim() === '') return [];
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    throw new ConfigError(`${source} is not JSON: expected [{"key": "...", "value": ...}, ...]`);
  }
  const parsed = filterIndexesSchema.safeParse(raw);
  if (!parsed.success) throw new ConfigError(`${source}: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

/** The pair as a filter's containment test reads it. */
const pairJson = (v: FilterIndexValue): string => JSON.stringify({ [v.key]: v.value });

/** The declared values, with whether each is ready and its index valid. */
export async function listFilterIndexes(db: Database): Promise<FilterIndexState[]> {
  const { rows } = await db.query<{
    key: string;
    value: string | number | boolean;
    ready: boolean;
    index_name: string;
    served: boolean;
  }>(
    `SELECT f.key, f.value, f.ready, gw_filter_index_name(f.key, f.value) AS index_name,
            coalesce((SELECT bool_and(i.indisvalid) AND count(*) = 2
                             AND bool_or(obj_description(c.oid, 'pg_class') IS NOT NULL)
                        FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
                       WHERE c.relname IN (gw_filter_index_name(f.key, f.value),
                                           regexp_replace(gw_filter_index_name(f.key, f.value), '_hnsw$', '_lexemes'))
                         AND c.relnamespace = current_schema()::regnamespace), false) AS served
       FROM filter_indexes f ORDER BY f.key, f.value`,
  );
  return rows.map((r) => ({
    key: r.key,
    value: r.value,
    ready: r.ready,
    indexName: r.index_name,
    served: r.served,
  }));
}

/**
 * Declares `v` and builds its index; what is already done is skipped, so a run that stopped half
 * way is finished by the next. Returns the chunks whose copy the fill changed.
 *
 * 1. The declaration, written while no transaction writes chunks or documents (a share lock on
 *    both waits for those in flight): every write that follows runs the triggers with it.
 * 2. The copies of the chunks that existed before it: those of the documents holding the value,
 *    and those with metadata of their own (which may hold or override it).
 * 3. Ready.
 * 4. The partial index, built without blocking writes (`CONCURRENTLY`; one left invalid by an
 *    interrupted build is dropped and built again), then described with its value: from then on
 *    search adds the chunk's test, which the index serves.
 */
export async function addFilterIndex(db: Database, v: FilterIndexValue): Promise<number> {
  const pair = pairJson(v);
  const value = JSON.stringify(v.value);
  await db.transaction(async (tx) => {
    await tx.query('LOCK TABLE documents, chunks IN SHARE MODE');
    await tx.query(
      'INSERT INTO filter_indexes (key, value) VALUES ($1, $2::jsonb) ON CONFLICT DO NOTHING',
      [v.key, value],
    );
  });
  let changed = 0;
  const fill = async (from: string, params: unknown[]) => {
    const { rowCount } = await db.query(
      `UPDATE chunks c SET indexed_metadata = gw_indexed_metadata(d.metadata || c.metadata)
         FROM documents d
        WHERE d.id = c.document_id AND ${from}
          AND c.indexed_metadata IS DISTINCT FROM gw_indexed_metadata(d.metadata || c.metadata)`,
      params,
    );
    changed += rowCount;
  };
  // Each through its index: the documents' metadata (0010), the chunks' own (0008).
  await fill(`d.metadata @> $1::jsonb AND c.metadata = '{}'`, [pair]);
  await fill(`c.metadata <> '{}'`, []);
  await db.query('UPDATE filter_indexes SET ready = true WHERE key = $1 AND value = $2::jsonb', [
    v.key,
    value,
  ]);
  await buildIndex(db, v);
  return changed;
}

/** The value's two indexes: its graph (named by the migration) and its lexemes. */
function indexNames(graph: string): { graph: string; lexemes: string } {
  return { graph, lexemes: graph.replace(/_hnsw$/, '_lexemes') };
}

/**
 * Builds what is missing of the value's indexes, without blocking writes (`CONCURRENTLY`; one
 * left invalid by an interrupted build is dropped and built again): the lexeme index, a GIN
 * index of the value's chunks with the tenant-lexeme index's expression, for the keyword arm;
 * then the graph, for the vector arm; then the graph's description, from which search serves it.
 */
async function buildIndex(db: Database, v: FilterIndexValue): Promise<void> {
  const value = JSON.stringify(v.value);
  const { rows } = await db.query<{ graph: string; graph_ddl: string }>(
    `SELECT gw_filter_index_name($1, $2::jsonb) AS graph, gw_filter_index_ddl($1, $2::jsonb) AS graph_ddl`,
    [v.key, value],
  );
  const names = indexNames(rows[0]!.graph);
  const { rows: lexemes } = await db.query<{ ddl: string }>(
    `SELECT format('CREATE INDEX CONCURRENTLY IF NOT EXISTS %I ON chunks USING gin (${TENANT_LEXEMES()}) '
                   'WHERE indexed_metadata @> %L::jsonb', $1::text, $2::text) AS ddl`,
    [names.lexemes, pairJson(v)],
  );
  await ensureIndex(db, names.lexemes, lexemes[0]!.ddl);
  await ensureIndex(db, names.graph, rows[0]!.graph_ddl);
  await db.query('SELECT gw_filter_index_describe($1, $2::jsonb)', [v.key, value]);
}

/**
 * Removes `v`: its graph (search stops using it as soon as the graph is gone) and its lexeme
 * index, its declaration, then the copies that held it.
 */
async function removeFilterIndex(db: Database, v: FilterIndexValue): Promise<void> {
  const value = JSON.stringify(v.value);
  // The indexes go first: a run stopped after them leaves the declaration, which the next run
  // removes again; one stopped after the declaration would leave a graph search still used
  // while the triggers no longer kept its chunks' copies.
  const { rows } = await db.query<{ name: string }>(
    'SELECT gw_filter_index_name($1, $2::jsonb) AS name',
    [v.key, value],
  );
  const names = indexNames(rows[0]!.name);
  await dropIndex(db, names.graph);
  await dropIndex(db, names.lexemes);
  await db.query('DELETE FROM filter_indexes WHERE key = $1 AND value = $2::jsonb', [v.key, value]);
  await db.query(
    `UPDATE chunks c SET indexed_metadata = gw_indexed_metadata(d.metadata || c.metadata)
       FROM documents d WHERE d.id = c.document_id AND c.indexed_metadata @> $1::jsonb`,
    [pairJson(v)],
  );
}

/** What {@link reconcileFilterIndexes} changed. */
export interface FilterIndexChanges {
  readonly added: readonly FilterIndexValue[];
  readonly removed: readonly FilterIndexValue[];
  /** Declared values whose index was missing, invalid or undescribed and was built again. */
  readonly rebuilt: readonly FilterIndexValue[];
}

/**
 * Makes the database's declarations `declared`: adds the new ones (and finishes any not ready),
 * builds again an index that is missing (a model switch drops them with the old column), removes
 * the rest.
 */
export async function reconcileFilterIndexes(
  db: Database,
  declared: readonly FilterIndexValue[],
  log: (message: string, fields: Record<string, unknown>) => void = () => undefined,
): Promise<FilterIndexChanges> {
  const wanted = new Map(declared.map((v) => [pairJson(v), v]));
  const existing = new Map((await listFilterIndexes(db)).map((s) => [pairJson(s), s]));
  const added: FilterIndexValue[] = [];
  const removed: FilterIndexValue[] = [];
  const rebuilt: FilterIndexValue[] = [];
  for (const [pair, state] of existing) {
    if (wanted.has(pair)) continue;
    await removeFilterIndex(db, state);
    removed.push({ key: state.key, value: state.value });
    log('filter index removed', { key: state.key, value: state.value });
  }
  for (const [pair, v] of wanted) {
    const state = existing.get(pair);
    if (state?.ready && state.served) continue;
    const t0 = Date.now();
    // Ready with its index gone: only the index is missing. Otherwise the whole addition, which
    // skips what a run that stopped half way did.
    const rebuild = state?.ready === true;
    const chunks = rebuild ? (await buildIndex(db, v), 0) : await addFilterIndex(db, v);
    (rebuild ? rebuilt : added).push(v);
    log(rebuild ? 'filter index built again' : 'filter index added', {
      key: v.key,
      value: v.value,
      chunks,
      ms: Date.now() - t0,
    });
  }
  return { added, removed, rebuilt };
}
