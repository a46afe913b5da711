/**
 * Reads on a second connection (lambdas/adapters/postgres/databases.ts) on the real PostgreSQL
 * server: the read connection logs in as a role granted nothing but the read group (SELECT only),
 * as an Aurora reader refuses writes. Documents are indexed on the writer through the S3 emulator;
 * search and answers served by the local HTTP server retrieve through the read connection; a write
 * sent to it fails; and a thread's messages, read right after they are written, come from the
 * writer. The same through the connection strings `groundwork start` reads
 * (GROUNDWORK_DATABASE_URL, GROUNDWORK_DATABASE_READ_URL). Roles are cluster-wide, so the logins
 * are unique per run and dropped afterwards.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { Client } from 'pg';
import { READ_GROUP_ROLE } from '../../lambdas/adapters/postgres/app-role';
import { createConversationRepository } from '../../lambdas/adapters/postgres/conversation-repository';
import type { Database, Queryable } from '../../lambdas/adapters/postgres/database';
import { runInDbScope } from '../../lambdas/adapters/postgres/db-scope';
import { createPgDatabase } from '../../lambdas/adapters/postgres/pg-database';
import { quoteIdentifier } from '../../lambdas/adapters/postgres/sql-params';
import { startLocalApi, type LocalApi } from '../../local/api';
import { loadLocalEnv, stackOptionsFromEnv } from '../../local/config';
import { startLocalStack, type LocalStack } from '../../local/stack';
import { openTestDatabase, TEST_DATABASE_URL } from '../support/databases';
import { createHashEmbedder } from '../support/hash-embedder';

process.env.POWERTOOLS_METRICS_DISABLED = 'true';

const login = `gw_test_reader_${randomBytes(4).toString('hex')}`;
const password = randomBytes(12).toString('hex');
const alice = { tenantId: 'acme', userId: 'alice' };

/** Records the text of every statement a database runs, transactions included. */
function recording(db: Database, statements: string[]): Database {
  const wrap = (q: Queryable): Queryable => ({
    query: (text, params) => (statements.push(text), q.query(text, params)),
    exec: (script) => (statements.push(script), q.exec(script)),
  });
  return {
    ...db,
    ...wrap(db),
    call: (text, params) => (statements.push(text), db.call(text, params)),
    transaction: (fn, settings) => db.transaction((tx) => fn(wrap(tx)), settings),
  };
}

/** The SQLSTATE a promise fails with, or 'ok'. */
async function codeOf(work: () => Promise<unknown>): Promise<string> {
  try {
    await work();
    return 'ok';
  } catch (err) {
    const e = err as { code?: string; cause?: { code?: string } };
    return e.code ?? e.cause?.code ?? String(err);
  }
}

