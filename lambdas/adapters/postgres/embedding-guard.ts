/**
 * The index's embedding model at start-up. `reconcileEmbeddingModel` (the embedded default's
 * start and the `migrate` Lambda) records the configured model on a fresh index and begins a
 * switch when another one is configured; `ensureEmbeddingModel` only compares, and fails with
 * instructions when they differ.
 *
 * The migrations declare the embedding columns with 512 dimensions (`chunks.embedding` as
 * `halfvec`, migrations/0024; `messages.embedding` as `vector`). On a fresh index (no model
 * recorded, no vector stored), the first start fits those columns to the configured model's
 * dimension (256 or 1024 for Titan v2, say), with their HNSW indexes rebuilt by PostgreSQL, so
 * any supported dimension deploys from the same migrations.
 */
import { ConfigError } from '../../core/errors';
import type { ModelRecord, RecordedModels } from '../../core/embedding/models';
import type { Database, Queryable } from './database';
import { readModels } from './model-switch-store';
import { quoteIdentifier } from './sql-params';

export interface EmbeddingModelRef {
  readonly modelId: string;
  readonly dimension: number;
}

/** Throws a ConfigError (at start-up) when the stored vectors were made by another model. */
export async function ensureEmbeddingModel(db: Database, model: EmbeddingModelRef): Promise<void> {
  const { rows } = await db.query<{ model_id: string; dimension: number }>(
    'SELECT model_id, dimension FROM embedding_config WHERE singleton',
  );
  const stored = rows[0];
  if (!stored) {
    await db.transaction(async (tx) => {
      // Two processes starting on a fresh index: one fits and records, the other then compares.
      await tx.query("SELECT pg_advisory_xact_lock(hashtext('groundwork:embedding-config'))");
      const { rows: again } = await tx.query('SELECT 1 FROM embedding_config WHERE singleton');
      if (again.length > 0) return;
      await fitEmbeddingColumns(tx, model.dimension);
      await tx.query(
        `INSERT INTO embedding_config (singleton, model_id, dimension) VALUES (true, $1, $2)`,
        [model.modelId, model.dimension],
      );
    });
    return ensureSame(db, model);
  }
  return ensureSame(db, model, stored);
}

/** An embedding column: pgvector's `vector` (32-bit floats) or `halfvec` (16-bit). */
export interface EmbeddingColumn {
  readonly table: string;
  readonly column: string;
  readonly type: 'vector' | 'halfvec';
  readonly dimension: number;
}

/** The `vector(N)` and `halfvec(N)` columns of the current schema's tables. */
export async function embeddingColumns(db: Queryable): Promise<EmbeddingColumn[]> {
  const { rows } = await db.query<EmbeddingColumn>(
    `SELECT c.relname AS table, a.attname AS column, t.typname AS type, a.atttypmod AS dimension
       FROM pg_attribute a
       JOIN pg_class c ON c.oid = a.attrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace
       JOIN pg_type t ON t.oid = a.atttypid
      WHERE n.nspname = current_schema() AND c.relkind = 'r' AND a.attnum > 0
        AND NOT a.attisdropped AND t.typname IN ('vector', 'halfvec')
        AND t.typnamespace = (SELECT extnamespace FROM pg_extension WHERE extname = 'vector')
      ORDER BY c.relname, a.attname`,
  );
  return rows;
}

/**
 * Changes every embedding column whose dimension differs from `dimension`, when it holds no
 * vector yet; a column that does is a ConfigError (its vectors would have to be re-made). The
 * column keeps its type and its storage: PostgreSQL resets the storage to the type's default
 * (EXTERNAL for pgvector's types) on a change of type, and migrations/0007 keeps vectors in the
 * row.
 */
async function fitEmbeddingColumns(db: Queryable, dimension: number): Promise<void> {
  checkDimension(dimension);
  for (const col of await embeddingColumns(db)) {
    if (col.dimension === dimension) continue;
    const table = quoteIdentifier(col.table);
    const column = quoteIdentifier(col.column);
    const { rows } = await db.query(`SELECT 1 FROM ${table} WHERE ${column} IS NOT NULL LIMIT 1`);
    if (rows.length > 0) {
      throw new ConfigError(
        `${col.table}.${col.column} holds ${col.dimension}-dimension vectors but no model is recorded; ` +
          `cannot change it to ${dimension} dimensions without re-embedding.`,
      );
    }
    const { rows: storage } = await db.query<{ attstorage: string }>(
      `SELECT attstorage FROM pg_attribute WHERE attrelid = $1::regclass AND attname = $2`,
      [col.table, col.column],
    );
    const main = storage[0]?.attstorage === 'm' ? `, ALTER COLUMN ${column} SET STORAGE MAIN` : '';
    // The type is one of two names and the dimension a checked whole number: safe in the statement.
    await db.exec(
      `ALTER TABLE ${table} ALTER COLUMN ${column} TYPE ${col.type}(${dimension})${main}`,
    );
  }
}

