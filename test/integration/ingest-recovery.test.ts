/**
 * Nothing stranded, on both databases: the embedded default's reconciliation at start (objects
 * whose events were lost, documents a previous process left unfinished, objects removed while
 * it was down), the lease sweep that processes abandoned documents again, the dead-letter
 * consumer that fails a document with its reason, and POST /api/documents/{id}/retry on a stuck one.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DeleteObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import type { SQSRecord } from 'aws-lambda';
import type { Database } from '../../lambdas/adapters/postgres/database';
import { TRANSIENT_FAILURE_PREFIX } from '../../lambdas/core/ingestion/ingest';
import { INGESTION_VERSION } from '../../lambdas/core/ingestion/version';
import { makeHandler } from '../../lambdas/ingest/handler';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { startLocalApi } from '../../local/api';
import { lambdaContext } from '../../local/ingest-queue';
import { localS3Event, startLocalStack, type LocalStack } from '../../local/stack';
import { ENGINES, openTestDatabase, type EngineName } from '../support/databases';
import { createHashEmbedder } from '../support/hash-embedder';

process.env.POWERTOOLS_METRICS_DISABLED = 'true';

const TEXT = (marker: string) =>
  Array.from(
    { length: 12 },
    (_, i) => `Section ${i} of the ${marker} manual explains step ${i} in plain words.`,
  ).join('\n\n');

interface Row {
  id: string;
  status: string;
  failure_reason: string | null;
  chunk_count: number;
}

describe.each(ENGINES)('ingestion recovery on %s', (engine: EngineName) => {
  let dataDir: string;
  let db: Database | undefined;
  const embedder = createHashEmbedder();

  beforeEach(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'gw-recovery-'));
    // PostgreSQL is shared by both processes of a test; PGlite lives in the data folder.
    db = engine === 'postgres' ? await openTestDatabase('postgres') : undefined;
  });
  afterEach(async () => {
    await db?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  const start = (extra: Parameters<typeof startLocalStack>[0] = {}) =>
    startLocalStack({
      dataDir,
      ...(db ? { db } : {}),
      embedder,
      logLevel: 'SILENT',
      ingestion: { chunking: { targetTokens: 40, overlapTokens: 0 } },
      // Redeliveries at once: these tests are about what recovery does after them.
      redeliveryDelaysMs: [],
      ...extra,
    });

  const row = async (stack: LocalStack, key: string): Promise<Row | undefined> =>
    (
      await stack.db.query<Row>(
        'SELECT id, status, failure_reason, chunk_count FROM documents WHERE source_uri = $1',
        [`s3://${stack.s3.bucket}/${key}`],
      )
    ).rows[0];

  /** A start that finds nothing to reconcile. */
  const expectNothingAtStart = async () => {
    const stack = await start();
    await stack.queue.idle();
    expect(stack.reconciled).toEqual([]);
    await stack.stop();
  };

  const put = (stack: LocalStack, key: string, body: string) =>
    stack.s3.client.send(new PutObjectCommand({ Bucket: stack.s3.bucket, Key: key, Body: body }));

  it('at start, indexes what a previous process left behind, and only that', async () => {
    const first = await start();
    await put(first, 'tenants/acme/done.md', TEXT('done'));
    await put(first, 'tenants/acme/removed.md', TEXT('removed'));
    await put(first, 'tenants/acme/interrupted.md', TEXT('interrupted'));
    await put(first, 'tenants/acme/transient.md', TEXT('transient'));
    await first.queue.idle();
    // What a killed process leaves: a document mid-processing, one whose transient failure was
    // still to be retried, events never delivered (the queue stops listening), and a removal.
    await first.db.query(
      `UPDATE documents SET status = 'processing', lease_renewed_at = now() WHERE source_uri = $1`,
      [`s3://${first.s3.bucket}/tenants/acme/interrupted.md`],
    );
    await first.db.query(
      `UPDATE documents SET status = 'failed', failure_reason = $2, chunk_count = 0 WHERE source_uri = $1`,
      [`s3://${first.s3.bucket}/tenants/acme/transient.md`, `${TRANSIENT_FAILURE_PREFIX}db down`],
    );
    await first.queue.stop();
    await put(first, 'tenants/acme/unannounced.md', TEXT('unannounced'));
    await put(first, 'tenants/acme/users/u1/private.md', TEXT('private'));
    await first.s3.client.send(
      new DeleteObjectCommand({ Bucket: first.s3.bucket, Key: 'tenants/acme/removed.md' }),
    );
    const doneBefore = await row(first, 'tenants/acme/done.md');
    await first.stop();

    const second = await start();
    try {
      await second.queue.idle();
      expect(
        [...second.reconciled].sort((a, b) => a.key.localeCompare(b.key)).map((r) => r.reason),
      ).toEqual(['unfinished', 'removed', 'unfinished', 'new', 'new']);
      for (const key of [
        'tenants/acme/interrupted.md',
        'tenants/acme/transient.md',
        'tenants/acme/unannounced.md',
        'tenants/acme/users/u1/private.md',
      ]) {
        const r = await row(second, key);
        expect({ key, status: r?.status, failure: r?.failure_reason }).toEqual({
          key,
          status: 'indexed',
          failure: null,
        });
        expect(r!.chunk_count).toBeGreaterThan(0);
      }
      expect((await row(second, 'tenants/acme/removed.md'))?.status).toBe('deleted');
      // Untouched: same row, same status.
      expect(await row(second, 'tenants/acme/done.md')).toEqual(doneBefore);
      // One row per object, one set of chunks per document.
      const { rows } = await second.db.query<{ n: number; d: number }>(
        `SELECT count(*)::int AS n, count(DISTINCT source_uri)::int AS d FROM documents`,
      );
      expect(rows[0]!.n).toBe(rows[0]!.d);
      const dup = await second.db.query(
        `SELECT document_id, chunk_index FROM chunks GROUP BY 1, 2 HAVING count(*) > 1`,
      );
      expect(dup.rows).toEqual([]);

      // A third start finds nothing to do.
      await second.stop();
      await expectNothingAtStart();
    } finally {
      await second.stop().catch(() => undefined);
    }
  });

  it('a file written again with the same content is not taken for changed at the next start', async () => {
    const first = await start();
    await put(first, 'tenants/acme/handbook.md', TEXT('handbook'));
    await first.queue.idle();
    const before = await row(first, 'tenants/acme/handbook.md');
    // A folder uploaded again (as `groundwork start` does with its samples): a newer date, the
    // same bytes. Last-Modified counts whole seconds.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await put(first, 'tenants/acme/handbook.md', TEXT('handbook'));
    await first.queue.idle();
    await first.stop();

    const second = await start();
    try {
      await second.queue.idle();
      expect(second.reconciled).toEqual([]);
      expect(await row(second, 'tenants/acme/handbook.md')).toEqual(before);
    } finally {
      await second.stop();
    }
  });

  it('at start, indexes again a document indexed by an older version of the ingestion code, and only it', async () => {
    const first = await start();
    await put(first, 'tenants/acme/old.md', TEXT('old'));
    await put(first, 'tenants/acme/current.md', TEXT('current'));
    await put(first, 'tenants/acme/deadly.md', TEXT('deadly'));
    await first.queue.idle();
    // One the process died on in each of three attempts keeps the chunks it has.
    await first.db.query(
      `UPDATE documents SET ingestion_version = 0, lease_expiries = 3 WHERE source_uri = $1`,
      [`s3://${first.s3.bucket}/tenants/acme/deadly.md`],
    );
    // What a previous release left: chunks cut by older parsers or an older chunker, recorded
    // with its version (0: before versions were recorded). Its chunks stand for the old cut.
    const oldUri = `s3://${first.s3.bucket}/tenants/acme/old.md`;
    await first.db.query(
      `UPDATE documents SET ingestion_version = 0, chunk_count = 1 WHERE source_uri = $1`,
      [oldUri],
    );
    await first.db.query(
      `DELETE FROM chunks WHERE chunk_index > 0
          AND document_id = (SELECT id FROM documents WHERE source_uri = $1)`,
      [oldUri],
    );
    const current = await row(first, 'tenants/acme/current.md');
    await first.stop();

    const second = await start();
    try {
      await second.queue.idle();
      expect(second.reconciled).toEqual([
        { key: 'tenants/acme/old.md', reason: 'outdated', exists: true },
      ]);
      const again = await second.db.query<{ ingestion_version: number; chunk_count: number }>(
        'SELECT ingestion_version, chunk_count FROM documents WHERE source_uri = $1',
        [oldUri],
      );
      expect(again.rows[0]!.ingestion_version).toBe(INGESTION_VERSION);
      expect(again.rows[0]!.chunk_count).toBeGreaterThan(1);
      const chunks = await second.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM chunks
          WHERE document_id = (SELECT id FROM documents WHERE source_uri = $1)`,
        [oldUri],
      );
      expect(chunks.rows[0]!.n).toBe(again.rows[0]!.chunk_count);
      expect(await row(second, 'tenants/acme/current.md')).toEqual(current);
      await second.stop();
      // Indexed by this version now: the next start leaves it alone.
      await expectNothingAtStart();
    } finally {
      await second.stop().catch(() => undefined);
    }
  });

  it('in AWS, the scheduled sweep indexes again the documents an older version indexed, batch after batch, but not one the worker died on 3 times', async () => {
    // Two a batch: the run goes on to the next batch while it has time.
    const stack = await start({ reconcile: false, recovery: { sweepBatch: 2 } });
    try {
      const keys = ['a.md', 'b.md', 'c.md'].map((name) => `tenants/acme/${name}`);
      for (const key of keys) await put(stack, key, TEXT(key));
      await put(stack, 'tenants/beta/d.md', TEXT('beta'));
      await stack.queue.idle();
      await stack.db.query(`UPDATE documents SET ingestion_version = 0 WHERE source_uri <> $1`, [
        `s3://${stack.s3.bucket}/tenants/beta/d.md`,
      ]);
      // Three attempts counted that no worker finished: a file the new code cannot get through.
      const stuck = 'tenants/acme/stuck.md';
      await put(stack, stuck, TEXT(stuck));
      await stack.queue.idle();
      await stack.db.query(
        `UPDATE documents SET ingestion_version = 0, lease_expiries = 3 WHERE source_uri = $1`,
        [`s3://${stack.s3.bucket}/${stuck}`],
      );
      const stuckBefore = await row(stack, stuck);
      const handler = makeHandler({
        ingestion: stack.ingestion,
        recovery: stack.recovery,
        logger: new Logger({ logLevel: 'SILENT' }),
        metrics: new Metrics({ namespace: 'test' }),
      });
      const outdated = async () =>
        (
          await stack.db.query<{ n: number }>(
            'SELECT count(*)::int AS n FROM documents WHERE ingestion_version < $1',
            [INGESTION_VERSION],
          )
        ).rows[0]!.n;
      expect(await outdated()).toBe(4);
      await handler({ groundwork: 'lease-sweep' }, lambdaContext('ingest'));
      expect(await outdated()).toBe(1);
      for (const key of keys)
        expect(await row(stack, key)).toMatchObject({ status: 'indexed', failure_reason: null });
      // Left as it was: indexed, served by its old chunks.
      expect(await row(stack, stuck)).toEqual(stuckBefore);
      expect(await stack.recovery.sweepOutdated()).toEqual([]);
    } finally {
      await stack.stop();
    }
  });

  it("in AWS, the outdated sweep stops taking up documents when the run's time is short", async () => {
    const stack = await start({ reconcile: false });
    try {
      for (const name of ['a.md', 'b.md', 'c.md'])
        await put(stack, `tenants/acme/${name}`, TEXT(name));
      await stack.queue.idle();
      await stack.db.query('UPDATE documents SET ingestion_version = 0');
      const handler = makeHandler({
        ingestion: stack.ingestion,
        recovery: stack.recovery,
        logger: new Logger({ logLevel: 'SILENT' }),
        metrics: new Metrics({ namespace: 'test' }),
        sweepReserveMs: 60_000,
      });
      const outdated = async () =>
        (
          await stack.db.query<{ n: number }>(
            'SELECT count(*)::int AS n FROM documents WHERE ingestion_version < $1',
            [INGESTION_VERSION],
          )
        ).rows[0]!.n;
      // A run with less time left than the reserve takes up nothing.
      const short = { ...lambdaContext('ingest'), getRemainingTimeInMillis: () => 30_000 };
      await handler({ groundwork: 'lease-sweep' }, short);
      expect(await outdated()).toBe(3);
      // Time for one document: the sweep looks before its first batch and before each document.
      let looks = 0;
      const outcomes = await stack.recovery.sweepOutdated({ shouldStop: () => ++looks > 2 });
      expect(outcomes).toHaveLength(1);
      expect(await outdated()).toBe(2);
    } finally {
      await stack.stop();
    }
  });

  it('at start, fails a document abandoned by more processes than the limit, and processes the others again', async () => {
    const first = await start();
    await put(first, 'tenants/acme/killer.md', TEXT('killer'));
    await put(first, 'tenants/acme/unlucky.md', TEXT('unlucky'));
    await first.queue.idle();
    // Both left processing by a process that died: one for the fourth time (a file that brings
    // the process down at every start), one for the first.
    for (const [key, expiries] of [
      ['tenants/acme/killer.md', 3],
      ['tenants/acme/unlucky.md', 0],
    ] as const) {
      await first.db.query(
        `UPDATE documents SET status = 'processing', lease_renewed_at = now(), lease_expiries = $2
          WHERE source_uri = $1`,
        [`s3://${first.s3.bucket}/${key}`, expiries],
      );
    }
    await first.stop();

    const second = await start();
    try {
      await second.queue.idle();
      const killer = await row(second, 'tenants/acme/killer.md');
      expect(killer).toMatchObject({ status: 'failed', chunk_count: 0 });
      expect(killer!.failure_reason).toMatch(/stopped 4 times without finishing.*retry it/);
      expect(second.reconciled.map((r) => r.key)).toEqual(['tenants/acme/unlucky.md']);
      expect(await row(second, 'tenants/acme/unlucky.md')).toMatchObject({ status: 'indexed' });
    } finally {
      await second.stop();
    }
  });

  it('without reconciliation the same leftovers stay stranded (the check can fail)', async () => {
    const first = await start();
    await first.queue.stop();
    await put(first, 'tenants/acme/unannounced.md', TEXT('unannounced'));
    await first.stop();
    const second = await start({ reconcile: false });
    await second.queue.idle();
    expect(await row(second, 'tenants/acme/unannounced.md')).toBeUndefined();
    await second.stop();
  });

  it('the lease sweep processes abandoned documents again, and fails one that keeps dying', async () => {
    const stack = await start({ reconcile: false });
    try {
      await put(stack, 'tenants/acme/abandoned.md', TEXT('abandoned'));
      await put(stack, 'tenants/acme/fresh.md', TEXT('fresh'));
      await put(stack, 'tenants/acme/cursed.md', TEXT('cursed'));
      await stack.queue.idle();
      const uri = (k: string) => `s3://${stack.s3.bucket}/tenants/acme/${k}`;
      await stack.db.query(
        `UPDATE documents SET status = 'processing', lease_renewed_at = now() - interval '1 hour'
          WHERE source_uri = ANY($1)`,
        [[uri('abandoned.md'), uri('cursed.md')]],
      );
      await stack.db.query(`UPDATE documents SET lease_expiries = 3 WHERE source_uri = $1`, [
        uri('cursed.md'),
      ]);
      await stack.db.query(
        `UPDATE documents SET status = 'processing', lease_renewed_at = now() WHERE source_uri = $1`,
        [uri('fresh.md')],
      );
      const outcomes = await stack.recovery.sweepExpiredLeases();
      expect(outcomes.map((o) => o.action).sort()).toEqual(['failed', 'indexed']);
      expect((await row(stack, 'tenants/acme/abandoned.md'))?.status).toBe('indexed');
      expect(await row(stack, 'tenants/acme/cursed.md')).toMatchObject({
        status: 'failed',
        failure_reason: expect.stringContaining('stopped 4 times without finishing'),
        chunk_count: 0,
      });
      // A live lease is left alone.
      expect((await row(stack, 'tenants/acme/fresh.md'))?.status).toBe('processing');
      expect(await stack.recovery.sweepExpiredLeases()).toEqual([]);
    } finally {
      await stack.stop();
    }
  });

  it('the embedded default sweeps expired leases as it runs, not only at start', async () => {
    const stack = await start({ reconcile: false, leaseSweepMs: 100 });
    try {
      await put(stack, 'tenants/acme/stranded.md', TEXT('stranded'));
      await stack.queue.idle();
      // A failure the database could not record leaves the document processing.
      await stack.db.query(
        `UPDATE documents SET status = 'processing', lease_renewed_at = now() - interval '1 hour'
          WHERE source_uri = $1`,
        [`s3://${stack.s3.bucket}/tenants/acme/stranded.md`],
      );
      const started = Date.now();
      while ((await row(stack, 'tenants/acme/stranded.md'))?.status !== 'indexed') {
        if (Date.now() - started > 20_000) throw new Error('the sweep never ran');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      await stack.stop();
    }
  });

  it('runs one sweep at a time, and stop() waits for the one running', async () => {
    const stack = await start({ reconcile: false, leaseSweepMs: 50 });
    let calls = 0;
    let active = 0;
    let most = 0;
    // The first sweep runs long (it has documents to process), the others are quick.
    stack.recovery.sweepExpiredLeases = async () => {
      calls += 1;
      active += 1;
      most = Math.max(most, active);
      await new Promise((resolve) => setTimeout(resolve, calls === 1 ? 600 : 5));
      active -= 1;
      return [];
    };
    await new Promise((resolve) => setTimeout(resolve, 300));
    await stack.stop();
    expect(active).toBe(0);
    const after = calls;
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect({ most, more: calls - after }).toEqual({ most: 1, more: 0 });
  });

  it('a message that exhausts its receives marks its document failed with the reason', async () => {
    const stack = await start({ reconcile: false });
    try {
      embedder.failNext = 100;
      await put(stack, 'tenants/acme/unlucky.md', TEXT('unlucky'));
      await stack.queue.idle();
      embedder.failNext = 0;
      expect(stack.queue.deadLetters).toHaveLength(1);
      expect(await row(stack, 'tenants/acme/unlucky.md')).toMatchObject({
        status: 'failed',
        failure_reason:
          'Indexing failed after 3 attempts: embedding model unavailable (injected). ' +
          'Retry it (POST /api/documents/{id}/retry) once the cause is fixed.',
      });

      // In AWS the same function consumes the dead-letter queue: a record from its ARN.
      const dlq = 'arn:aws:sqs:us-east-1:000000000000:dead-letters';
      const handler = makeHandler({
        ingestion: stack.ingestion,
        recovery: stack.recovery,
        deadLetterQueueArn: dlq,
        logger: new Logger({ logLevel: 'SILENT' }),
        metrics: new Metrics({ namespace: 'test' }),
      });
      await put(stack, 'tenants/acme/stuck.md', TEXT('stuck'));
      await stack.queue.idle();
      await stack.db.query(`UPDATE documents SET status = 'processing' WHERE source_uri = $1`, [
        `s3://${stack.s3.bucket}/tenants/acme/stuck.md`,
      ]);
      const record = (key: string, receives: string): SQSRecord => ({
        messageId: key,
        receiptHandle: key,
        body: JSON.stringify(localS3Event(stack.s3.bucket, key, true)),
        attributes: {
          ApproximateReceiveCount: receives,
          SentTimestamp: '0',
          SenderId: 's3',
          ApproximateFirstReceiveTimestamp: '0',
        },
        messageAttributes: {},
        md5OfBody: '',
        eventSource: 'aws:sqs',
        eventSourceARN: dlq,
        awsRegion: 'us-east-1',
      });
      const res = await handler(
        {
          Records: [
            record('tenants/acme/stuck.md', '5'),
            record('tenants/acme/never-seen.md', '5'),
          ],
        },
        lambdaContext('ingest'),
      );
      expect(res.batchItemFailures).toEqual([]);
      expect(await row(stack, 'tenants/acme/stuck.md')).toMatchObject({
        status: 'failed',
        failure_reason: expect.stringMatching(
          /^Indexing failed after 5 attempts: the worker did not finish/,
        ),
      });
      // An object the index never recorded still gets a row saying why.
      expect((await row(stack, 'tenants/acme/never-seen.md'))?.status).toBe('failed');
      // A stale dead letter for a document indexed since changes nothing.
      await handler({ Records: [record('tenants/acme/unlucky.md', '5')] }, lambdaContext('x'));
      await put(stack, 'tenants/acme/unlucky.md', TEXT('lucky now'));
      await stack.queue.idle();
      await handler({ Records: [record('tenants/acme/unlucky.md', '5')] }, lambdaContext('x'));
      expect((await row(stack, 'tenants/acme/unlucky.md'))?.status).toBe('indexed');
    } finally {
      embedder.failNext = 0;
      await stack.stop();
    }
  });

  it('POST /api/documents/{id}/retry re-indexes a stuck document, and refuses a live one', async () => {
    const stack = await start({ reconcile: false });
    const api = await startLocalApi(stack);
    try {
      const token = api.issuer.issueToken({ sub: 'alice', tenantId: 'acme' });
      const call = async (method: string, p: string, body?: unknown) => {
        const res = await fetch(`${api.server.url}${p}`, {
          method,
          headers: {
            authorization: `Bearer ${token}`,
            ...(body ? { 'content-type': 'application/json' } : {}),
          },
          ...(body ? { body: JSON.stringify(body) } : {}),
        });
        return { status: res.status, body: (await res.json()) as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
      };
      const bytes = new TextEncoder().encode(TEXT('retry'));
      const created = await call('POST', '/api/documents', {
        filename: 'retry.md',
        content_type: 'text/markdown',
        size_bytes: bytes.byteLength,
      });
      expect(created.status).toBe(201);
      const put = await fetch(created.body.upload.url, {
        method: 'PUT',
        headers: created.body.upload.headers,
        body: bytes,
      });
      expect(put.status).toBe(200);
      await stack.queue.idle();
      const id = created.body.document.id as string;
      await stack.db.query(
        `UPDATE documents SET status = 'processing', lease_renewed_at = now() WHERE id = $1`,
        [id],
      );
      const live = await call('POST', `/api/documents/${id}/retry`);
      expect(live.status).toBe(409);
      expect(live.body.error.code).toBe('not_failed');

      await stack.db.query(
        `UPDATE documents SET lease_renewed_at = now() - interval '1 hour' WHERE id = $1`,
        [id],
      );
      const retried = await call('POST', `/api/documents/${id}/retry`);
      expect(retried.status).toBeLessThan(300);
      expect(retried.body.status).toBe('queued');
      await stack.queue.idle();
      expect((await call('GET', `/api/documents/${id}`)).body).toMatchObject({ status: 'indexed' });
    } finally {
      await api.close();
      await stack.stop();
    }
  });
});