async function admin<T>(fn: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

describe('reads on a read-only connection (PostgreSQL)', () => {
  let writer: Database;
  let reads: Database;
  const readStatements: string[] = [];
  let stack: LocalStack;
  let api: LocalApi;
  let token: string;

  beforeAll(async () => {
    writer = await openTestDatabase('postgres');
    const schema = (await writer.query<{ s: string }>('SELECT current_schema() AS s')).rows[0]!.s;
    // A login granted nothing itself: the stack makes it a member of the read group.
    await admin((c) =>
      c.query(`CREATE ROLE ${quoteIdentifier(login)} LOGIN PASSWORD '${password}'`),
    );
    const url = new URL(TEST_DATABASE_URL);
    url.username = login;
    url.password = password;
    reads = createPgDatabase(
      { connectionString: url.toString(), options: `-c search_path=${schema},public`, max: 2 },
      { requestRole: READ_GROUP_ROLE },
    );
    stack = await startLocalStack({
      db: writer,
      readDb: recording(reads, readStatements),
      embedder: createHashEmbedder(),
      logLevel: 'SILENT',
    });
    api = await startLocalApi(stack);
    token = api.issuer.issueToken({ sub: alice.userId, tenantId: alice.tenantId });
    const put = (key: string, body: string) =>
      stack.s3.client.send(new PutObjectCommand({ Bucket: stack.s3.bucket, Key: key, Body: body }));
    await put(
      'tenants/acme/refunds.md',
      '# Refunds\n\nRefunds are issued within 14 days after the return arrives.',
    );
    await put(
      'tenants/acme/shipping.md',
      '# Shipping\n\nStandard shipping takes three to five business days.',
    );
    await stack.queue.idle();
  });
  afterAll(async () => {
    await api?.close();
    await stack?.stop();
    await reads?.close();
    await writer?.close();
    await admin((c) => c.query(`DROP ROLE IF EXISTS ${quoteIdentifier(login)}`));
  });

  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${api.server.url}${path}`, {
      method,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it('is given a separate read connection beside the writer', () => {
    expect(stack.databases.writer).toBe(writer);
    expect(stack.databases.reads).not.toBe(writer);
    expect(stack.db).toBe(writer);
  });

  it('searches through the read connection', async () => {
    readStatements.length = 0;
    const res = await call('POST', '/api/rag/search', { query_text: 'how long do refunds take' });
    expect(res.status).toBe(200);
    const results = res.body.results as { source_uri: string }[];
    expect(results[0]?.source_uri).toContain('tenants/acme/refunds.md');
    // The preparation and the search statement, both on the read connection.
    expect(readStatements.length).toBeGreaterThanOrEqual(2);
  });

  it('answers from the read connection and keeps the thread on the writer, read back at once', async () => {
    readStatements.length = 0;
    const first = await call('POST', '/api/rag/answer', {
      query_text: 'How long do refunds take?',
    });
    expect(first.status).toBe(200);
    const threadId = first.body.thread_id as string;
    const citations = first.body.citations as { source_uri: string }[];
    expect(citations[0]?.source_uri).toContain('refunds.md');
    expect(readStatements.length).toBeGreaterThanOrEqual(2);

    const follow = await call('POST', '/api/rag/answer', {
      query_text: 'and shipping?',
      thread_id: threadId,
    });
    expect(follow.status).toBe(200);
    // Right after the second answer's messages were written, the thread reads all four.
    const thread = await call('GET', `/api/threads/${threadId}`);
    expect(thread.status).toBe(200);
    expect((thread.body.messages as unknown[]).length).toBe(4);
    // No statement on the read connection touched the conversations.
    const conversational = readStatements.filter((s) => /\b(threads|messages)\b/i.test(s));
    expect(conversational).toEqual([]);
  });

  it('refuses a write through the read connection, in a request and outside one', async () => {
    const request = { ...alice, allUsers: false };
    // What a conversation repository given the read connection by mistake would do.
    expect(
      await codeOf(() =>
        runInDbScope(request, () => createConversationRepository(reads).createThread(alice, 'x')),
      ),
    ).toBe('42501');
    expect(
      await codeOf(() =>
        runInDbScope(request, () =>
          reads.query("UPDATE documents SET title = 'changed' WHERE tenant_id = 'acme'"),
        ),
      ),
    ).toBe('42501');
    expect(await codeOf(() => reads.exec('DELETE FROM chunks'))).toBe('42501');
    // The same writes on the writer succeed (the control): the refusal is the read role's.
    const thread = await runInDbScope(request, () =>
      createConversationRepository(writer).createThread(alice, 'x'),
    );
    expect(thread.id).toEqual(expect.any(String));
  });
});

describe('groundwork start with GROUNDWORK_DATABASE_URL and GROUNDWORK_DATABASE_READ_URL', () => {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const reader = `gw_test_reader_${randomBytes(4).toString('hex')}`;
  let stack: LocalStack;
  let dataDir: string;

  /** A URL of the test server as `user`, its tables in the suite's schema. */
  function urlAs(user?: { name: string; password: string }): string {
    const url = new URL(TEST_DATABASE_URL);
    if (user) {
      url.username = user.name;
      url.password = user.password;
    }
    url.searchParams.set('options', `-c search_path=${schema},public`);
    return url.toString();
  }

  beforeAll(async () => {
    await admin(async (c) => {
      await c.query(`CREATE SCHEMA ${schema}`);
      await c.query(`CREATE ROLE ${quoteIdentifier(reader)} LOGIN PASSWORD '${password}'`);
    });
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'groundwork-read-url-'));
    stack = await startLocalStack({
      ...(await stackOptionsFromEnv(
        loadLocalEnv({
          GROUNDWORK_DATA_DIR: dataDir,
          GROUNDWORK_DATABASE_URL: urlAs(),
          GROUNDWORK_DATABASE_READ_URL: urlAs({ name: reader, password }),
        }),
      )),
      embedder: createHashEmbedder(),
      logLevel: 'SILENT',
      reconcile: false,
    });
  });
  afterAll(async () => {
    await stack?.stop();
    await rm(dataDir, { recursive: true, force: true });
    await admin(async (c) => {
      await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await c.query(`DROP ROLE IF EXISTS ${quoteIdentifier(reader)}`);
    });
  });

  it('opens both connections, the reads as the read group, and searches through them', async () => {
    const { writer, reads } = stack.databases;
    expect(writer.kind).toBe('postgres');
    expect(reads).not.toBe(writer);
    await stack.s3.client.send(
      new PutObjectCommand({
        Bucket: stack.s3.bucket,
        Key: 'tenants/acme/refunds.md',
        Body: '# Refunds\n\nRefunds are issued within 14 days after the return arrives.',
      }),
    );
    await stack.queue.idle();
    const { hits } = await runInDbScope({ ...alice, allUsers: false }, () =>
      stack.search.search(alice, { queryText: 'refunds', topK: 3, mode: 'hybrid', filters: {} }),
    );
    expect(hits[0]?.text).toContain('14 days');
    const role = await runInDbScope({ ...alice, allUsers: false }, () =>
      reads.query<{ role: string; login: string }>(
        'SELECT current_user AS role, session_user AS login',
      ),
    );
    expect(role.rows[0]).toEqual({ role: READ_GROUP_ROLE, login: reader });
    expect(
      await codeOf(() =>
        runInDbScope({ ...alice, allUsers: false }, () => reads.query('DELETE FROM chunks')),
      ),
    ).toBe('42501');
  });
});
