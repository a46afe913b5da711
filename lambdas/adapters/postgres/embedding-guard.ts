/**
 * Refuses to mix embedding models in one index. The first start records the configured model;
 * later starts compare and fail with instructions when it differs.
 */
import { ConfigError } from '../../core/errors';
import type { Database } from './database';

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
    await db.query(
      `INSERT INTO embedding_config (singleton, model_id, dimension) VALUES (true, $1, $2)
       ON CONFLICT (singleton) DO NOTHING`,
      [model.modelId, model.dimension],
    );
    return ensureSame(db, model);
  }
  return ensureSame(db, model, stored);
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

/** Records a new model after every chunk was re-embedded with it. */
export async function recordEmbeddingModel(db: Database, model: EmbeddingModelRef): Promise<void> {
  await db.query(
    `INSERT INTO embedding_config (singleton, model_id, dimension) VALUES (true, $1, $2)
     ON CONFLICT (singleton) DO UPDATE SET model_id = EXCLUDED.model_id, dimension = EXCLUDED.dimension, recorded_at = now()`,
    [model.modelId, model.dimension],
  );
}
