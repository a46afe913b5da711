/**
 * Seed 004's contract over HTTP, on PGlite and on PostgreSQL + pgvector: the seed's own curl
 * examples (`curl -X POST .../api/upload -F "file=@test.txt"`, `curl ".../api/search?q=test%20query"`
 * and `&rag=true`) run by the real curl against the local server, every field of both responses,
 * an upload indexed by the S3 event path and then found by GET /api/search, another tenant not
 * seeing it, the upload's size limit (413) and type rules, hostile query parameters (400 with the
 * error model, never a 5xx) and the monthly cap (429).
 */
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createJwtVerifier } from '../../lambdas/adapters/auth/jwt-verifier';
import { createLocalIssuer } from '../../lambdas/adapters/auth/local-issuer';
import { createOpenAiCompatibleLlm } from '../../lambdas/adapters/llm/openai-compatible';
import type { Database } from '../../lambdas/adapters/postgres/database';
import { UPLOAD_CONTENT_TYPES } from '../../lambdas/core/ingestion/formats';
import { parseLimitsConfig } from '../../lambdas/core/limits/config';
import {
  LAMBDA_SYNC_PAYLOAD_BYTES,
  MAX_UPLOAD_BODY_BYTES,
} from '../../lambdas/http/request-limits';
import {
  seedSearchResponseSchema,
  seedUploadResponseSchema,
} from '../../lambdas/seeds/search-upload-schema';
import { startLocalApi, type LocalApi } from '../../local/api';
import { createLocalHttpServer } from '../../local/http-server';
import { startLocalStack, type LocalStack } from '../../local/stack';
import { ENGINES, openTestDatabase } from '../support/databases';
import { buildDocx, buildPdf } from '../support/documents';
import { startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai';
import { createHashEmbedder } from '../support/hash-embedder';

process.env.POWERTOOLS_METRICS_DISABLED = 'true';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const run = promisify(execFile);

const TEST_TXT =
  'The test query procedure. Every test query is logged with its author and date. ' +
  'A test query that fails is retried once before anyone is paged.';
const BULKY_WASTE_MD =
  '# Bulky waste collection\n\nSofas, mattresses and fridges are collected on request. ' +
  'Book a collection online; the crew comes within ten working days.\n';
const ANSWER = 'Every test query is logged with its author and date [1].';

const waitFor = async <T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  what: string,
): Promise<T> => {
  const started = Date.now();
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() - started > 30_000) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
};

