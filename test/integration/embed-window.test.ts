/**
 * Embedding windows (`embedWindowTokens`, docs/ingestion.md): a chunk longer than the window is
 * embedded as sentence-aligned windows whose vectors are averaged and re-normalised; changing
 * the window re-embeds unchanged files. Real S3 emulator, chunker and tokenizer; hash embedder.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { createTokenCounter } from '../../lambdas/adapters/tokenizer/gpt-token-counter';
import type { Database } from '../../lambdas/adapters/postgres/database';
import { chunkText } from '../../lambdas/core/ingestion/chunker';
import { startLocalStack } from '../../local/stack';
import { openTestDatabase } from '../support/databases';
import { createHashEmbedder, hashVector } from '../support/hash-embedder';

process.env.POWERTOOLS_METRICS_DISABLED = 'true';

const TEXT = Array.from(
  { length: 12 },
  (_, i) => `Sentence ${i} says that the ${['tent', 'stove', 'map'][i % 3]} weighs ${i + 1} kilos.`,
).join(' ');

describe('embedding windows (PGlite)', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase('pglite');
  });
  afterAll(() => db?.close());

  async function ingestWith(embedWindowTokens: number | null) {
    const embedder = createHashEmbedder();
    const stack = await startLocalStack({
      db,
      embedder,
      logLevel: 'SILENT',
      ingestion: {
        chunking: { targetTokens: 512, overlapTokens: 0 },
        embedWithTitle: false,
        embedWindowTokens,
      },
    });
    try {
      await stack.s3.client.send(
        new PutObjectCommand({ Bucket: stack.s3.bucket, Key: 'tenants/acme/gear.txt', Body: TEXT }),
      );
      await stack.queue.idle();
    } finally {
      await stack.stop();
    }
    const { rows } = await db.query<{ text: string; embedding: string }>(
      'SELECT text, embedding::text AS embedding FROM chunks ORDER BY chunk_index',
    );
    return { embedder, rows };
  }

  it('stores the normalised mean of the windows, and re-embeds when the window changes', async () => {
    const whole = await ingestWith(null);
    expect(whole.rows).toHaveLength(1);
    expect(whole.embedder.texts).toBe(1);

    const windowed = await ingestWith(32);
    const text = windowed.rows[0]!.text;
    const windows = chunkText(
      text,
      { targetTokens: 32, overlapTokens: 0 },
      createTokenCounter(),
    ).map((c) => c.text);
    expect(windows.length).toBeGreaterThanOrEqual(3);
    // The unchanged file was embedded again, window by window.
    expect(windowed.embedder.texts).toBe(windows.length);
    const sum = new Array<number>(512).fill(0);
    for (const w of windows) hashVector(w, 512).forEach((x, d) => (sum[d]! += x));
    const norm = Math.hypot(...sum);
    const stored = JSON.parse(windowed.rows[0]!.embedding) as number[];
    // Within 0.0005: stored as 16-bit floats (migrations/0024).
    expect(Math.hypot(...stored)).toBeCloseTo(1, 3);
    stored.forEach((x, d) => expect(x).toBeCloseTo(sum[d]! / norm, 3));
    expect(stored).not.toEqual(JSON.parse(whole.rows[0]!.embedding));
  });
});
