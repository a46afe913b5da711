/**
 * The ingestion pipeline end to end on both databases: the real S3 emulator and SDK client, the
 * real parsers and chunker, the real ingest handler; a deterministic embedder that counts calls.
 */
import { DeleteObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { SQSEvent } from 'aws-lambda';
import type { Database } from '../../lambdas/adapters/postgres/database';
import { INGESTION_VERSION } from '../../lambdas/core/ingestion/version';
import { makeHandler } from '../../lambdas/ingest/handler';
import { encodeS3EventKey, startLocalStack, type LocalStack } from '../../local/stack';
import { lambdaContext } from '../../local/ingest-queue';
import { ENGINES, openTestDatabase } from '../support/databases';
import { createHashEmbedder, type CountingEmbedder } from '../support/hash-embedder';

process.env.POWERTOOLS_METRICS_DISABLED = 'true';

const LONG_TEXT = Array.from(
  { length: 60 },
  (_, i) =>
    `Paragraph ${i} explains how the ${['aurora', 'lambda', 'bedrock', 'pgvector'][i % 4]} service handles request number ${i}. It has a second sentence for good measure.`,
).join('\n\n');

interface DocRow {
  id: string;
  tenant_id: string;
  status: string;
  failure_reason: string | null;
  chunk_count: number;
  title: string | null;
  source_type: string;
  metadata: Record<string, unknown>;
  updated_at: Date;
  owner_user_id: string | null;
  visibility: string;
}

describe.each(ENGINES)('ingestion on %s', (engine) => {
  let db: Database;
  let stack: LocalStack;
  let embedder: CountingEmbedder;

  /** Embedding of texts holding `word` waits until released (see `hold`). */
  let held: { word: string; until: Promise<void> } | null = null;
  function hold(word: string): () => void {
    let release!: () => void;
    held = { word, until: new Promise<void>((resolve) => (release = resolve)) };
    return () => {
      held = null;
      release();
    };
  }

  beforeAll(async () => {
    db = await openTestDatabase(engine);
    embedder = createHashEmbedder();
    const embed = embedder.embed.bind(embedder);
    embedder.embed = async (texts, purpose) => {
      const gate = held;
      if (gate && texts.some((t) => t.includes(gate.word))) await gate.until;
      return embed(texts, purpose);
    };
    stack = await startLocalStack({
      db,
      embedder,
      ingestion: { chunking: { targetTokens: 120, overlapTokens: 24 }, maxObjectBytes: 200_000 },
      logLevel: 'SILENT',
    });
  });
  afterAll(async () => {
    await stack?.stop();
    await db?.close();
  });

  async function put(key: string, body: string | Uint8Array, contentType?: string) {
    await stack.s3.client.send(
      new PutObjectCommand({
        Bucket: stack.s3.bucket,
        Key: key,
        Body: body,
        ...(contentType ? { ContentType: contentType } : {}),
      }),
    );
    await stack.queue.idle();
  }
  async function remove(key: string) {
    await stack.s3.client.send(new DeleteObjectCommand({ Bucket: stack.s3.bucket, Key: key }));
    await stack.queue.idle();
  }
  async function doc(key: string, tenant = 'acme'): Promise<DocRow | undefined> {
    const { rows } = await db.query<DocRow>(
      'SELECT * FROM documents WHERE tenant_id = $1 AND source_uri = $2',
      [tenant, `s3://${stack.s3.bucket}/${key}`],
    );
    return rows[0];
  }
  async function chunks(documentId: string) {
    const { rows } = await db.query<{
      id: string;
      chunk_index: number;
      text: string;
      start_offset: number;
      end_offset: number;
      tenant_id: string;
    }>(
      'SELECT id, chunk_index, text, start_offset, end_offset, tenant_id FROM chunks WHERE document_id = $1 ORDER BY chunk_index',
      [documentId],
    );
    return rows;
  }

  it('indexes a document under the tenant named by its key, with exact offsets', async () => {
    await put('tenants/acme/guide.md', `# Operations guide\n\n${LONG_TEXT}`);
    const d = await doc('tenants/acme/guide.md');
    expect(d).toMatchObject({
      status: 'indexed',
      tenant_id: 'acme',
      title: 'Operations guide',
      visibility: 'tenant',
    });
    const rows = await chunks(d!.id);
    expect(rows.length).toBe(d!.chunk_count);
    expect(rows.length).toBeGreaterThan(3);
    expect(rows.every((c) => c.tenant_id === 'acme')).toBe(true);
    // Offsets point into the extracted text: consecutive chunks overlap or touch, none is empty.
    for (let i = 1; i < rows.length; i++)
      expect(rows[i]!.start_offset).toBeLessThanOrEqual(rows[i - 1]!.end_offset);
    expect(rows.every((c) => c.text.length === c.end_offset - c.start_offset)).toBe(true);
  });

  it('re-ingesting unchanged content makes zero embedding calls and zero writes', async () => {
    await put('tenants/acme/same.txt', LONG_TEXT);
    const before = await doc('tenants/acme/same.txt');
    const chunkIds = (await chunks(before!.id)).map((c) => c.id);
    const calls = embedder.calls;
    const outcome = await stack.ingestion.syncObject(stack.s3.bucket, 'tenants/acme/same.txt');
    expect(outcome.action).toBe('unchanged');
    expect(embedder.calls).toBe(calls);
    const after = await doc('tenants/acme/same.txt');
    expect(after!.updated_at.getTime()).toBe(before!.updated_at.getTime());
    expect((await chunks(after!.id)).map((c) => c.id)).toEqual(chunkIds);
  });

  it('indexes the same bytes again when an older version of the ingestion code indexed them', async () => {
    // Text of its own: a copy of another document of the tenant would be recorded as a duplicate.
    await put('tenants/acme/upgraded.txt', `Upgraded.\n\n${LONG_TEXT}`);
    const before = await doc('tenants/acme/upgraded.txt');
    await stack.db.query('UPDATE documents SET ingestion_version = 0 WHERE id = $1', [before!.id]);
    const chunkIds = (await chunks(before!.id)).map((c) => c.id);
    // The model down meanwhile: the document stays indexed and served by its old chunks, its
    // version old; nothing is recorded as failed, and an attempt that ended so does not count.
    embedder.failNext = 1;
    await expect(
      stack.ingestion.syncObject(stack.s3.bucket, 'tenants/acme/upgraded.txt'),
    ).rejects.toThrow(/unavailable/);
    const during = await stack.db.query<{
      status: string;
      ingestion_version: number;
      lease_expiries: number;
      failure_reason: string | null;
    }>(
      'SELECT status, ingestion_version, lease_expiries, failure_reason FROM documents WHERE id = $1',
      [before!.id],
    );
    expect(during.rows[0]).toEqual({
      status: 'indexed',
      ingestion_version: 0,
      lease_expiries: 0,
      failure_reason: null,
    });
    expect((await chunks(before!.id)).map((c) => c.id)).toEqual(chunkIds);
    const calls = embedder.calls;
    const outcome = await stack.ingestion.syncObject(stack.s3.bucket, 'tenants/acme/upgraded.txt');
    expect(outcome.action).toBe('indexed');
    expect(embedder.calls).toBeGreaterThan(calls);
    const { rows } = await stack.db.query<{ ingestion_version: number; lease_expiries: number }>(
      'SELECT ingestion_version, lease_expiries FROM documents WHERE id = $1',
      [before!.id],
    );
    expect(rows[0]).toEqual({ ingestion_version: INGESTION_VERSION, lease_expiries: 0 });
    expect(await chunks(before!.id)).toHaveLength(before!.chunk_count);
    // Now current: the next sync of the same bytes is a no-op again.
    const next = await stack.ingestion.syncObject(stack.s3.bucket, 'tenants/acme/upgraded.txt');
    expect(next.action).toBe('unchanged');
  });

  it('replaces all chunks when the content changes', async () => {
    await put('tenants/acme/changing.txt', 'The first version talks about apples. '.repeat(30));
    const v1 = await doc('tenants/acme/changing.txt');
    await put(
      'tenants/acme/changing.txt',
      'The second version talks about oranges only. '.repeat(5),
    );
    const v2 = await doc('tenants/acme/changing.txt');
    expect(v2!.id).toBe(v1!.id);
    const rows = await chunks(v2!.id);
    expect(rows).toHaveLength(v2!.chunk_count);
    expect(rows.map((r) => r.text).join(' ')).not.toMatch(/apples/);
    expect(rows.map((r) => r.text).join(' ')).toMatch(/oranges/);
  });

  it('removes the chunks when the object is deleted, keeping a deleted record', async () => {
    await put(
      'tenants/acme/temp.txt',
      'Temporary notes about the migration window on Friday night.',
    );
    const d = await doc('tenants/acme/temp.txt');
    expect(d!.status).toBe('indexed');
    await remove('tenants/acme/temp.txt');
    expect(await doc('tenants/acme/temp.txt')).toMatchObject({ status: 'deleted', chunk_count: 0 });
    expect(await chunks(d!.id)).toHaveLength(0);
  });

  it('records unsupported, corrupt, empty, oversized and tenant-less files as failed with a reason', async () => {
    await put('tenants/acme/image.png', new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]));
    await put('tenants/acme/broken.pdf', '%PDF-1.4 this is not really a pdf', 'application/pdf');
    await put('tenants/acme/empty.txt', '   \n  ');
    await put('tenants/acme/huge.txt', 'x'.repeat(250_000));
    await put('uploads/no-tenant.txt', 'Where does this belong?');
    expect((await doc('tenants/acme/image.png'))?.failure_reason).toMatch(/Unsupported/i);
    expect((await doc('tenants/acme/broken.pdf'))?.failure_reason).toMatch(/PDF/);
    expect((await doc('tenants/acme/empty.txt'))?.failure_reason).toMatch(/no text/i);
    expect((await doc('tenants/acme/huge.txt'))?.failure_reason).toMatch(/limit/);
    const orphan = await doc('uploads/no-tenant.txt', '_unassigned');
    expect(orphan).toMatchObject({ status: 'failed' });
    expect(orphan!.failure_reason).toMatch(/tenants\/<tenantId>\//);
    const { rows } = await db.query(
      `SELECT 1 FROM chunks c JOIN documents d ON d.id = c.document_id WHERE d.status = 'failed'`,
    );
    expect(rows).toHaveLength(0);
  });

  it('a failed document can be retried and then indexes', async () => {
    embedder.failNext = 3; // every receive of the message fails (3 attempts locally)
    await put('tenants/acme/retry.txt', 'Retry me: the embedding model was down the first time.');
    const failed = await doc('tenants/acme/retry.txt');
    expect(failed).toMatchObject({ status: 'failed' });
    // The dead-letter consumer names the attempts, the cause and what to do.
    expect(failed!.failure_reason).toMatch(
      /^Indexing failed after 3 attempts: embedding model unavailable \(injected\)\. Retry it/,
    );
    expect(stack.queue.deadLetters.length).toBeGreaterThan(0);
    const outcome = await stack.ingestion.syncObject(stack.s3.bucket, 'tenants/acme/retry.txt');
    expect(outcome.action).toBe('indexed');
    expect(await doc('tenants/acme/retry.txt')).toMatchObject({
      status: 'indexed',
      failure_reason: null,
    });
  });

  it('records a copy of an indexed document in the same scope as a duplicate, not indexed twice', async () => {
    const text = 'Duplicate check: the VPN gateway rotates its certificates every ninety days.';
    await put('tenants/acme/vpn.txt', text);
    const original = await doc('tenants/acme/vpn.txt');
    expect(original).toMatchObject({ status: 'indexed' });

    await put('tenants/acme/copies/vpn (1).txt', text);
    const copy = await doc('tenants/acme/copies/vpn (1).txt');
    expect(copy).toMatchObject({ status: 'failed', chunk_count: 0 });
    expect(copy!.failure_reason).toContain(`(document ${original!.id})`);
    expect(await chunks(copy!.id)).toEqual([]);

    // Re-syncing the original is not a duplicate of itself; other scopes keep their own copy.
    const again = await stack.ingestion.syncObject(stack.s3.bucket, 'tenants/acme/vpn.txt');
    expect(again.action).toBe('unchanged');
    await put('tenants/globex/vpn.txt', text);
    expect(await doc('tenants/globex/vpn.txt', 'globex')).toMatchObject({ status: 'indexed' });
    await put('tenants/acme/users/u-42/vpn.txt', text);
    expect(await doc('tenants/acme/users/u-42/vpn.txt')).toMatchObject({ status: 'indexed' });

    // Once the original is gone, retrying the copy indexes it.
    await remove('tenants/acme/vpn.txt');
    const retried = await stack.ingestion.syncObject(
      stack.s3.bucket,
      'tenants/acme/copies/vpn (1).txt',
    );
    expect(retried.action).toBe('indexed');
  });

  it('indexes copies uploaded at once only once', async () => {
    const text = 'Copies at once: the badge printer stands by the lighthouse-amber door.';
    const keys = ['a', 'b', 'c', 'd'].map((name) => `tenants/acme/at-once/${name}.txt`);
    const processing = async () =>
      (await Promise.all(keys.map((key) => doc(key)))).filter((d) => d?.status === 'processing');
    // Every copy is embedded before any is written, as when they are uploaded together.
    const release = hold('lighthouse-amber');
    await Promise.all(
      keys.map((Key) =>
        stack.s3.client.send(new PutObjectCommand({ Bucket: stack.s3.bucket, Key, Body: text })),
      ),
    );
    for (let i = 0; i < 800 && (await processing()).length < keys.length; i++)
      await new Promise((resolve) => setTimeout(resolve, 25));
    expect(await processing()).toHaveLength(keys.length);
    release();
    await stack.queue.idle();

    const rows = await Promise.all(keys.map((key) => doc(key)));
    const indexed = rows.filter((d) => d?.status === 'indexed');
    expect(indexed).toHaveLength(1);
    for (const copy of rows.filter((d) => d?.status !== 'indexed')) {
      expect(copy).toMatchObject({ status: 'failed', chunk_count: 0 });
      expect(copy!.failure_reason).toContain(`(document ${indexed[0]!.id})`);
      expect(await chunks(copy!.id)).toEqual([]);
    }
  });

  it('reads sidecar metadata, and a sidecar-only change re-embeds nothing', async () => {
    const sidecar = (sourceType: string) =>
      JSON.stringify({
        metadataAttributes: {
          title: 'Refund policy',
          source_type: sourceType,
          year: 2019,
          region: { value: { type: 'STRING', stringValue: 'emea' } },
        },
      });
    await put('tenants/acme/policy.txt.metadata.json', sidecar('faq'));
    await put('tenants/acme/policy.txt', 'Refunds are issued within 14 days of the request.');
    expect(await doc('tenants/acme/policy.txt')).toMatchObject({
      title: 'Refund policy',
      source_type: 'faq',
      metadata: { year: 2019, region: 'emea' },
    });
    const calls = embedder.calls;
    await put('tenants/acme/policy.txt.metadata.json', sidecar('doc'));
    expect(embedder.calls).toBe(calls);
    expect(await doc('tenants/acme/policy.txt')).toMatchObject({
      source_type: 'doc',
      status: 'indexed',
    });
    // The sidecar itself is never indexed as a document.
    expect(await doc('tenants/acme/policy.txt.metadata.json')).toBeUndefined();
  });

  it('records a document whose sidecar holds text PostgreSQL cannot store, and drops such text from content', async () => {
    // JSON escapes: the sidecar's bytes are valid UTF-8, the strings they decode to are not storable.
    await put(
      'tenants/acme/nul-value.txt.metadata.json',
      '{"metadataAttributes":{"region":"em\\u0000ea"}}',
    );
    await put('tenants/acme/nul-value.txt', 'The warranty covers two years of repairs.');
    await put(
      'tenants/acme/users/u-7/surrogate-key.txt.metadata.json',
      '{"metadataAttributes":{"re\\ud800gion":"emea"}}',
    );
    await put('tenants/acme/users/u-7/surrogate-key.txt', 'Private notes on the warranty.');
    for (const [key, path] of [
      ['tenants/acme/nul-value.txt', 'region'],
      ['tenants/acme/users/u-7/surrogate-key.txt', 're\\ud800gion'],
    ] as const) {
      const d = await doc(key);
      expect(d).toMatchObject({ status: 'failed', metadata: {} });
      expect(d!.failure_reason).toContain(`at "${path}"`);
      expect(d!.failure_reason).toMatch(/cannot be stored/);
    }
    // Failed or not, a file under users/<id>/ stays private to that user.
    expect(await doc('tenants/acme/users/u-7/surrogate-key.txt')).toMatchObject({
      visibility: 'user',
      owner_user_id: 'u-7',
    });

    // A stray NUL in a text file (too few to call it binary) and in an HTML title.
    const text = `Stray\u0000 bytes happen. ${LONG_TEXT.slice(0, 400)}`;
    await put('tenants/acme/stray-nul.txt', text);
    await put(
      'tenants/acme/stray-nul.html',
      `<html><head><title>Ti\u0000tle</title></head><body><p>${LONG_TEXT.slice(0, 400)}</p></body></html>`,
    );
    const txt = await doc('tenants/acme/stray-nul.txt');
    expect(txt).toMatchObject({ status: 'indexed' });
    expect((await chunks(txt!.id)).map((c) => c.text).join('')).toContain('Stray bytes happen.');
    expect(await doc('tenants/acme/stray-nul.html')).toMatchObject({
      status: 'indexed',
      title: 'Title',
    });
  });

  it('makes documents under users/<id>/ private to that user', async () => {
    await put('tenants/acme/users/u-42/notes.txt', 'My private notes about the quarterly plan.');
    expect(await doc('tenants/acme/users/u-42/notes.txt')).toMatchObject({
      visibility: 'user',
      owner_user_id: 'u-42',
    });
  });

  it('decodes event keys (spaces arrive as +) and ignores S3 test events', async () => {
    await put(
      'tenants/acme/meeting notes (final).txt',
      'Decisions taken in the meeting about the launch.',
    );
    expect(await doc('tenants/acme/meeting notes (final).txt')).toMatchObject({
      status: 'indexed',
    });
    const handler = makeHandler({
      ingestion: stack.ingestion,
      logger: new Logger({ logLevel: 'SILENT' }),
      metrics: new Metrics(),
    });
    const res = await handler(
      {
        Records: [
          {
            messageId: 't',
            body: JSON.stringify({ Service: 'Amazon S3', Event: 's3:TestEvent' }),
          } as never,
        ],
      },
      lambdaContext('ingest'),
    );
    expect(res.batchItemFailures).toEqual([]);
  });

  it('fails only the bad records of a batch (partial batch response)', async () => {
    await stack.s3.client.send(
      new PutObjectCommand({
        Bucket: stack.s3.bucket,
        Key: 'tenants/acme/batch-ok.txt',
        Body: 'Good record in a batch.',
      }),
    );
    await stack.queue.idle();
    const handler = makeHandler({
      ingestion: stack.ingestion,
      logger: new Logger({ logLevel: 'SILENT' }),
      metrics: new Metrics(),
    });
    const record = (id: string, body: string) =>
      ({ messageId: id, body }) as SQSEvent['Records'][number];
    const s3Message = (key: string) =>
      JSON.stringify({
        Records: [
          {
            eventName: 'ObjectCreated:Put',
            s3: { bucket: { name: stack.s3.bucket }, object: { key: encodeS3EventKey(key) } },
          },
        ],
      });
    await put(
      'tenants/acme/batch-embed-fails.txt',
      'This one will fail to embed on the next attempt.',
    );
    await db.query(
      `UPDATE documents SET content_hash = 'force-reindex' WHERE source_uri LIKE '%batch-embed-fails.txt'`,
    );
    embedder.failNext = 1;
    const res = await handler(
      {
        Records: [
          record('good', s3Message('tenants/acme/batch-ok.txt')),
          record('not-json', '{oops'),
          record('embed-fails', s3Message('tenants/acme/batch-embed-fails.txt')),
          record('not-s3', JSON.stringify({ hello: 'world' })),
        ],
      },
      lambdaContext('ingest'),
    );
    expect(res.batchItemFailures.map((f) => f.itemIdentifier).sort()).toEqual([
      'embed-fails',
      'not-json',
      'not-s3',
    ]);
    expect(await doc('tenants/acme/batch-ok.txt')).toMatchObject({ status: 'indexed' });
  });

  it('converges on the latest content under duplicate and out-of-order events', async () => {
    const key = 'tenants/acme/racy.txt';
    await put(key, 'Version one mentions the color red.');
    await put(key, 'Version two mentions the color blue.');
    const v2 = await doc(key);
    // Replays: the old create, a duplicate of the new one, and a stale delete while the object exists.
    const notification = (eventName: string) => ({
      Records: [
        {
          eventName,
          s3: { bucket: { name: stack.s3.bucket }, object: { key: encodeS3EventKey(key) } },
        },
      ],
    });
    stack.queue.push(notification('ObjectCreated:Put'));
    stack.queue.push(notification('ObjectRemoved:Delete'));
    stack.queue.push(notification('ObjectCreated:Put'));
    await stack.queue.idle();
    const rows = await chunks(v2!.id);
    expect(rows.map((r) => r.text).join(' ')).toContain('blue');
    expect(rows.map((r) => r.text).join(' ')).not.toContain('red');
    const { rows: docs } = await db.query(
      `SELECT 1 FROM documents WHERE source_uri LIKE '%racy.txt'`,
    );
    expect(docs).toHaveLength(1);
    expect(await doc(key)).toMatchObject({ status: 'indexed' });
    // Deleted, then a late create event: the object is gone, so nothing is resurrected.
    await remove(key);
    stack.queue.push(notification('ObjectCreated:Put'));
    await stack.queue.idle();
    expect(await doc(key)).toMatchObject({ status: 'deleted', chunk_count: 0 });
  });

  it('keeps a deletion, or a newer version, that lands while a document is being embedded', async () => {
    const key = 'tenants/acme/held.txt';
    const send = (body: string) =>
      stack.s3.client.send(new PutObjectCommand({ Bucket: stack.s3.bucket, Key: key, Body: body }));
    const reaches = async (status: string) => {
      for (let i = 0; i < 800 && (await doc(key))?.status !== status; i++)
        await new Promise((resolve) => setTimeout(resolve, 25));
      expect((await doc(key))?.status).toBe(status);
    };

    // Deleted while its embedding is held: the slower write must not bring it back.
    let release = hold('slowpoke');
    await send('Version one is about the slowpoke and the colour green.');
    await reaches('processing');
    await stack.s3.client.send(new DeleteObjectCommand({ Bucket: stack.s3.bucket, Key: key }));
    await reaches('deleted');
    release();
    await stack.queue.idle();
    expect(await doc(key)).toMatchObject({ status: 'deleted', chunk_count: 0 });
    expect(await chunks((await doc(key))!.id)).toEqual([]);

    // Replaced while held (both versions may carry the same second as their date): the newer
    // version, indexed first, stays.
    release = hold('slowpoke');
    await send('Version one is about the slowpoke and the colour green.');
    await reaches('processing');
    await send('Version two is about the colour purple.');
    await reaches('indexed');
    release();
    await stack.queue.idle();
    const row = await doc(key);
    expect(row).toMatchObject({ status: 'indexed' });
    const text = (await chunks(row!.id)).map((c) => c.text).join(' ');
    expect(text).toContain('purple');
    expect(text).not.toContain('green');
  });
});
