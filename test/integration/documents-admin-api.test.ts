/**
 * The documents and admin routes end to end through the local server, on PGlite and on
 * PostgreSQL + pgvector: real tokens, presigned PUTs to the S3 emulator, the S3 events that feed
 * the ingestion pipeline, and cross-tenant, cross-user and non-admin attempts on every route.
 */
import { S3Client } from '@aws-sdk/client-s3';
import { createUploadBucket } from '../../lambdas/adapters/s3/upload-bucket';
import { API_ROUTES } from '../../lambdas/http/api-routes';
import { buildOpenApi } from '../../lambdas/http/openapi';
import { startLocalApi, type LocalApi } from '../../local/api';
import { startLocalStack, type LocalStack } from '../../local/stack';
import { ENGINES, openTestDatabase } from '../support/databases';
import { startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai';
import { createHashEmbedder, type CountingEmbedder } from '../support/hash-embedder';
import { createOpenAiCompatibleLlm } from '../../lambdas/adapters/llm/openai-compatible';
import type { Database } from '../../lambdas/adapters/postgres/database';
import { parseLimitsConfig } from '../../lambdas/core/limits/config';

process.env.POWERTOOLS_METRICS_DISABLED = 'true';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const waitFor = async <T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  what: string,
  timeoutMs = 30_000,
): Promise<T> => {
  const started = Date.now();
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
};