async function ensureSame(
  db: Database,
  model: EmbeddingModelRef,
  known?: { model_id: string; dimension: number },
): Promise<void> {
  const stored =
    known ??
    (
      await db.query<{ model_id: string; dimension: number }>(
        'SELECT model_id, dimension FROM embedding_config WHERE singleton',
      )
    ).rows[0];
  if (!stored) return;
  if (stored.model_id !== model.modelId || stored.dimension !== model.dimension) {
    throw new ConfigError(
      `The index was built with embedding model "${stored.model_id}" (${stored.dimension} dimensions), ` +
        `but the configured model is "${model.modelId}" (${model.dimension} dimensions). ` +
        'Vectors of two models cannot be compared, so Groundwork will not mix them. Either configure ' +
        `"${stored.model_id}" again, or re-embed every chunk with the new model: run ` +
        '`groundwork reembed`.',
    );
  }
}

/**
 * Brings the index in line with the configured model, as the migrating role (the embedded
 * default's start, the `migrate` Lambda): on a fresh index it fits the columns and records the
 * model; with the live model configured it cancels a switch left in progress; with another
 * model it begins a switch to it (or lets one to it continue). Search keeps the live model until
 * the switch completes (core/embedding/model-switch.ts).
 */
export async function reconcileEmbeddingModel(
  db: Database,
  configured: ModelRecord,
): Promise<RecordedModels & { readonly began: boolean }> {
  checkDimension(configured.dimension);
  const began = await db.transaction(async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock(hashtext('groundwork:embedding-config'))");
    const { live, target } = await readModels(tx);
    if (!live) {
      await fitEmbeddingColumns(tx, configured.dimension);
      await tx.query(
        `INSERT INTO embedding_config (singleton, model_id, dimension, settings) VALUES (true, $1, $2, $3::jsonb)`,
        [configured.modelId, configured.dimension, JSON.stringify(configured.settings ?? null)],
      );
      return false;
    }
    if (sameModel(live, configured)) {
      if (target) await cancelSwitch(tx);
      if (live.settings === null)
        await tx.query('UPDATE embedding_config SET settings = $1::jsonb', [
          JSON.stringify(configured.settings ?? null),
        ]);
      return false;
    }
    if (target && sameModel(target, configured)) return false;
    if (target) await cancelSwitch(tx);
    await beginSwitch(tx, configured);
    return true;
  });
  return { ...(await readModels(db)), began };
}

function sameModel(a: Omit<ModelRecord, 'settings'>, b: Omit<ModelRecord, 'settings'>): boolean {
  return a.modelId === b.modelId && a.dimension === b.dimension;
}

/**
 * Records the target and adds the second column, with its own HNSW index, beside the live one.
 * The new column is `halfvec` whatever the live one is (migrations/0024): an index left with
 * `vector` by that migration moves to `halfvec` with its next switch.
 */
async function beginSwitch(tx: Queryable, target: ModelRecord): Promise<void> {
  await tx.query(
    'INSERT INTO embedding_switch (singleton, model_id, dimension, settings) VALUES (true, $1, $2, $3::jsonb)',
    [target.modelId, target.dimension, JSON.stringify(target.settings ?? null)],
  );
  // The dimension is checked to be a whole number (checkDimension): safe in the statement.
  await tx.exec(
    `ALTER TABLE chunks ADD COLUMN embedding_next halfvec(${target.dimension});
     ALTER TABLE chunks ALTER COLUMN embedding_next SET STORAGE MAIN;
     CREATE INDEX chunks_embedding_next_hnsw_idx ON chunks USING hnsw (embedding_next halfvec_cosine_ops)${await hnswIndexOptions(tx)};`,
  );
}

/**
 * The live HNSW index's build options (migrations/0021: m, ef_construction) as a `WITH` clause,
 * so that the second index is the same graph as the one it replaces (and the benchmarks' side
 * indexes the same graph as the product's).
 */
export async function hnswIndexOptions(tx: Queryable): Promise<string> {
  const { rows } = await tx.query<{ option: string }>(
    `SELECT unnest(c.reloptions) AS option FROM pg_class c
      WHERE c.relname = 'chunks_embedding_hnsw_idx' AND c.relnamespace = current_schema()::regnamespace`,
  );
  const options = rows.map((r) => r.option);
  // pgvector's HNSW options are whole numbers; anything else is not put into the statement.
  if (options.some((o) => !/^(m|ef_construction)=\d{1,4}$/.test(o)))
    throw new ConfigError(
      `chunks_embedding_hnsw_idx has options this code does not know: ${options.join(', ')}`,
    );
  return options.length > 0 ? ` WITH (${options.join(', ')})` : '';
}

/** Drops a switch in progress and its vectors; the live model is untouched. */
async function cancelSwitch(tx: Queryable): Promise<void> {
  await tx.exec(
    'ALTER TABLE chunks DROP COLUMN IF EXISTS embedding_next; DELETE FROM embedding_switch;',
  );
}

function checkDimension(dimension: number): void {
  if (!Number.isInteger(dimension) || dimension < 1 || dimension > 16000)
    throw new ConfigError(`Embedding dimension must be a whole number 1-16000, got ${dimension}`);
}
