/**
 * Fault injection (docs/ingestion.md, "Nothing stranded"): the embedded default killed with
 * SIGKILL during ingestion and started again, PostgreSQL lost mid-request (a proxy that cuts
 * every connection and refuses new ones, and a terminated backend), the LLM and the embedding
 * model failing at query time, the embedding model and S3 failing during ingestion, and
 * duplicate and out-of-order S3 events.
 */
import { errorStatus } from '../support/route-statuses';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { DeleteObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { createLocalIssuer } from '../../lambdas/adapters/auth/local-issuer';
import type { Database } from '../../lambdas/adapters/postgres/database';
import { createPgDatabase } from '../../lambdas/adapters/postgres/pg-database';
import { openPGlite } from '../../lambdas/adapters/postgres/pglite-database';
import { createS3ObjectStore } from '../../lambdas/adapters/s3/s3-object-store';
import { createDocumentParser } from '../../lambdas/adapters/parsers';
import { createDocumentRepository } from '../../lambdas/adapters/postgres/document-repository';
import { createTokenCounter } from '../../lambdas/adapters/tokenizer/gpt-token-counter';
import { createOpenAiCompatibleLlm } from '../../lambdas/adapters/llm/openai-compatible';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { UnavailableError } from '../../lambdas/core/errors';
import { createIngestion } from '../../lambdas/core/ingestion/ingest';
import { createIngestRecovery } from '../../lambdas/core/ingestion/recovery';
import { makeHandler, processDeadLetter } from '../../lambdas/ingest/handler';
import { startLocalApi, type LocalApi } from '../../local/api';
import { localKeyDir } from '../../local/commands/token';
import { createIngestQueue } from '../../local/ingest-queue';
import { readLock } from '../../local/data-dir-lock';
import { localS3Client, localS3Event, startLocalStack, type LocalStack } from '../../local/stack';
import {
  ENGINES,
  openTestDatabase,
  TEST_DATABASE_URL,
  type EngineName,
} from '../support/databases';
import { startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai';
import { createHashEmbedder } from '../support/hash-embedder';

process.env.POWERTOOLS_METRICS_DISABLED = 'true';

const ROOT = path.join(__dirname, '..', '..');
const DOCUMENTS = 20;

const text = (i: number) =>
  Array.from(
    { length: 12 },
    (_, s) => `Policy ${i}, section ${s}: staff member ${i} files form ${s} within ${s + 2} days.`,
  ).join('\n\n');

interface ListedDocument {
  source_uri: string;
  status: string;
  failure_reason: string | null;
}

describe('the embedded default killed with SIGKILL during ingestion', () => {
  let dataDir: string;
  let child: ChildProcess | undefined;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'gw-kill-'));
  });
  afterAll(async () => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    await rm(dataDir, { recursive: true, force: true });
  });

  /** Starts `groundwork start` and waits until its lock names its endpoints. */
  async function start(): Promise<{ httpUrl: string; s3Endpoint: string }> {
    const proc = spawn(process.execPath, ['local/groundwork.cjs', 'start', '--no-samples'], {
      cwd: ROOT,
      env: {
        ...process.env,
        GROUNDWORK_DATA_DIR: dataDir,
        PORT: '0',
        GROUNDWORK_LOG_LEVEL: 'ERROR',
        GROUNDWORK_EMBED_THREADS: '1',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child = proc;
    let stderr = '';
    proc.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise<never>((_, reject) =>
      proc.once('exit', (code) =>
        reject(new Error(`groundwork start exited (${code}): ${stderr}`)),
      ),
    );
    const ready = (async () => {
      for (;;) {
        const lock = await readLock(dataDir);
        if (lock && lock.pid === proc.pid && lock.httpUrl && lock.s3Endpoint) {
          return { httpUrl: lock.httpUrl, s3Endpoint: lock.s3Endpoint };
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    return Promise.race([ready, exited]);
  }

  it('ends with every document indexed once, none lost or duplicated', async () => {
    const first = await start();
    const credentials = JSON.parse(
      await readFile(path.join(localKeyDir(dataDir), 's3-credentials.json'), 'utf8'),
    ) as { accessKeyId: string; secretAccessKey: string };
    const s3: S3Client = localS3Client(first.s3Endpoint, credentials);
    const keys = Array.from({ length: DOCUMENTS }, (_, i) => `tenants/acme/policies/p${i}.md`);
    await Promise.all(
      keys.map((key, i) =>
        s3.send(new PutObjectCommand({ Bucket: 'groundwork-local', Key: key, Body: text(i) })),
      ),
    );
    s3.destroy();
    // Killed as soon as the last upload is stored: its queue (in memory) still holds work.
    const killed = new Promise((r) => child!.once('exit', r));
    child!.kill('SIGKILL');
    await killed;
    // The premise: work was stranded (the uploads end long before one embedding thread has
    // indexed 20 documents).
    const atKill = await openPGlite(path.join(dataDir, 'pgdata'));
    try {
      const { rows } = await atKill.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM documents WHERE status = 'indexed'`,
      );
      expect(rows[0]!.n).toBeLessThan(DOCUMENTS);
    } finally {
      await atKill.close();
    }

    const second = await start();
    const issuer = await createLocalIssuer({ keyDir: localKeyDir(dataDir) });
    const token = issuer.issueToken({ sub: 'checker', tenantId: 'acme' });
    let listed: ListedDocument[] = [];
    // Until nothing is queued or processing (the suite's timeout bounds the wait).
    for (;;) {
      const res = await fetch(`${second.httpUrl}/api/documents?limit=100`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(res.status).toBe(200);
      listed = ((await res.json()) as { documents: ListedDocument[] }).documents;
      const settled = listed.filter((d) => d.status === 'indexed' || d.status === 'failed');
      if (listed.length >= DOCUMENTS && settled.length === listed.length) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    const stopped = new Promise((r) => child!.once('exit', r));
    child!.kill('SIGTERM');
    await stopped;

    expect(listed.map((d) => d.source_uri).sort()).toEqual(
      keys.map((k) => `s3://groundwork-local/${k}`).sort(),
    );
    for (const d of listed) {
      expect({ uri: d.source_uri, status: d.status }).toEqual({
        uri: d.source_uri,
        status: 'indexed',
      });
    }
    // One row per object and one set of chunks per document, read from the data folder.
    const db = await openPGlite(path.join(dataDir, 'pgdata'));
    try {
      const rows = await db.query<{ n: number; d: number }>(
        'SELECT count(*)::int AS n, count(DISTINCT source_uri)::int AS d FROM documents',
      );
      expect(rows.rows[0]).toEqual({ n: DOCUMENTS, d: DOCUMENTS });
      const duplicated = await db.query(
        'SELECT document_id, chunk_index FROM chunks GROUP BY 1, 2 HAVING count(*) > 1',
      );
      expect(duplicated.rows).toEqual([]);
      const chunkless = await db.query(
        `SELECT source_uri FROM documents d
          WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.document_id = d.id)`,
      );
      expect(chunkless.rows).toEqual([]);
    } finally {
      await db.close();
    }
  });
});

/**
 * A TCP proxy to PostgreSQL that can be cut: every open connection is destroyed and new ones
 * are refused until it is restored.
 */
async function startCuttableProxy(target: { host: string; port: number }) {
  const sockets = new Set<net.Socket>();
  let cut = false;
  const server = net.createServer((client) => {
    if (cut) {
      client.destroy();
      return;
    }
    const upstream = net.connect(target.port, target.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as net.AddressInfo).port,
    cut() {
      cut = true;
      for (const s of sockets) s.destroy();
    },
    restore() {
      cut = false;
    },
    close: () => new Promise((r) => server.close(r)),
  };
}

describe('PostgreSQL unavailable mid-request', () => {
  let schemaDb: Database;
  let proxied: Database;
  let proxy: Awaited<ReturnType<typeof startCuttableProxy>>;
  let stack: LocalStack;
  let api: LocalApi;
  let token: string;

  beforeAll(async () => {
    schemaDb = await openTestDatabase('postgres');
    const { rows } = await schemaDb.query<{ schema: string }>('SELECT current_schema() AS schema');
    const url = new URL(TEST_DATABASE_URL);
    proxy = await startCuttableProxy({ host: url.hostname, port: Number(url.port || 5432) });
    proxied = createPgDatabase({
      user: decodeURIComponent(url.username),
      password: decodeURIComponent(url.password),
      database: url.pathname.slice(1),
      host: '127.0.0.1',
      port: proxy.port,
      options: `-c search_path=${rows[0]!.schema},public`,
      connectionTimeoutMillis: 2000,
    });
    stack = await startLocalStack({
      db: proxied,
      embedder: createHashEmbedder(),
      logLevel: 'SILENT',
    });
    api = await startLocalApi(stack);
    token = api.issuer.issueToken({ sub: 'alice', tenantId: 'acme' });
    await stack.s3.client.send(
      new PutObjectCommand({ Bucket: stack.s3.bucket, Key: 'tenants/acme/a.md', Body: text(1) }),
    );
    await stack.queue.idle();
  });
  afterAll(async () => {
    await api?.close();
    await stack?.stop();
    await proxied?.close();
    await proxy?.close();
    await schemaDb?.close();
  });

  const call = (method: string, route: string, body?: unknown) =>
    fetch(`${api.server.url}${route}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });

  it('answers 503 (500 on seed 001 routes) retryable while it is cut off, and serves again once it is back', async () => {
    expect((await call('GET', '/api/documents')).status).toBe(200);
    proxy.cut();
    for (const [method, route, body] of [
      ['GET', '/api/documents', undefined],
      ['POST', '/api/rag/search', { query_text: 'form 3 within days', top_k: 3 }],
      [
        'POST',
        '/api/documents',
        { filename: 'b.md', content_type: 'text/markdown', size_bytes: 10 },
      ],
    ] as const) {
      const res = await call(method, route, body);
      const payload = (await res.json()) as { error?: { retryable: boolean } };
      expect({ route, method, status: res.status, retryable: payload.error?.retryable }).toEqual({
        route,
        method,
        status: errorStatus(method, route, 'unavailable'),
        retryable: true,
      });
    }
    proxy.restore();
    expect((await call('GET', '/api/documents')).status).toBe(200);
  });

  it('a backend terminated during a query is UnavailableError (503), not an internal error', async () => {
    const direct = createPgDatabase({ connectionString: TEST_DATABASE_URL, max: 1 });
    try {
      const { rows } = await direct.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      const sleeping = direct.query('SELECT pg_sleep(30)');
      const admin = createPgDatabase({ connectionString: TEST_DATABASE_URL, max: 1 });
      try {
        // Once the sleep runs on that backend, terminate it.
        for (;;) {
          const active = await admin.query<{ state: string }>(
            `SELECT state FROM pg_stat_activity WHERE pid = $1`,
            [rows[0]!.pid],
          );
          if (active.rows[0]?.state === 'active') break;
        }
        await admin.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
      } finally {
        await admin.close();
      }
      await expect(sleeping).rejects.toBeInstanceOf(UnavailableError);
      // The pool replaces the lost connection.
      expect((await direct.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    } finally {
      await direct.close();
    }
  });

  it('a connection lost between the statements of a transaction fails it, and the process lives on', async () => {
    const direct = createPgDatabase({ connectionString: TEST_DATABASE_URL, max: 1 });
    const admin = createPgDatabase({ connectionString: TEST_DATABASE_URL, max: 1 });
    // A lost connection with no statement running is an 'error' event on the checked-out
    // client; unheard, Node throws it out of the event loop and the process dies.
    const uncaught: unknown[] = [];
    const record = (err: unknown) => uncaught.push(err);
    process.on('uncaughtException', record);
    try {
      const work = direct.transaction(async (tx) => {
        const { rows } = await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
        await admin.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
        // Other work (an embedding, an S3 read) while the connection goes.
        await new Promise((resolve) => setTimeout(resolve, 300));
        return tx.query('SELECT 1');
      });
      await expect(work).rejects.toBeInstanceOf(UnavailableError);
      expect(uncaught).toEqual([]);
      expect((await direct.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    } finally {
      process.off('uncaughtException', record);
      await admin.close();
      await direct.close();
    }
  });
});

interface AnswerOrError {
  flags: Record<string, boolean>;
  citations: unknown[];
  error?: { code: string; retryable: boolean };
}

describe('the LLM and the embedding model failing at query time', () => {
  let fake: FakeOpenAi;
  let stack: LocalStack;
  let api: LocalApi;
  let token: string;
  const embedder = createHashEmbedder();

  beforeAll(async () => {
    fake = await startFakeOpenAi();
    stack = await startLocalStack({
      embedder,
      llm: createOpenAiCompatibleLlm({
        baseUrl: fake.url,
        model: 'test-model',
        maxRetries: 1,
        retryDelayMs: 1,
      }),
      logLevel: 'SILENT',
      // Calibrated for the hash embedder on this fixture (as in answer-api.test.ts).
      answer: {
        calibrationByModel: { 'test/hash-512': { cosineWeight: 0.5, high: 0.3, medium: 0.12 } },
      },
    });
    api = await startLocalApi(stack);
    token = api.issuer.issueToken({ sub: 'alice', tenantId: 'acme' });
    for (const [key, body] of [
      [
        'tenants/acme/shipping.md',
        '# Shipping\n\nExpress shipping takes two business days. Standard shipping takes five business days.',
      ],
      ['tenants/acme/refunds.md', '# Refunds\n\nRefunds take fourteen days to reach the account.'],
    ]) {
      await stack.s3.client.send(
        new PutObjectCommand({ Bucket: stack.s3.bucket, Key: key, Body: body }),
      );
    }
    await stack.queue.idle();
  });
  afterAll(async () => {
    await api?.close();
    await stack?.stop();
    await fake?.close();
  });

  const post = async (route: string, body: unknown) => {
    const res = await fetch(`${api.server.url}${route}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as AnswerOrError };
  };

  it('the LLM failing: 500 (seed 001) with the retrieved sources as citations', async () => {
    fake.setBehaviour({ kind: 'always-fail', status: 500 });
    const { status, body } = await post('/api/rag/answer', {
      query_text: 'How long does express shipping take?',
    });
    expect(status).toBe(500);
    expect(body.flags.fallback_to_generic).toBe(true);
    expect(body.citations.length).toBeGreaterThan(0);
    expect(JSON.stringify(body.citations)).toContain('shipping.md');
    fake.reset();
  });

  it('the embedding model failing: search and answer 500 retryable (seed 001)', async () => {
    embedder.failNext = 1_000;
    try {
      const search = await post('/api/rag/search', { query_text: 'express shipping', top_k: 3 });
      expect(search.status).toBe(500);
      expect(search.body.error).toMatchObject({ code: 'unavailable', retryable: true });
      const answer = await post('/api/rag/answer', {
        query_text: 'How long does express shipping take?',
      });
      expect(answer.status).toBe(500);
      expect(answer.body.error).toMatchObject({ retryable: true });
    } finally {
      embedder.failNext = 0;
    }
    expect(
      (await post('/api/rag/search', { query_text: 'express shipping', top_k: 3 })).status,
    ).toBe(200);
  });
});

describe.each(ENGINES)('faults during ingestion on %s', (engine: EngineName) => {
  let stack: LocalStack;
  let db: Database | undefined;
  const embedder = createHashEmbedder();

  beforeAll(async () => {
    db = engine === 'postgres' ? await openTestDatabase('postgres') : undefined;
    stack = await startLocalStack({
      ...(db ? { db } : {}),
      embedder,
      logLevel: 'SILENT',
    });
  });
  afterAll(async () => {
    await stack?.stop();
    await db?.close();
  });

  const status = async (key: string) =>
    (
      await stack.db.query<{ status: string; failure_reason: string | null; n: number }>(
        `SELECT status, failure_reason,
                (SELECT count(*)::int FROM chunks c WHERE c.document_id = d.id) AS n
           FROM documents d WHERE source_uri = $1`,
        [`s3://${stack.s3.bucket}/${key}`],
      )
    ).rows;

  it('the embedding model failing: retried by the queue, then indexed once', async () => {
    embedder.failNext = 1;
    const key = 'tenants/acme/embedder.md';
    await stack.s3.client.send(
      new PutObjectCommand({ Bucket: stack.s3.bucket, Key: key, Body: text(2) }),
    );
    await stack.queue.idle();
    expect(embedder.failNext).toBe(0); // the failure happened
    const rows = await status(key);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: 'indexed', failure_reason: null });
    expect(rows[0]!.n).toBeGreaterThan(0);
  });

  it('S3 failing: the event retried, then failed with its reason; indexed when S3 is back', async () => {
    const key = 'tenants/acme/s3-down.md';
    await stack.s3.client.send(
      new PutObjectCommand({ Bucket: stack.s3.bucket, Key: key, Body: text(3) }),
    );
    await stack.queue.idle();
    await stack.db.query('DELETE FROM documents WHERE source_uri = $1', [
      `s3://${stack.s3.bucket}/${key}`,
    ]);
    // The pipeline of the stack, with an S3 that answers HEAD but refuses every GET (its
    // endpoint refuses connections), fed through the local queue and its dead-letter consumer.
    const dead = new S3Client({
      endpoint: 'http://127.0.0.1:9',
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: stack.s3.credentials,
      maxAttempts: 1,
    });
    const live = createS3ObjectStore(stack.s3.client);
    const down = createS3ObjectStore(dead);
    const objects = { ...live, get: (b: string, k: string) => down.get(b, k) };
    const store = createDocumentRepository(stack.db);
    const ingestion = createIngestion({
      store,
      objects,
      parser: createDocumentParser(),
      embedder,
      tokens: createTokenCounter(),
    });
    const recovery = createIngestRecovery({ store, objects, ingestion });
    const handler = makeHandler({
      ingestion,
      recovery,
      logger: new Logger({ logLevel: 'SILENT' }),
      metrics: new Metrics({ namespace: 'test' }),
    });
    const queue = createIngestQueue((event, context) => handler(event, context), {
      onDeadLetter: async (record) => {
        await processDeadLetter(recovery, record);
      },
    });
    queue.push(localS3Event(stack.s3.bucket, key, true));
    await queue.idle();
    await queue.stop();
    dead.destroy();
    expect(queue.deadLetters).toHaveLength(1);
    const failed = await status(key);
    expect(failed).toHaveLength(1);
    expect(failed[0]!.status).toBe('failed');
    expect(failed[0]!.failure_reason).toMatch(/^Indexing failed after 3 attempts: .+ Retry it/);

    // S3 is back: a retry (or the next event) indexes it, in the same row.
    await stack.ingestion.syncObject(stack.s3.bucket, key);
    const rows = await status(key);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: 'indexed', failure_reason: null });
  });

  it('duplicate and out-of-order S3 events leave exactly the right rows', async () => {
    const key = 'tenants/acme/events.md';
    const uri = `s3://${stack.s3.bucket}/${key}`;
    await stack.s3.client.send(
      new PutObjectCommand({ Bucket: stack.s3.bucket, Key: key, Body: text(4) }),
    );
    await stack.queue.idle();
    const [first] = await status(key);
    const chunks = async () =>
      (
        await stack.db.query<{ n: number; d: number }>(
          `SELECT count(*)::int AS n, count(DISTINCT chunk_index)::int AS d FROM chunks c
             JOIN documents d ON d.id = c.document_id WHERE d.source_uri = $1`,
          [uri],
        )
      ).rows[0]!;
    // The same event twice, and a removal announced while the object still exists.
    stack.queue.push(localS3Event(stack.s3.bucket, key, true));
    stack.queue.push(localS3Event(stack.s3.bucket, key, true));
    stack.queue.push(localS3Event(stack.s3.bucket, key, false));
    await stack.queue.idle();
    expect(await status(key)).toEqual([first]);
    const before = await chunks();
    expect(before.n).toBe(before.d);
    expect(before.n).toBe(first!.n);

    // Removed, then its creation announced late (and twice): nothing is resurrected.
    await stack.s3.client.send(new DeleteObjectCommand({ Bucket: stack.s3.bucket, Key: key }));
    await stack.queue.idle();
    stack.queue.push(localS3Event(stack.s3.bucket, key, true));
    stack.queue.push(localS3Event(stack.s3.bucket, key, true));
    await stack.queue.idle();
    expect(await status(key)).toEqual([{ status: 'deleted', failure_reason: null, n: 0 }]);
  });
});