describe.each(ENGINES)('documents and admin API on %s', (engine) => {
  let db: Database;
  let stack: LocalStack;
  let api: LocalApi;
  let embedder: CountingEmbedder;
  let fake: FakeOpenAi;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    db = await openTestDatabase(engine);
    embedder = createHashEmbedder();
    fake = await startFakeOpenAi();
    stack = await startLocalStack({
      db,
      embedder,
      llm: createOpenAiCompatibleLlm({ baseUrl: fake.url, model: 'test-model', maxRetries: 0 }),
      logLevel: 'SILENT',
      // The tests poll document status: lift the rate limit, keep the quotas.
      limits: parseLimitsConfig({
        plans: { free: { requestsPerMinute: 100_000 }, admin: { requestsPerMinute: 100_000 } },
      }),
      // Small chunks and one chunk per embedding call, so progress has steps to report.
      ingestion: {
        maxObjectBytes: 64 * 1024,
        embedBatchSize: 1,
        chunking: { targetTokens: 40, overlapTokens: 0 },
      },
      answer: {
        calibrationByModel: { 'test/hash-512': { cosineWeight: 0.5, high: 0.3, medium: 0.01 } },
      },
    });
    api = await startLocalApi(stack);
    tokens.alice = api.issuer.issueToken({ sub: 'alice', tenantId: 'acme' });
    tokens.bob = api.issuer.issueToken({ sub: 'bob', tenantId: 'acme' });
    tokens.carol = api.issuer.issueToken({ sub: 'carol', tenantId: 'acme', admin: true });
    tokens.mallory = api.issuer.issueToken({ sub: 'mallory', tenantId: 'globex' });
    tokens.globexAdmin = api.issuer.issueToken({ sub: 'gadmin', tenantId: 'globex', admin: true });
    tokens.publisher = api.issuer.issueToken({ sub: 'pub', tenantId: 'global', admin: true });
    tokens.publisherUser = api.issuer.issueToken({ sub: 'pubuser', tenantId: 'global' });
  });
  afterAll(async () => {
    await api?.close();
    await stack?.stop();
    await db?.close();
    await fake?.close();
  });

  const call = async (method: string, path: string, who: string, body?: unknown) => {
    const res = await fetch(`${api.server.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${tokens[who]}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as Json };
  };

  /** PUTs a file to the presigned URL an announcement handed out; the S3 emulator's status. */
  const putFile = async (created: Json, bytes: Uint8Array) =>
    (
      await fetch(created.upload.url, {
        method: 'PUT',
        headers: created.upload.headers,
        body: bytes,
      })
    ).status;

  /** Announces and PUTs a file as `who`; returns the document id once the pipeline is done. */
  const upload = async (
    who: string,
    filename: string,
    content: string | Uint8Array,
    extra: Json = {},
    contentType = 'text/markdown',
  ) => {
    const bytes = typeof content === 'string' ? new TextEncoder().encode(content) : content;
    const created = await call('POST', '/api/documents', who, {
      filename,
      content_type: contentType,
      size_bytes: bytes.byteLength,
      ...extra,
    });
    expect(created.status).toBe(201);
    expect(await putFile(created.body, bytes)).toBe(200);
    const id = created.body.document.id as string;
    const done = await waitFor(
      () => call('GET', `/api/documents/${id}`, who),
      (r) => ['indexed', 'failed'].includes(r.body.status),
      `${filename} to be processed`,
    );
    return { id, created: created.body, done: done.body };
  };

  it('serves the OpenAPI document without a token', async () => {
    const res = await fetch(`${api.server.url}/openapi.json`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(JSON.parse(JSON.stringify(buildOpenApi())));
  });

  it('serves every route of the API table', () => {
    // localRoutes throws on a missing handler; this pins the table to what the issue names.
    const keys = API_ROUTES.map((r) => `${r.method} ${r.path}`);
    expect(keys).toEqual(
      expect.arrayContaining([
        'POST /api/documents',
        'GET /api/documents',
        'GET /api/documents/{id}',
        'DELETE /api/documents/{id}',
        'POST /api/documents/{id}/retry',
        'GET /api/admin/stats',
        'GET /api/admin/feedback',
        'GET /api/admin/prompts',
        'POST /api/admin/prompts',
        'POST /api/admin/prompts/{id}/activate',
      ]),
    );
  });

  describe('POST /api/documents', () => {
    it('hands out a signed PUT under the caller tenant prefix, then the pipeline indexes the file', async () => {
      const { id, created, done } = await upload(
        'alice',
        'refunds.md',
        '# Refunds\n\nRefunds reach the customer account within fourteen days.',
        { metadata: { team: 'billing', year: 2024 }, source_type: 'faq' },
      );
      expect(created.document.status).toBe('queued');
      expect(created.document.source_uri).toBe(
        `s3://${stack.s3.bucket}/tenants/acme/uploads/${id}/refunds.md`,
      );
      const url = new URL(created.upload.url);
      expect(url.searchParams.get('X-Amz-SignedHeaders')?.split(';')).toEqual(
        expect.arrayContaining(['content-length', 'content-type']),
      );
      expect(created.upload.headers).toEqual({ 'content-type': 'text/markdown' });
      expect(done).toMatchObject({
        status: 'indexed',
        chunk_count: 1,
        source_type: 'faq',
        metadata: { team: 'billing', year: 2024 },
        uploaded_by: 'alice',
        progress: null,
      });
      // Searchable with a filter on the sidecar's metadata.
      const search = await call('POST', '/api/rag/search', 'bob', {
        query_text: 'refunds customer account',
        filters: { metadata: { equals: { key: 'team', value: 'billing' } } },
      });
      expect(search.body.results.map((r: Json) => r.source_id)).toEqual([id]);
    });

    it('takes the format from the extension when the type is application/octet-stream, and signs the type the client declared', async () => {
      const { created, done } = await upload(
        'alice',
        'bulky-waste.md',
        '# Bulky waste collection\n\nSofas and mattresses are collected within ten working days.',
        {},
        'application/octet-stream',
      );
      // The client PUTs with the type it announced (upload() sends these headers), so that is
      // what is signed; ingestion reads an octet-stream object by its extension.
      expect(created.upload.headers).toEqual({ 'content-type': 'application/octet-stream' });
      expect(done).toMatchObject({ status: 'indexed', title: 'Bulky waste collection' });
    });

    it('signs the exact length and type, so S3 refuses a PUT with another', async () => {
      const bucket = createUploadBucket(
        new S3Client({
          region: 'us-east-1',
          endpoint: 'http://127.0.0.1:1',
          forcePathStyle: true,
          credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
        }),
        'b',
      );
      const sign = (contentType: string, contentLength: number) =>
        bucket
          .presignPut('tenants/acme/uploads/x/a.md', {
            contentType,
            contentLength,
            expiresInSeconds: 900,
          })
          .then((u) => new URL(u).searchParams.get('X-Amz-Signature'));
      const base = await sign('text/markdown', 100);
      expect(await sign('text/markdown', 100)).toBe(base);
      expect(await sign('text/markdown', 101)).not.toBe(base);
      expect(await sign('text/html', 100)).not.toBe(base);
    });

    it('never lets the body choose the tenant or escape the prefix', async () => {
      const extra = await call('POST', '/api/documents', 'alice', {
        filename: 'a.md',
        content_type: 'text/markdown',
        size_bytes: 10,
        tenant_id: 'globex',
      });
      expect(extra.status).toBe(422);
      const sneaky = await call('POST', '/api/documents', 'alice', {
        filename: '../../globex/secret.md',
        content_type: 'text/markdown',
        size_bytes: 10,
      });
      expect(sneaky.status).toBe(201);
      expect(sneaky.body.document.source_uri).toMatch(
        new RegExp(`^s3://${stack.s3.bucket}/tenants/acme/uploads/[0-9a-f-]{36}/secret\\.md$`),
      );
    });

    it.each([
      [{ filename: 'photo.png', content_type: 'image/png', size_bytes: 10 }, 'content_type'],
      [{ filename: 'report.pdf', content_type: 'text/plain', size_bytes: 10 }, 'content_type'],
      [
        { filename: 'tool.exe', content_type: 'application/octet-stream', size_bytes: 10 },
        '".exe"',
      ],
      [
        { filename: 'notes', content_type: 'application/octet-stream', size_bytes: 10 },
        'content_type',
      ],
      [{ filename: 'notes', content_type: 'text/plain', size_bytes: 10 }, 'filename'],
      // The name of another file's metadata sidecar, which ingestion never indexes as a file.
      [
        { filename: 'x.txt.metadata.json', content_type: 'application/json', size_bytes: 10 },
        'filename',
      ],
      // 79 characters but 229 bytes in UTF-8: too long a file name where objects are files.
      [
        { filename: `${'日'.repeat(75)}.txt`, content_type: 'text/plain', size_bytes: 10 },
        'filename',
      ],
      [{ filename: 'big.md', content_type: 'text/markdown', size_bytes: 65 * 1024 }, 'size_bytes'],
      [{ filename: 'a.md', content_type: 'text/markdown', size_bytes: 0 }, 'size_bytes'],
    ])('rejects %j with a 422 naming %s', async (body, field) => {
      const res = await call('POST', '/api/documents', 'alice', body);
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('validation_error');
      expect(res.body.error.message).toContain(field);
    });
  });

  describe("reserved attributes are the server's", () => {
    const announce = (who: string, extra: Json) =>
      call('POST', '/api/documents', who, {
        filename: 'note.md',
        content_type: 'text/markdown',
        size_bytes: 10,
        ...extra,
      });

    it.each(['owner', 'owner_user_id', 'visibility', 'Owner', 'tenant_id', 'org_id', 'title'])(
      'refuses metadata naming the reserved key %s with a 422 naming it',
      async (key) => {
        const res = await announce('bob', { metadata: { [key]: 'alice' } });
        expect(res.status).toBe(422);
        expect(res.body.error.code).toBe('validation_error');
        expect(res.body.error.message).toContain(`metadata.${key}`);
      },
    );

    it("cannot plant a document in another user's private space", async () => {
      const res = await announce('bob', { metadata: { owner: 'alice', visibility: 'user' } });
      expect(res.status).toBe(422);
      // What bob may do is upload privately to himself: the owner comes from his token.
      const { id, done } = await upload('bob', 'mine.md', '# Mine\n\nBob keeps a zebra ledger.', {
        visibility: 'user',
      });
      expect(done).toMatchObject({ status: 'indexed', visibility: 'user' });
      expect((await call('GET', `/api/documents/${id}`, 'alice')).status).toBe(404);
      const hits = await call('POST', '/api/rag/search', 'alice', { query_text: 'zebra ledger' });
      expect(hits.body.results.map((r: Json) => r.source_id)).not.toContain(id);
    });

    it('publishes global only for an admin of a publishing tenant', async () => {
      expect((await announce('alice', { visibility: 'global' })).status).toBe(403);
      expect((await announce('publisherUser', { visibility: 'global' })).status).toBe(403);
      // An admin, but of a tenant that does not publish.
      expect((await announce('carol', { visibility: 'global' })).status).toBe(403);
      const { id, done } = await upload(
        'publisher',
        'handbook.md',
        '# Handbook\n\nThe quokka rota is shared by every company.',
        { visibility: 'global' },
      );
      expect(done).toMatchObject({ status: 'indexed', visibility: 'global' });
      const hits = await call('POST', '/api/rag/search', 'mallory', { query_text: 'quokka rota' });
      expect(hits.body.results.map((r: Json) => r.source_id)).toContain(id);
      // Every tenant reads it; who uploaded it is the publishing tenant's to know.
      expect((await call('GET', `/api/documents/${id}`, 'publisher')).body.uploaded_by).toBe('pub');
      const seen = await call('GET', `/api/documents/${id}`, 'mallory');
      expect(seen.body).toMatchObject({ id, uploaded_by: null });
      const removal = await call('DELETE', `/api/documents/${id}`, 'globexAdmin');
      expect(removal.status).toBe(403);
      expect(removal.body.error.message).toContain('published by another tenant');
    });
  });

  describe('GET, DELETE and retry', () => {
    it('keeps a private upload to its owner and hides every document from other tenants', async () => {
      const { id } = await upload('alice', 'diary.md', 'Private notes about the launch plan.', {
        visibility: 'user',
      });
      expect((await call('GET', `/api/documents/${id}`, 'alice')).status).toBe(200);
      for (const [who, path, method] of [
        ['bob', `/api/documents/${id}`, 'GET'],
        ['bob', `/api/documents/${id}/passage?start=0&end=5`, 'GET'],
        ['bob', `/api/documents/${id}`, 'DELETE'],
        ['mallory', `/api/documents/${id}`, 'GET'],
        ['mallory', `/api/documents/${id}`, 'DELETE'],
        ['mallory', `/api/documents/${id}/retry`, 'POST'],
        ['globexAdmin', `/api/documents/${id}`, 'DELETE'],
      ] as const) {
        const res = await call(method, path, who);
        expect({ who, path, method, status: res.status }).toEqual({
          who,
          path,
          method,
          status: 404,
        });
      }
      const listed = await call('GET', '/api/documents', 'bob');
      expect(listed.body.documents.map((d: Json) => d.id)).not.toContain(id);
      const mine = await call('GET', '/api/documents', 'alice');
      expect(mine.body.documents.map((d: Json) => d.id)).toContain(id);
      expect((await call('GET', '/api/documents/not-a-uuid', 'alice')).status).toBe(404);
    });

    it('pages the document list with a cursor, and refuses a cursor it did not issue', async () => {
      for (const name of ['page-a.md', 'page-b.md', 'page-c.md'])
        await upload('bob', name, `Paging test document ${name}.`);
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: { status: number; body: Json } = await call(
          'GET',
          `/api/documents?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
          'bob',
        );
        expect(page.status).toBe(200);
        expect(page.body.documents.length).toBeLessThanOrEqual(2);
        seen.push(...page.body.documents.map((d: Json) => d.source_uri as string));
        cursor = page.body.next_cursor as string | null;
      } while (cursor);
      expect(new Set(seen).size).toBe(seen.length);
      expect(seen).toEqual([...seen].sort());
      for (const name of ['page-a.md', 'page-b.md', 'page-c.md'])
        expect(seen.some((uri) => uri.endsWith(`/${name}`))).toBe(true);
      const bad = await call('GET', '/api/documents?cursor=bm90LWEtY3Vyc29y', 'bob');
      expect(bad.status).toBe(422);
      expect(bad.body.error.message).toMatch(/^cursor/);
    });

    it('fails an announced upload whose file never arrived, once its URL is long expired', async () => {
      const announce = async (filename: string) => {
        const created = await call('POST', '/api/documents', 'bob', {
          filename,
          content_type: 'text/markdown',
          size_bytes: 10,
        });
        expect(created.status).toBe(201);
        return created.body.document.id as string;
      };
      const stale = await announce('never-sent.md');
      const fresh = await announce('on-its-way.md');
      const indexed = (await upload('bob', 'arrived.md', 'This one arrived.')).id;
      // An hour and a quarter ago: past the 15-minute URL and the 45-minute grace.
      await db.query(
        "UPDATE documents SET updated_at = now() - interval '75 minutes' WHERE id = ANY($1::uuid[])",
        [[stale, indexed]],
      );
      const listed = await call('GET', '/api/documents?status=failed', 'bob');
      expect(listed.body.documents.map((d: Json) => d.id)).toContain(stale);
      const detail = await call('GET', `/api/documents/${stale}`, 'bob');
      expect(detail.body).toMatchObject({ status: 'failed' });
      expect(detail.body.failure_reason).toMatch(/No file arrived within 60 minutes/);
      expect((await call('GET', `/api/documents/${fresh}`, 'bob')).body.status).toBe('queued');
      expect((await call('GET', `/api/documents/${indexed}`, 'bob')).body.status).toBe('indexed');
      // Another tenant's reads never touch this tenant's rows.
      await db.query(
        "UPDATE documents SET updated_at = now() - interval '75 minutes' WHERE id = $1::uuid",
        [fresh],
      );
      await call('GET', '/api/documents', 'mallory');
      const { rows } = await db.query<{ status: string }>(
        'SELECT status FROM documents WHERE id = $1::uuid',
        [fresh],
      );
      expect(rows[0]?.status).toBe('queued');
      // Reading that one document fails it, without a list first.
      const aged = await call('GET', `/api/documents/${fresh}`, 'bob');
      expect(aged.body.status).toBe('failed');
      expect(aged.body.failure_reason).toMatch(/No file arrived/);
    });

    it('lets the uploader or an admin delete a tenant document; the removal event removes its chunks', async () => {
      const { id } = await upload('alice', 'shipping.md', 'Express shipping takes two days.');
      const forbidden = await call('DELETE', `/api/documents/${id}`, 'bob');
      expect(forbidden.status).toBe(403);
      expect(forbidden.body.error.code).toBe('forbidden');
      const accepted = await call('DELETE', `/api/documents/${id}`, 'alice');
      expect(accepted.status).toBe(202);
      // The answer shows the document as the removal left it.
      expect(accepted.body).toMatchObject({ id, status: 'deleted', chunk_count: 0 });
      const gone = await waitFor(
        () => call('GET', `/api/documents/${id}`, 'alice'),
        (r) => r.body.status === 'deleted',
        'the removal',
      );
      expect(gone.body.chunk_count).toBe(0);
      const { rows } = await db.query<{ n: string }>(
        'SELECT count(*) AS n FROM chunks WHERE document_id = $1',
        [id],
      );
      expect(Number(rows[0]?.n)).toBe(0);

      const other = await upload('bob', 'other.md', 'Standard shipping takes five days.');
      expect((await call('DELETE', `/api/documents/${other.id}`, 'carol')).status).toBe(202);
    });

    it('keeps a removal made before the file arrived: the late upload is not indexed', async () => {
      const text = 'Zanzibar-quartz overtime is paid at twice the hourly rate.';
      const bytes = new TextEncoder().encode(text);
      const created = await call('POST', '/api/documents', 'alice', {
        filename: 'late.md',
        content_type: 'text/markdown',
        size_bytes: bytes.byteLength,
      });
      expect(created.status).toBe(201);
      const id = created.body.document.id as string;
      const removed = await call('DELETE', `/api/documents/${id}`, 'alice');
      expect(removed.status).toBe(202);
      expect((await call('GET', `/api/documents/${id}`, 'alice')).body.status).toBe('deleted');

      // The presigned URL still works until it expires: the PUT succeeds, and is not indexed.
      expect(await putFile(created.body, bytes)).toBe(200);
      await stack.queue.idle();
      const after = await call('GET', `/api/documents/${id}`, 'alice');
      expect(after.body).toMatchObject({ status: 'deleted', chunk_count: 0 });
      const search = await call('POST', '/api/rag/search', 'alice', {
        query_text: 'Zanzibar-quartz overtime',
        mode: 'keyword',
      });
      expect(search.status).toBe(200);
      expect(search.body.results.map((r: Json) => r.document_id)).not.toContain(id);
    });

    it('records a failure with its reason, and a retry indexes the document once the cause is gone', async () => {
      embedder.failNext = 100; // the embedding model is down for every attempt the queue makes
      const { id, done } = await upload('alice', 'policy.md', 'Returns are accepted for 30 days.');
      expect(done.status).toBe('failed');
      expect(done.failure_reason).toContain('embedding model unavailable');
      await stack.queue.idle(); // the queue's own redeliveries are over
      embedder.failNext = 0;

      expect((await call('POST', `/api/documents/${id}/retry`, 'bob')).status).toBe(403);
      const retried = await call('POST', `/api/documents/${id}/retry`, 'alice');
      expect(retried.status).toBe(202);
      expect(retried.body).toMatchObject({ status: 'queued', failure_reason: null });
      const indexed = await waitFor(
        () => call('GET', `/api/documents/${id}`, 'alice'),
        (r) => r.body.status === 'indexed',
        'the retry',
      );
      expect(indexed.body.chunk_count).toBe(1);

      const again = await call('POST', `/api/documents/${id}/retry`, 'alice');
      expect(again.status).toBe(409);
      expect(again.body.error.code).toBe('not_failed');
    });

    it('reports progress while a long document is being embedded', async () => {
      const slow = embedder.embed.bind(embedder);
      embedder.embed = async (texts) => {
        await new Promise((r) => setTimeout(r, 300));
        return slow(texts);
      };
      try {
        const text = Array.from(
          { length: 12 },
          (_, i) =>
            `Section ${i}. ${'The warehouse ships orders every weekday morning. '.repeat(4)}`,
        ).join('\n\n');
        const bytes = new TextEncoder().encode(text);
        const created = await call('POST', '/api/documents', 'alice', {
          filename: 'long.md',
          content_type: 'text/markdown',
          size_bytes: bytes.byteLength,
        });
        expect(await putFile(created.body, bytes)).toBe(200);
        const id = created.body.document.id as string;
        const processing = await waitFor(
          () => call('GET', `/api/documents/${id}`, 'alice'),
          (r) => r.body.status === 'processing' && r.body.progress !== null,
          'a progress report',
        );
        expect(processing.body.progress.stage).toBe('embedding');
        expect(processing.body.progress.chunks_total).toBeGreaterThan(5);
        expect(processing.body.progress.chunks_embedded).toBeGreaterThan(0);
        const done = await waitFor(
          () => call('GET', `/api/documents/${id}`, 'alice'),
          (r) => r.body.status === 'indexed',
          'indexing',
        );
        expect(done.body.progress).toBeNull();
        expect(done.body.chunk_count).toBe(processing.body.progress.chunks_total);
      } finally {
        embedder.embed = slow;
      }
    });

    it('returns the chunks a citation range points at', async () => {
      const { id } = await upload(
        'alice',
        'hours.md',
        '# Hours\n\nThe office opens at nine. The office closes at five.',
      );
      const whole = await call('GET', `/api/documents/${id}/passage?start=0&end=100000`, 'bob');
      const chunk = whole.body.chunks[0];
      // Offsets are into the extracted text (the Markdown heading marks are gone).
      const start = chunk.start + chunk.text.indexOf('The office opens');
      const end = start + 'The office opens at nine.'.length;
      const res = await call(
        'GET',
        `/api/documents/${id}/passage?start=${start}&end=${end}`,
        'bob',
      );
      expect(res.status).toBe(200);
      expect(res.body.chunks).toHaveLength(1);
      const [hit] = res.body.chunks;
      expect(hit.text.slice(start - hit.start, end - hit.start)).toBe('The office opens at nine.');
      const bad = await call('GET', `/api/documents/${id}/passage?start=9&end=3`, 'bob');
      expect(bad.status).toBe(422);
      // Offsets are whole numbers in decimal digits: an empty value is not 0, nor hex a number.
      for (const query of [
        'start=&end=10',
        'start=0&end=0x10',
        'start=0&end=1e1',
        'start=%205&end=9',
      ]) {
        const res = await call('GET', `/api/documents/${id}/passage?${query}`, 'bob');
        expect({ query, status: res.status, message: res.body.error.message }).toEqual({
          query,
          status: 422,
          message: expect.stringContaining('a whole number in decimal digits'),
        });
      }
    });
  });

  describe('admin', () => {
    const adminRoutes = API_ROUTES.filter((r) => r.admin);

    it.each(adminRoutes.map((r) => [r.method, r.path]))(
      '%s %s is 403 for a non-admin',
      async (method, path) => {
        // A valid body, so that the answer is about the caller and not the body.
        const bodies: Record<string, unknown> = {
          'POST /api/admin/prompts': { profile: 'general', name: 'x', instructions: 'y' },
          'POST /api/admin/lexybrain/configs': {
            name: 'x',
            type: 'general',
            system_instructions: 'y',
          },
          'POST /api/admin/source-policy': { mode: 'permissive' },
          'POST /api/admin/harness': { query_text: 'How long do refunds take?' },
        };
        const body = bodies[`${method} ${path}`];
        const res = await call(
          method,
          path.replace('{id}', '00000000-0000-4000-8000-000000000000'),
          'alice',
          body,
        );
        expect(res.status).toBe(403);
        expect(res.body.error.code).toBe('forbidden');
      },
    );

    it('reports the tenant statistics and feedback, and nothing of other tenants', async () => {
      fake.setAnswer({ text: 'Refunds reach the account within fourteen days [1].' });
      const answered = await call('POST', '/api/rag/answer', 'bob', {
        query_text: 'How long do refunds take to reach the customer account?',
      });
      expect(answered.status).toBe(200);
      const messageId = answered.body.message_id as string;
      expect(
        (
          await call('POST', `/api/messages/${messageId}/feedback`, 'bob', {
            rating: 'negative',
            comment: 'too vague',
          })
        ).status,
      ).toBe(200);

      const stats = await call('GET', '/api/admin/stats', 'carol');
      expect(stats.status).toBe(200);
      expect(stats.body.tenant_id).toBe('acme');
      expect(stats.body.documents.by_status.indexed).toBeGreaterThanOrEqual(2);
      expect(stats.body.threads).toBeGreaterThanOrEqual(1);
      expect(stats.body.messages).toBeGreaterThanOrEqual(2);
      expect(stats.body.active_users).toBeGreaterThanOrEqual(1);
      expect(stats.body.answers.total).toBeGreaterThanOrEqual(1);
      expect(stats.body.answers.by_profile.general).toBeGreaterThanOrEqual(1);
      expect(stats.body.feedback.negative).toBe(1);
      const free = stats.body.quota_use_by_plan.find((p: Json) => p.plan === 'free');
      expect(free.users).toBeGreaterThanOrEqual(2); // alice and bob
      expect(free.answers.used).toBeGreaterThanOrEqual(1);
      expect(free.answers.limit_per_user).toBe(50);

      const feedback = await call('GET', '/api/admin/feedback?rating=negative', 'carol');
      expect(feedback.body.feedback).toEqual([
        expect.objectContaining({
          message_id: messageId,
          user_id: 'bob',
          rating: 'negative',
          comment: 'too vague',
          question: 'How long do refunds take to reach the customer account?',
        }),
      ]);
      expect(
        (await call('GET', '/api/admin/feedback?rating=positive', 'carol')).body.feedback,
      ).toEqual([]);
      expect((await call('GET', '/api/admin/feedback?cursor=zzz', 'carol')).status).toBe(422);

      const theirs = await call('GET', '/api/admin/stats', 'globexAdmin');
      expect(theirs.body.documents.total).toBe(0);
      expect(theirs.body.threads).toBe(0);
      expect((await call('GET', '/api/admin/feedback', 'globexAdmin')).body.feedback).toEqual([]);
    });

    it('pages feedback newest first with a cursor', async () => {
      fake.setAnswer({ text: 'Express shipping takes two days [1].' });
      const ids: string[] = [];
      for (const q of ['How fast is express shipping?', 'What are the office hours today?']) {
        const a = await call('POST', '/api/rag/answer', 'alice', { query_text: q });
        ids.push(a.body.message_id as string);
        await call('POST', `/api/messages/${a.body.message_id}/feedback`, 'alice', {
          rating: 'positive',
        });
      }
      const first = await call('GET', '/api/admin/feedback?rating=positive&limit=1', 'carol');
      expect(first.body.feedback.map((f: Json) => f.message_id)).toEqual([ids[1]]);
      expect(first.body.next_cursor).toEqual(expect.any(String));
      const second = await call(
        'GET',
        `/api/admin/feedback?rating=positive&limit=1&cursor=${first.body.next_cursor}`,
        'carol',
      );
      expect(second.body.feedback.map((f: Json) => f.message_id)).toEqual([ids[0]]);
    });

    it('versions prompts per tenant: a new active version changes that tenant only, and the default can be restored', async () => {
      const list = await call('GET', '/api/admin/prompts', 'carol');
      const general = list.body.prompts.find(
        (p: Json) => p.profile === 'general' && p.scope === 'default',
      );
      expect(general).toMatchObject({ active: true, version: 1 });

      const created = await call('POST', '/api/admin/prompts', 'carol', {
        profile: 'general',
        name: 'Terse',
        instructions: 'Answer in one short sentence, in the style of a ship log.',
        activate: true,
      });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({
        scope: 'tenant',
        version: 2,
        active: true,
        created_by: 'carol',
      });

      fake.setAnswer({ text: 'Two days [1].' });
      await call('POST', '/api/rag/answer', 'alice', {
        query_text: 'How long does express shipping take?',
      });
      const acmePrompt = JSON.stringify(fake.requests.at(-1)?.body);
      expect(acmePrompt).toContain('in the style of a ship log');

      // Globex, with a document of its own, still answers with the default instructions.
      await upload('mallory', 'express.md', 'Express shipping takes two days at Globex.');
      const before = fake.requests.length;
      const theirs = await call('POST', '/api/rag/answer', 'mallory', {
        query_text: 'How long does express shipping take?',
      });
      expect(theirs.body.answer.model).toBe('openai/test-model');
      expect(fake.requests.length).toBe(before + 1);
      expect(JSON.stringify(fake.requests.at(-1)?.body)).not.toContain('ship log');

      // Another tenant's admin can neither see nor activate acme's version.
      const theirList = await call('GET', '/api/admin/prompts', 'globexAdmin');
      expect(theirList.body.prompts.map((p: Json) => p.id)).not.toContain(created.body.id);
      expect(
        (await call('POST', `/api/admin/prompts/${created.body.id}/activate`, 'globexAdmin'))
          .status,
      ).toBe(404);

      const restored = await call('POST', `/api/admin/prompts/${general.id}/activate`, 'carol');
      expect(restored.status).toBe(200);
      const after = await call('GET', '/api/admin/prompts', 'carol');
      const active = after.body.prompts.filter((p: Json) => p.profile === 'general' && p.active);
      expect(active.map((p: Json) => p.id)).toEqual([general.id]);
      await call('POST', '/api/rag/answer', 'alice', {
        query_text: 'How long does express shipping take?',
      });
      expect(JSON.stringify(fake.requests.at(-1)?.body)).not.toContain('ship log');

      const invalid = await call('POST', '/api/admin/prompts', 'carol', {
        profile: 'Bad Profile',
        name: 'x',
        instructions: 'y',
      });
      expect(invalid.status).toBe(422);
    });

    it('activates versions of one profile at once: each request succeeds, one version stays active', async () => {
      const list = await call('GET', '/api/admin/prompts', 'carol');
      const general = list.body.prompts.find(
        (p: Json) => p.profile === 'general' && p.scope === 'default',
      );
      const versions = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          call('POST', '/api/admin/prompts', 'carol', {
            profile: 'general',
            name: `Race ${i}`,
            instructions: `Answer as version ${i}.`,
          }),
        ),
      );
      // Each activation switches the others off; run at once, none may trip over another.
      const activations = await Promise.all(
        versions.flatMap((v) => [
          call('POST', `/api/admin/prompts/${v.body.id}/activate`, 'carol'),
          call('POST', '/api/admin/prompts', 'carol', {
            profile: 'general',
            name: 'Race, created active',
            instructions: 'Answer briefly.',
            activate: true,
          }),
        ]),
      );
      expect(activations.map((a) => a.status).filter((s) => s !== 200 && s !== 201)).toEqual([]);
      const after = await call('GET', '/api/admin/prompts', 'carol');
      const active = after.body.prompts.filter((p: Json) => p.profile === 'general' && p.active);
      expect(active).toHaveLength(1);
      expect(
        (await call('POST', `/api/admin/prompts/${general.id}/activate`, 'carol')).status,
      ).toBe(200);
    });
  });
});
