/**
 * One embedding model per index: a start with another model fails with instructions, and
 * `groundwork reembed` moves the index to the new model through the ingestion pipeline.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { ConfigError } from '../../lambdas/core/errors';
import { reembedAll } from '../../local/commands/reembed';
import { startLocalStack } from '../../local/stack';
import { createHashEmbedder } from '../support/hash-embedder';

process.env.POWERTOOLS_METRICS_DISABLED = 'true';

describe('embedding model guard (PGlite on disk)', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'groundwork-guard-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('refuses to mix models, and re-embeds every document on request', async () => {
    const first = await startLocalStack({
      dataDir: dir,
      embedder: createHashEmbedder(512, 'test/model-a'),
      logLevel: 'SILENT',
    });
    await first.s3.client.send(
      new PutObjectCommand({
        Bucket: first.s3.bucket,
        Key: 'tenants/acme/a.txt',
        Body: 'Alpha document about refunds.',
      }),
    );
    await first.s3.client.send(
      new PutObjectCommand({
        Bucket: first.s3.bucket,
        Key: 'tenants/acme/b.txt',
        Body: 'Beta document about shipping.',
      }),
    );
    await first.queue.idle();
    await first.stop();

    const modelB = createHashEmbedder(512, 'test/model-b');
    await expect(
      startLocalStack({ dataDir: dir, embedder: modelB, logLevel: 'SILENT' }),
    ).rejects.toThrow(ConfigError);
    await expect(
      startLocalStack({ dataDir: dir, embedder: modelB, logLevel: 'SILENT' }),
    ).rejects.toThrow(/test\/model-a.*test\/model-b.*groundwork reembed/s);

    const migrating = await startLocalStack({
      dataDir: dir,
      embedder: modelB,
      logLevel: 'SILENT',
      skipEmbeddingGuard: true,
    });
    const result = await reembedAll(migrating);
    expect(result).toEqual({ total: 2, done: 2, failed: 0 });
    const { rows } = await migrating.db.query<{ embedding_model: string }>(
      'SELECT DISTINCT embedding_model FROM documents',
    );
    expect(rows).toEqual([{ embedding_model: 'test/model-b' }]);
    await migrating.stop();

    const after = await startLocalStack({
      dataDir: dir,
      embedder: createHashEmbedder(512, 'test/model-b'),
      logLevel: 'SILENT',
    });
    const { hits } = await after.search.search(
      { tenantId: 'acme', userId: 'u' },
      { queryText: 'refunds', topK: 5, mode: 'hybrid', filters: {} },
    );
    expect(hits[0]?.sourceUri).toMatch(/a\.txt$/);
    await after.stop();
  });
});