describe.each(ENGINES)('seed 004: GET /api/search and POST /api/upload on %s', (engine) => {
  let db: Database;
  let stack: LocalStack;
  let api: LocalApi;
  let fake: FakeOpenAi;
  let dir: string;
  const tokens: Record<string, string> = {};
  let uploadedId: string;

  beforeAll(async () => {
    db = await openTestDatabase(engine);
    fake = await startFakeOpenAi();
    fake.setAnswer({ text: ANSWER, usage: { promptTokens: 321, completionTokens: 12 } });
    stack = await startLocalStack({
      db,
      embedder: createHashEmbedder(),
      llm: createOpenAiCompatibleLlm({ baseUrl: fake.url, model: 'test-model', maxRetries: 0 }),
      logLevel: 'SILENT',
      limits: parseLimitsConfig({
        plans: {
          free: { requestsPerMinute: 100_000 },
          admin: { requestsPerMinute: 100_000 },
          tiny: { answersPerMonth: 1, searchesPerMonth: 100, requestsPerMinute: 100_000 },
        },
      }),
      answer: {
        calibrationByModel: { 'test/hash-512': { cosineWeight: 0.5, high: 0.3, medium: 0.01 } },
      },
    });
    api = await startLocalApi(stack);
    tokens.alice = api.issuer.issueToken({ sub: 'alice', tenantId: 'acme' });
    tokens.carol = api.issuer.issueToken({ sub: 'carol', tenantId: 'acme', admin: true });
    tokens.tiny = api.issuer.issueToken({ sub: 'tim', tenantId: 'acme', plan: 'tiny' });
    tokens.mallory = api.issuer.issueToken({ sub: 'mallory', tenantId: 'globex' });
    dir = await mkdtemp(path.join(tmpdir(), 'seed-004-'));
    await writeFile(path.join(dir, 'test.txt'), TEST_TXT);
    await writeFile(path.join(dir, 'bulky-waste.md'), BULKY_WASTE_MD);
    await writeFile(path.join(dir, 'onboarding.docx'), await buildDocx());
    await writeFile(path.join(dir, 'tool.exe'), 'MZ');
  });
  afterAll(async () => {
    await api?.close();
    await stack?.stop();
    await db?.close();
    await fake?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** The seed's curl command, with the bearer token Groundwork needs; status and JSON body. */
  const curl = async (who: string, ...args: string[]) => {
    const { stdout } = await run(
      'curl',
      ['-s', '-H', `Authorization: Bearer ${tokens[who]}`, '-w', '\n%{http_code}', ...args],
      { cwd: dir },
    );
    const at = stdout.lastIndexOf('\n');
    return { status: Number(stdout.slice(at + 1)), body: JSON.parse(stdout.slice(0, at)) as Json };
  };

  const get = async (query: string, who = 'alice') => {
    const res = await fetch(`${api.server.url}/api/search${query}`, {
      headers: { authorization: `Bearer ${tokens[who]}` },
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Json };
  };

  const upload = async (form: FormData | string | Buffer, who = 'alice', contentType?: string) => {
    const res = await fetch(`${api.server.url}/api/upload`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${tokens[who]}`,
        ...(contentType ? { 'content-type': contentType } : {}),
      },
      body: form,
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Json };
  };

  const fileForm = (name: string, content: string | Uint8Array, type: string, field = 'file') => {
    const form = new FormData();
    form.append(field, new Blob([content], { type }), name);
    return form;
  };

  const documentStatus = (id: string, who = 'alice') =>
    waitFor(
      async () => {
        const res = await fetch(`${api.server.url}/api/documents/${id}`, {
          headers: { authorization: `Bearer ${tokens[who]}` },
        });
        return (await res.json()) as Json;
      },
      (d) => d.status === 'indexed' || d.status === 'failed',
      `document ${id} to be processed`,
    );

  const expectError = (res: { status: number; body: Json }, status: number, code: string) => {
    expect(res.status).toBe(status);
    expect(res.body).toEqual({
      error: {
        code,
        message: expect.any(String),
        retryable: false,
        ...(res.body.error?.details ? { details: expect.anything() } : {}),
      },
    });
  };

  it('curl -X POST /api/upload -F "file=@test.txt": 202, the file stored under the tenant prefix and indexed', async () => {
    const res = await curl(
      'alice',
      '-X',
      'POST',
      `${api.server.url}/api/upload`,
      '-F',
      'file=@test.txt',
    );
    expect(res.status).toBe(202);
    expect(seedUploadResponseSchema.safeParse(res.body).success).toBe(true);
    const doc = res.body.document as Json;
    expect(res.body.filename).toBe('test.txt');
    expect(doc).toMatchObject({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      source_uri: `s3://${stack.s3.bucket}/tenants/acme/uploads/${String(doc.id)}/test.txt`,
      title: 'test.txt',
      visibility: 'tenant',
      status: 'queued',
      failure_reason: null,
      uploaded_by: 'alice',
    });
    uploadedId = doc.id as string;
    const done = await documentStatus(uploadedId);
    expect(done).toMatchObject({ status: 'indexed', failure_reason: null });
    expect(done.chunk_count).toBeGreaterThan(0);
  });

  it('curl ".../api/search?q=test%20query": the results only, every field', async () => {
    const res = await curl('alice', `${api.server.url}/api/search?q=test%20query`);
    expect(res.status).toBe(200);
    expect(seedSearchResponseSchema.safeParse(res.body).success).toBe(true);
    expect(Object.keys(res.body)).toEqual(['results']);
    const results = res.body.results as Json[];
    const mine = results.find((r) => r.doc_id === uploadedId);
    expect(mine).toEqual({
      doc_id: uploadedId,
      filename: 'test.txt',
      chunk_id: expect.any(String),
      text: expect.stringContaining('test query'),
      similarity: expect.any(Number),
      start_offset: 0,
      end_offset: expect.any(Number),
      excerpt: expect.any(String),
      matches: 3,
    });
    expect(mine!.excerpt).toBe((mine!.text as string).slice(0, 200));
    expect(mine!.similarity).toBeGreaterThanOrEqual(0);
    expect(mine!.similarity).toBeLessThanOrEqual(1);
    expect(mine!.end_offset).toBeGreaterThan(mine!.start_offset);
  });

  it('curl ".../api/search?q=test%20query&rag=true": results empty, the rag object, every field', async () => {
    const res = await curl('alice', `${api.server.url}/api/search?q=test%20query&rag=true`);
    expect(res.status).toBe(200);
    expect(seedSearchResponseSchema.safeParse(res.body).success).toBe(true);
    expect(res.body.results).toEqual([]);
    const rag = res.body.rag as Json;
    expect(Object.keys(rag).sort()).toEqual(
      [
        'query',
        'final_answer',
        'model',
        'token_usage',
        'retrieved_chunks',
        'final_prompt',
        'agent_steps',
        'debug_logs',
        'rateLimit',
      ].sort(),
    );
    expect(rag.query).toBe('test query');
    expect(rag.final_answer).toBe(ANSWER);
    expect(rag.model).toBe('openai/test-model');
    expect(rag.token_usage).toEqual({
      prompt_tokens: 321,
      completion_tokens: 12,
      total_tokens: 333,
    });
    expect(rag.retrieved_chunks).toContainEqual({
      doc_id: uploadedId,
      filename: 'test.txt',
      chunk_id: expect.any(String),
      text: expect.stringContaining('test query'),
      similarity: expect.any(Number),
      start_offset: 0,
      end_offset: expect.any(Number),
    });
    // Not a tenant admin: the rendered prompt (the tenant's system prompt) is withheld.
    expect(rag.final_prompt).toBe('');
    expect(rag.debug_logs).toContain('[prompt] final_prompt is shown to tenant admins only');
    const steps = rag.agent_steps as Json[];
    expect(new Set(steps.map((s) => s.type))).toEqual(
      new Set(['thought', 'action', 'tool_result']),
    );
    // The seed's workflow: a thought first, then its tools under its names (semantic_search,
    // generate_answer), each action followed by its result.
    expect(steps[0]).toMatchObject({
      type: 'thought',
      text: 'Search the knowledge base for: test query',
    });
    expect(steps).toContainEqual({
      type: 'action',
      text: 'Using tool: semantic_search',
      tool: 'semantic_search',
      tool_input: 'test query',
    });
    expect(steps).toContainEqual({
      type: 'tool_result',
      text: 'Tool result from semantic_search',
      tool: 'semantic_search',
      tool_output: `Retrieved ${(rag.retrieved_chunks as unknown[]).length} chunks`,
    });
    const tools = steps.filter((s) => s.type === 'action').map((s) => s.tool as string);
    expect(tools.filter((t) => t !== 'memory')).toEqual([
      'semantic_search',
      'generate_answer',
      'cite',
    ]);
    steps.forEach((s, i) => {
      if (s.type === 'action')
        expect(steps[i + 1]).toMatchObject({ type: 'tool_result', tool: s.tool });
    });
    expect(rag.debug_logs).toEqual(
      expect.arrayContaining([expect.stringMatching(/^\[step\] retrieve: [\d.]+ ms$/)]),
    );
    // The free plan's 50 answers a month, this one counted.
    const now = new Date();
    expect(rag.rateLimit).toEqual({
      limit: 50,
      remaining: 49,
      resetDate: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString(),
    });
  });

  it('shows the rendered prompt to a tenant admin', async () => {
    const res = await get('?q=test%20query&rag=true', 'carol');
    expect(res.status).toBe(200);
    expect(res.body.rag.final_prompt).toContain('test query');
    expect(res.body.rag.final_prompt).toContain('Every test query is logged');
    expect(res.body.rag.debug_logs).not.toContain(
      '[prompt] final_prompt is shown to tenant admins only',
    );
    // An admin's plan has no monthly limit.
    expect(res.body.rag.rateLimit).toMatchObject({ limit: null, remaining: null });
  });

  it('another tenant cannot find or read the upload', async () => {
    const plain = await get('?q=test%20query', 'mallory');
    expect(plain.status).toBe(200);
    expect(plain.body).toEqual({ results: [], message: "No results found for 'test query'" });
    const rag = await get('?q=test%20query&rag=true', 'mallory');
    expect(rag.status).toBe(200);
    expect(rag.body.rag.retrieved_chunks).toEqual([]);
    const read = await fetch(`${api.server.url}/api/documents/${uploadedId}`, {
      headers: { authorization: `Bearer ${tokens.mallory}` },
    });
    expect(read.status).toBe(404);
  });

  it('a binary file (PDF) arrives intact: base64 through the event, as API Gateway sends it', async () => {
    const bytes = new Uint8Array([
      0x25, 0x50, 0x44, 0x46, 0x2d, 0x31, 0x2e, 0x34, 0x0a, 0x00, 0xff, 0xfe,
    ]);
    const res = await upload(fileForm('broken.pdf', bytes, 'application/pdf'));
    expect(res.status).toBe(202);
    expect(res.headers.get('location')).toBe(`/api/documents/${String(res.body.document.id)}`);
    const key = `tenants/acme/uploads/${String(res.body.document.id)}/broken.pdf`;
    const { GetObjectCommand } = await import('@aws-sdk/client-s3');
    const object = await stack.s3.client.send(
      new GetObjectCommand({ Bucket: stack.s3.bucket, Key: key }),
    );
    expect(Buffer.from(await object.Body!.transformToByteArray())).toEqual(Buffer.from(bytes));
    // Not a readable PDF: the pipeline says so, as for any upload.
    expect(await documentStatus(res.body.document.id as string)).toMatchObject({
      status: 'failed',
    });
  });

  it('the same content again is recorded as a duplicate, as through POST /api/documents', async () => {
    const res = await upload(fileForm('copy.txt', TEST_TXT, 'text/plain'));
    expect(res.status).toBe(202);
    const done = await documentStatus(res.body.document.id as string);
    expect(done.status).toBe('failed');
    expect(done.failure_reason).toMatch(/already indexed/);
  });

  it('413 for a body over the limit, with the error model', async () => {
    const big = new Uint8Array(MAX_UPLOAD_BODY_BYTES + 1).fill(0x61);
    const res = await upload(fileForm('big.txt', big, 'text/plain'));
    expectError(res, 413, 'payload_too_large');
    expect(res.body.error.message).toContain(String(MAX_UPLOAD_BODY_BYTES));
  });

  it('accepts a body of exactly the limit (refused here for its type, not its size)', async () => {
    const boundary = 'limit-boundary';
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.exe"\r\nContent-Type: application/octet-stream\r\n\r\n`;
    const tail = `\r\n--${boundary}--\r\n`;
    const body = Buffer.concat([
      Buffer.from(head),
      Buffer.alloc(MAX_UPLOAD_BODY_BYTES - head.length - tail.length, 0x61),
      Buffer.from(tail),
    ]);
    const res = await fetch(`${api.server.url}/api/upload`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${tokens.alice}`,
        'content-type': `multipart/form-data; boundary=${boundary}`,
      },
      body,
    });
    const json = (await res.json()) as Json;
    expectError({ status: res.status, body: json }, 400, 'validation_error');
    expect(json.error.message).toMatch(/content_type/);
  });

  it('curl -F "file=@bulky-waste.md" and a .docx, which curl sends as application/octet-stream: typed by their extension and indexed', async () => {
    // curl types a part by the few extensions it knows; .md and .docx are not among them.
    for (const [file, title] of [
      ['bulky-waste.md', 'Bulky waste collection'],
      ['onboarding.docx', 'Onboarding Guide'],
    ] as const) {
      const res = await curl(
        'alice',
        '-X',
        'POST',
        `${api.server.url}/api/upload`,
        '-F',
        `file=@${file}`,
      );
      expect(res.status).toBe(202);
      expect(res.body.filename).toBe(file);
      const done = await documentStatus(res.body.document.id as string);
      expect(done).toMatchObject({ status: 'indexed', failure_reason: null, title });
    }
  });

  /** POST /api/upload of one file part written by hand; a `type` of null sends no Content-Type. */
  const uploadPart = (filename: string, bytes: Uint8Array | string, type: string | null) => {
    const boundary = 'hand-written-boundary';
    const typeLine = type === null ? '' : `Content-Type: ${type}\r\n`;
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\n${typeLine}\r\n`;
    const tail = `\r\n--${boundary}--\r\n`;
    const body = Buffer.concat([Buffer.from(head), Buffer.from(bytes), Buffer.from(tail)]);
    return upload(body, 'alice', `multipart/form-data; boundary=${boundary}`);
  };

  it('a PDF or DOCX file part with no Content-Type (text/plain by RFC 7578, as Python requests sends it) is stored as what its bytes are, and indexed', async () => {
    const cases = [
      ['handbook.pdf', buildPdf({ lines: ['Refunds are paid within 14 days.'] }), 'pdf'],
      ['onboarding.docx', await buildDocx(), 'docx'],
    ] as const;
    for (const [name, bytes, format] of cases) {
      const res = await uploadPart(name, bytes, null);
      expect([res.status, res.body]).toEqual([202, expect.objectContaining({ filename: name })]);
      const done = await documentStatus(res.body.document.id as string);
      expect(done).toMatchObject({ status: 'indexed', failure_reason: null });
      const key = (done.source_uri as string).replace(/^s3:\/\/[^/]+\//, '');
      const stored = await stack.s3.client.send(
        new HeadObjectCommand({ Bucket: stack.s3.bucket, Key: key }),
      );
      expect(stored.ContentType).toBe(UPLOAD_CONTENT_TYPES[format]);
    }
    // Text under a .pdf name is still refused for its type; a PDF under a .txt name keeps the type
    // it came with, and ingestion reads it by its bytes.
    expectError(await uploadPart('fake.pdf', 'plain words', null), 400, 'validation_error');
    const misnamed = await uploadPart(
      'notes.txt',
      buildPdf({ lines: ['Misnamed notes are still read as a PDF.'] }),
      null,
    );
    expect(misnamed.status).toBe(202);
    const done = await documentStatus(misnamed.body.document.id as string);
    expect(done).toMatchObject({ status: 'indexed', failure_reason: null });
  });

  it('an unknown extension sent as application/octet-stream stays a 400; a declared type still wins', async () => {
    const unknown = await curl(
      'alice',
      '-X',
      'POST',
      `${api.server.url}/api/upload`,
      '-F',
      'file=@tool.exe',
    );
    expectError(unknown, 400, 'validation_error');
    expect(unknown.body.error.message).toContain('".exe" is not supported; supported types are');
    const declared = await curl(
      'alice',
      '-X',
      'POST',
      `${api.server.url}/api/upload`,
      '-F',
      'file=@bulky-waste.md;type=application/pdf',
    );
    expectError(declared, 400, 'validation_error');
    expect(declared.body.error.message).toContain('does not match the file\'s extension ".md"');
  });

  it('4xx for a wrong type, a wrong field, an empty file, or a body that is not a form', async () => {
    expectError(
      await upload(fileForm('tool.exe', 'MZ', 'application/octet-stream')),
      400,
      'validation_error',
    );
    expectError(await upload(fileForm('a.pdf', 'text', 'text/plain')), 400, 'validation_error');
    expectError(
      await upload(fileForm('a.txt', 'text', 'text/plain', 'upload')),
      400,
      'validation_error',
    );
    expectError(await upload(fileForm('a.txt', '', 'text/plain')), 400, 'validation_error');
    expectError(
      await upload(JSON.stringify({ file: 'x' }), 'alice', 'application/json'),
      400,
      'validation_error',
    );
    expectError(
      await upload('--x\r\nbroken', 'alice', 'multipart/form-data; boundary=x'),
      400,
      'validation_error',
    );
    // A body that ends inside the file part.
    expectError(
      await upload(
        '--x\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nabc',
        'alice',
        'multipart/form-data; boundary=x',
      ),
      400,
      'validation_error',
    );
    // A "file" part without a file name is a text field to the form: the message says so.
    const named = await upload(
      '--x\r\nContent-Disposition: form-data; name="file"\r\n\r\nabc\r\n--x--\r\n',
      'alice',
      'multipart/form-data; boundary=x',
    );
    expectError(named, 400, 'validation_error');
    expect(named.body.error.message).toContain('file: send it as a file, with a file name');
    const two = fileForm('a.txt', 'one', 'text/plain');
    two.append('file', new Blob(['two'], { type: 'text/plain' }), 'b.txt');
    expectError(await upload(two), 400, 'validation_error');
    const res = await fetch(`${api.server.url}/api/upload`, {
      method: 'POST',
      body: fileForm('a.txt', 'x', 'text/plain'),
    });
    expect(res.status).toBe(401);
  });

  it.each([
    ['no q', ''],
    ['an empty q', '?q='],
    ['a blank q', '?q=%20%20'],
    ['a q over 500 characters', `?q=${'a'.repeat(501)}`],
    ['an unknown parameter', '?q=test&top_k=3'],
    ['a repeated q', '?q=test&q=query'],
    ['a repeated rag', '?q=test&rag=true&rag=true'],
    ['rag neither true nor false', '?q=test&rag=yes'],
    ['a NUL in q', '?q=te%00st'],
    ['a NUL in rag=true', '?q=te%00st&rag=true'],
  ])('400 with the error model for %s', async (_name, query) => {
    const res = await get(query);
    expectError(res, 400, 'validation_error');
  });

  it('401 without a token', async () => {
    const res = await fetch(`${api.server.url}/api/search?q=test`);
    expect(res.status).toBe(401);
  });

  it('429 when the monthly answer cap is used up; results-only search still answers', async () => {
    const first = await get('?q=test%20query&rag=true', 'tiny');
    expect(first.status).toBe(200);
    expect(first.body.rag.rateLimit).toMatchObject({ limit: 1, remaining: 0 });
    const second = await get('?q=test%20query&rag=true', 'tiny');
    expect(second.status).toBe(429);
    expect(second.body).toMatchObject({
      error: { code: 'quota_exceeded', retryable: false, details: { quota: 'answers', limit: 1 } },
    });
    expect(second.headers.get('x-ratelimit-limit')).not.toBeNull();
    expect((await get('?q=test%20query', 'tiny')).status).toBe(200);
  });
});

describe('the upload limit and a Lambda request', () => {
  it('a largest upload, base64-encoded in the event, fits a synchronous invocation', async () => {
    const issuer = await createLocalIssuer();
    const verifier = createJwtVerifier({
      issuer: issuer.issuer,
      audience: issuer.audience,
      jwks: issuer.jwks(),
    });
    let eventBytes = 0;
    let bodyBytes = 0;
    const server = await createLocalHttpServer({
      verifier,
      routes: [
        {
          method: 'POST',
          path: '/api/upload',
          maxBodyBytes: MAX_UPLOAD_BODY_BYTES,
          handler: async (event) => {
            eventBytes = Buffer.byteLength(JSON.stringify(event));
            bodyBytes = event.body?.length ?? 0;
            return { statusCode: 204 };
          },
        },
      ],
    });
    try {
      const token = issuer.issueToken({ sub: 'alice', tenantId: 'acme', admin: true, plan: 'pro' });
      const boundary = '----groundwork-boundary';
      const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.txt"\r\nContent-Type: text/plain\r\n\r\n`;
      const tail = `\r\n--${boundary}--\r\n`;
      const body = Buffer.concat([
        Buffer.from(head),
        Buffer.alloc(MAX_UPLOAD_BODY_BYTES - head.length - tail.length, 0x61),
        Buffer.from(tail),
      ]);
      expect(body.byteLength).toBe(MAX_UPLOAD_BODY_BYTES);
      const res = await fetch(`${server.url}/api/upload`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': `multipart/form-data; boundary=${boundary}`,
        },
        body,
      });
      expect(res.status).toBe(204);
      const envelope = eventBytes - bodyBytes;
      console.log(
        `largest upload body ${MAX_UPLOAD_BODY_BYTES} B -> event ${eventBytes} B ` +
          `(base64 body ${bodyBytes} B, envelope ${envelope} B); Lambda limit ${LAMBDA_SYNC_PAYLOAD_BYTES} B`,
      );
      expect(bodyBytes).toBe(Math.ceil(MAX_UPLOAD_BODY_BYTES / 3) * 4);
      expect(eventBytes).toBeLessThanOrEqual(LAMBDA_SYNC_PAYLOAD_BYTES);
    } finally {
      await server.close();
    }
  });
});
