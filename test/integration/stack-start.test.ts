/**
 * What the embedded default refuses at start rather than on every request: settings that make the
 * embedding model's confidence calibration invalid. And what it sets up: the declared filter indexes and the exact-scan index.
 */
import { ConfigError } from '../../lambdas/core/errors';
import { reconcileExactScanIndex } from '../../lambdas/adapters/postgres/exact-scan-index';
import { listFilterIndexes } from '../../lambdas/adapters/postgres/filter-indexes';
import { startLocalStack } from '../../local/stack';
import { createHashEmbedder } from '../support/hash-embedder';

describe('starting the embedded default', () => {
  it('refuses confidence overrides that put medium above high, naming both', async () => {
    const outcome = await startLocalStack({
      embedder: createHashEmbedder(),
      logLevel: 'SILENT',
      answer: { calibrationOverrides: { medium: 0.5, high: 0.3 } },
    }).then(
      async (stack) => (await stack.stop(), 'started'),
      (err: unknown) => err,
    );
    expect(outcome).toBeInstanceOf(ConfigError);
    expect((outcome as Error).message).toContain(
      'confidence: medium (0.5) must not exceed high (0.3)',
    );
  });

  it('starts with overrides that keep medium at or below high', async () => {
    const stack = await startLocalStack({
      embedder: createHashEmbedder(),
      logLevel: 'SILENT',
      answer: { calibrationOverrides: { medium: 0.3, high: 0.3 } },
    });
    await stack.stop();
  });

  it('makes the declared filter indexes, each ready with its index, and the exact-scan index', async () => {
    const stack = await startLocalStack({
      embedder: createHashEmbedder(),
      logLevel: 'SILENT',
      filterIndexes: [{ key: 'category', value: 'manual' }],
      exactScanIndex: true,
    });
    try {
      expect(await listFilterIndexes(stack.databases.writer)).toMatchObject([
        { key: 'category', value: 'manual', ready: true, served: true },
      ]);
      expect(await reconcileExactScanIndex(stack.databases.writer, true)).toBe('kept');
    } finally {
      await stack.stop();
    }
  });
});
