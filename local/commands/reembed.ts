/**
 * The model switch from the command line. `groundwork start` begins a switch when the configured
 * embedding model differs from the index's and re-embeds in the background while it serves
 * (core/embedding/model-switch.ts); its progress is printed here. `groundwork reembed` runs the
 * same switch in the foreground, without serving, as fast as the throttle allows, and can be
 * interrupted and run again: it continues where it stopped.
 */
import type { ModelSwitchStatus } from '../../lambdas/core/embedding/model-switch';
import { stackOptionsFromEnv, type LocalEnv } from '../config';
import { acquireLock } from '../data-dir-lock';
import { startLocalStack, type LocalStack } from '../stack';

/** One line on the switch in progress, or null when none is. */
export function formatSwitchStatus(status: ModelSwitchStatus): string | null {
  if (!status.target) return null;
  const share = status.chunksTotal > 0 ? status.chunksDone / status.chunksTotal : 1;
  return (
    `switching embedding model from ${status.live?.modelId ?? '(none)'} to ${status.target.modelId}: ` +
    `${status.chunksDone} of ${status.chunksTotal} chunks re-embedded (${Math.floor(share * 100)}%); ` +
    `search uses ${status.live?.modelId ?? 'the live model'} until it completes`
  );
}

/**
 * Prints the switch's progress every `intervalMs` while the stack's background job runs, and its
 * end. Returns a function that stops printing.
 */
export function printSwitchProgress(
  stack: LocalStack,
  print: (line: string) => void,
  intervalMs = 30_000,
): () => void {
  const timer = setInterval(() => {
    void stack.modelSwitch
      .status()
      .then((s) => {
        const line = formatSwitchStatus(s);
        if (line) print(line);
      })
      .catch(() => undefined);
  }, intervalMs);
  timer.unref();
  void stack.switchJob.then((outcome) => {
    clearInterval(timer);
    if (outcome === 'switched') print(`embedding model switched to ${stack.embedder.modelId}`);
  });
  return () => clearInterval(timer);
}

export async function reembedCommand(env: LocalEnv & { dataDir: string }): Promise<number> {
  const lock = await acquireLock(env.dataDir, { command: 'reembed' });
  const stack = await startLocalStack({
    ...(await stackOptionsFromEnv(env)),
    // It serves no query: the model being replaced need not be buildable.
    modelSwitch: { background: false, pauseMs: 0, restRatio: 0, requireLiveModel: false },
    reconcile: false,
  });
  try {
    const before = await stack.modelSwitch.status();
    if (!before.target) {
      console.log(`the index already uses ${stack.embedder.modelId}; nothing to re-embed.`);
      return 0;
    }
    console.log(formatSwitchStatus(before));
    // A model server down, say: what was re-embedded is kept, and the next run continues.
    const outcome = await stack.modelSwitch
      .run()
      .catch((err: unknown) => ({ failed: err instanceof Error ? err.message : String(err) }));
    if (outcome !== 'switched') {
      const why = typeof outcome === 'string' ? outcome : outcome.failed;
      const now = await stack.modelSwitch.status();
      console.error(
        `the switch did not complete (${why}); ${now.chunksDone} of ${now.chunksTotal} chunks ` +
          `are re-embedded and kept, and search still uses ${now.live?.modelId ?? 'the live model'}. ` +
          'Run again to continue.',
      );
      return 1;
    }
    console.log(
      `re-embedded ${before.chunksTotal} chunks; the index now uses ${stack.embedder.modelId}.`,
    );
    return 0;
  } finally {
    await stack.stop();
    await lock.release();
  }
}
