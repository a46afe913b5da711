/**
 * The model switch's state in PostgreSQL (migrations/0019): `embedding_config` (the live model),
 * `embedding_switch` (the target) and `chunks.embedding_next`. Claiming, writing and the swap go
 * through the migration's SECURITY DEFINER functions, so the application's login (walled to one
 * tenant by row-level security, owner of nothing) can run the job; beginning a switch adds a
 * column and is the migrating role's (`beginModelSwitch`).
 */
import type { ModelRecord, RecordedModels } from '../../core/embedding/models';
import type { ModelSwitchStore } from '../../core/embedding/model-switch';
import { toVectorLiteral, type Database, type Queryable } from './database';

interface ModelRow {
  model_id: string;
  dimension: number;
  settings: unknown;
}

/** The live model and the switch in progress, as recorded. */
export async function readModels(db: Queryable): Promise<RecordedModels> {
  const { rows } = await db.query<ModelRow & { kind: 'live' | 'target'; started_at: Date | null }>(
    `SELECT 'live' AS kind, model_id, dimension, settings, NULL::timestamptz AS started_at
       FROM embedding_config WHERE singleton
     UNION ALL
     SELECT 'target', model_id, dimension, settings, started_at FROM embedding_switch WHERE singleton`,
  );
  const live = rows.find((r) => r.kind === 'live');
  const target = rows.find((r) => r.kind === 'target');
  return {
    live: live ? record(live) : null,
    target: target ? { ...record(target), startedAt: new Date(target.started_at ?? 0) } : null,
  };
}

function record(row: ModelRow): ModelRecord {
  return { modelId: row.model_id, dimension: row.dimension, settings: row.settings ?? null };
}

export function createModelSwitchStore(db: Database): ModelSwitchStore {
  return {
    models: () => readModels(db),

    async embedPending(max, embed) {
      return db.transaction(async (tx) => {
        const { rows } = await tx.query<{
          chunk_id: string;
          chunk_text: string;
          title: string | null;
        }>('SELECT * FROM gw_embedding_switch_claim($1)', [max]);
        if (rows.length === 0) return 0;
        const vectors = await embed(
          rows.map((r) => ({ id: r.chunk_id, text: r.chunk_text, title: r.title })),
        );
        await tx.query('SELECT gw_embedding_switch_write($1::uuid[], $2::text[])', [
          rows.map((r) => r.chunk_id),
          vectors.map((v) => toVectorLiteral(v)),
        ]);
        return rows.length;
      });
    },

    async progress() {
      const { rows } = await db.query<{ done: string; total: string }>(
        'SELECT * FROM gw_embedding_switch_progress()',
      );
      return { done: Number(rows[0]?.done ?? 0), total: Number(rows[0]?.total ?? 0) };
    },

    async finish() {
      return db.transaction(async (tx) => {
        const { rows } = await tx.query<{ outcome: 'done' | 'pending' | 'none' }>(
          'SELECT gw_embedding_switch_finish() AS outcome',
        );
        return rows[0]?.outcome ?? 'none';
      });
    },
  };
}
