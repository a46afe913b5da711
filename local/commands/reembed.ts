/**
 * `groundwork reembed`: moves the index to the configured embedding model. Every indexed
 * document is synced again from the bucket; since its recorded model differs, the ingestion
 * pipeline re-chunks and re-embeds it exactly as a new upload would. The new model is recorded
 * only when every document has been processed, so an interrupted run can simply be repeated.
 * Run it with the server stopped.
 */
import { recordEmbeddingModel } from '../../lambdas/adapters/postgres/embedding-guard';
import { stackOptionsFromEnv, type LocalEnv } from '../config';
import { acquireLock } from '../data-dir-lock';
import { startLocalStack, type LocalStack } from '../stack';

/** Re-indexes every document not made with the stack's embedder; records the model when all succeeded. */
export async function reembedAll(
  stack: LocalStack,
): Promise<{ total: number; done: number; failed: number }> {
  const { rows } = await stack.db.query<{ source_uri: string }>(
    `SELECT source_uri FROM documents WHERE status IN ('indexed', 'processing')
          AND embedding_model IS DISTINCT FROM $1 ORDER BY source_uri`,
    [stack.embedder.modelId],
  );
  let done = 0;
  let failed = 0;
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < rows.length) {
        const uri = rows[next++]!.source_uri;
        const match = /^s3:\/\/([^/]+)\/(.+)$/.exec(uri);
        if (!match) continue;
        const outcome = await stack.ingestion
          .syncObject(match[1]!, match[2]!)
          .catch(() => ({ action: 'error' as const }));
        if (outcome.action === 'indexed' || outcome.action === 'deleted') done += 1;
        else if (outcome.action !== 'unchanged') failed += 1;
      }
    }),
  );
  if (failed === 0) await recordEmbeddingModel(stack.db, stack.embedder);
  return { total: rows.length, done, failed };
}

export async function reembedCommand(env: LocalEnv & { dataDir: string }): Promise<number> {
  const lock = await acquireLock(env.dataDir, { command: 'reembed' });
  const stack = await startLocalStack({
    ...(await stackOptionsFromEnv(env)),
    skipEmbeddingGuard: true,
  });
  try {
    const { total, done, failed } = await reembedAll(stack);
    if (failed > 0) {
      console.error(
        `re-embedded ${done} of ${total} documents; ${failed} failed. Run again to retry.`,
      );
      return 1;
    }
    console.log(
      `re-embedded ${done} documents with ${stack.embedder.modelId}; the index now records this model.`,
    );
    return 0;
  } finally {
    await stack.stop();
    await lock.release();
  }
}
