/**
 * The OpenAPI document (docs/openapi.json, generated from the route table) against the live
 * responses of the local server: every route is called, and each response's status must be one
 * the document lists for the operation, its JSON body must validate against the schema the
 * document gives for that status (JSON Schema 2020-12, formats checked), and an authenticated
 * success must carry the rate-limit headers the document promises.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { API_ROUTES, routeKey } from '../../lambdas/http/api-routes';
import { startLocalApi, type LocalApi } from '../../local/api';
import { startLocalStack, type LocalStack } from '../../local/stack';
import { createHashEmbedder } from '../support/hash-embedder';

process.env.POWERTOOLS_METRICS_DISABLED = 'true';

type Json = Record<string, unknown>;
const DOC_ID = 'https://groundwork.invalid/openapi.json';
const doc = JSON.parse(
  readFileSync(path.join(__dirname, '../../docs/openapi.json'), 'utf8'),
) as Json & { paths: Record<string, Record<string, Json>> };

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema({ ...doc, $id: DOC_ID });

interface Sample {
  readonly key: string;
  readonly url: string;
  /** JSON, or a FormData sent as multipart/form-data. */
  readonly body?: unknown;
  readonly token?: 'user' | 'admin' | 'none';
}

describe('the OpenAPI document against the live local server', () => {
  let stack: LocalStack;
  let api: LocalApi;
  const tokens: Record<'user' | 'admin', string> = { user: '', admin: '' };
  const covered = new Set<string>();

  beforeAll(async () => {
    stack = await startLocalStack({ embedder: createHashEmbedder(), logLevel: 'SILENT' });
    api = await startLocalApi(stack);
    tokens.user = api.issuer.issueToken({ sub: 'alice', tenantId: 'acme' });
    tokens.admin = api.issuer.issueToken({ sub: 'carol', tenantId: 'acme', admin: true });
    const put = (key: string, body: string | Uint8Array) =>
      stack.s3.client.send(new PutObjectCommand({ Bucket: stack.s3.bucket, Key: key, Body: body }));
    await put(
      'tenants/acme/users/alice/shipping.md',
      '# Shipping\n\nExpress shipping takes two business days. Standard shipping takes five.',
    );
    // Not a PDF: indexing fails, so the document can be retried.
    await put('tenants/acme/users/alice/broken.pdf', 'this is not a pdf at all');
    await stack.queue.idle();
  });
  afterAll(async () => {
    await api?.close();
    await stack?.stop();
  });

  /** Calls `sample` and checks the response against the document; returns the parsed body. */
  async function check(sample: Sample): Promise<{ status: number; body: Json }> {
    const [method, template] = sample.key.split(' ') as [string, string];
    const operation = doc.paths[template]?.[method.toLowerCase()] as
      { responses: Record<string, Json> } | undefined;
    expect(operation).toBeDefined();
    const who = sample.token ?? 'user';
    const res = await fetch(`${api.server.url}${sample.url}`, {
      method,
      headers: {
        ...(who === 'none' ? {} : { authorization: `Bearer ${tokens[who]}` }),
        ...(sample.body === undefined || sample.body instanceof FormData
          ? {}
          : { 'content-type': 'application/json' }),
      },
      ...(sample.body === undefined
        ? {}
        : { body: sample.body instanceof FormData ? sample.body : JSON.stringify(sample.body) }),
    });
    // JSON, or the Server-Sent Events of a streamed route (their media type must be documented).
    const mediaType = (res.headers.get('content-type') ?? '').split(';')[0]!;
    const body = (
      mediaType === 'application/json' ? await res.json() : (await res.text(), {})
    ) as Json;
    const documented = operation!.responses[String(res.status)] as
      { content?: Record<string, { schema?: Json }>; headers?: Json } | undefined;
    expect({ key: sample.key, status: res.status, documented: documented !== undefined }).toEqual({
      key: sample.key,
      status: res.status,
      documented: true,
    });
    expect({
      key: sample.key,
      mediaType,
      documented: documented?.content?.[mediaType] !== undefined,
    }).toEqual({
      key: sample.key,
      mediaType,
      documented: true,
    });
    const schema = documented?.content?.['application/json']?.schema;
    if (schema && Object.keys(schema).length > 0) {
      const ref = String(schema.$ref).replace(/^#/, `${DOC_ID}#`);
      const valid = ajv.validate({ $ref: ref }, body);
      expect({ key: sample.key, status: res.status, errors: ajv.errors ?? null }).toEqual({
        key: sample.key,
        status: res.status,
        errors: null,
      });
      expect(valid).toBe(true);
    }
    if (res.status < 300 && documented?.headers && who !== 'none') {
      for (const name of Object.keys(documented.headers)) {
        expect(res.headers.get(name)).not.toBeNull();
      }
    }
    if (res.status < 300) covered.add(sample.key);
    return { status: res.status, body };
  }

  it('every route answers as documented, successes and errors', async () => {
    await check({ key: 'GET /api/health', url: '/api/health', token: 'none' });
    await check({
      key: 'POST /api/rag/search',
      url: '/api/rag/search',
      body: { query_text: 'express shipping' },
    });
    const answer = await check({
      key: 'POST /api/rag/answer',
      url: '/api/rag/answer',
      body: { query_text: 'How long does express shipping take?' },
    });
    await check({
      key: 'POST /api/lexybrain/rag',
      url: '/api/lexybrain/rag',
      body: { message: 'How long does express shipping take?', threadId: null },
    });
    const threadId = String(answer.body.thread_id);
    const messageId = String(answer.body.message_id);
    await check({
      key: 'POST /api/chat/conversations/{conversationId}/messages',
      url: `/api/chat/conversations/${threadId}/messages`,
      body: { content: 'And how long does standard shipping take?' },
    });
    await check({ key: 'GET /api/threads', url: '/api/threads' });
    await check({ key: 'GET /api/threads/{id}', url: `/api/threads/${threadId}` });
    await check({
      key: 'POST /api/messages/{id}/feedback',
      url: `/api/messages/${messageId}/feedback`,
      body: { rating: 'positive', comment: 'clear' },
    });
    await check({ key: 'DELETE /api/threads/{id}', url: `/api/threads/${threadId}` });
    await check({ key: 'GET /api/usage', url: '/api/usage' });
    const listed = await check({ key: 'GET /api/documents', url: '/api/documents' });
    const documents = listed.body.documents as { id: string; status: string; source_uri: string }[];
    const indexed = documents.find((d) => d.status === 'indexed')!;
    const failed = documents.find((d) => d.status === 'failed')!;
    await check({ key: 'GET /api/documents/{id}', url: `/api/documents/${indexed.id}` });
    await check({
      key: 'GET /api/documents/{id}/passage',
      url: `/api/documents/${indexed.id}/passage?start=0&end=20`,
    });
    await check({
      key: 'POST /api/documents/{id}/retry',
      url: `/api/documents/${failed.id}/retry`,
    });
    await check({
      key: 'POST /api/documents',
      url: '/api/documents',
      body: { filename: 'notes.md', content_type: 'text/markdown', size_bytes: 10 },
    });
    await check({ key: 'DELETE /api/documents/{id}', url: `/api/documents/${indexed.id}` });
    await check({ key: 'GET /api/admin/stats', url: '/api/admin/stats', token: 'admin' });
    await check({ key: 'GET /api/admin/feedback', url: '/api/admin/feedback', token: 'admin' });
    await check({ key: 'GET /api/admin/prompts', url: '/api/admin/prompts', token: 'admin' });
    const created = await check({
      key: 'POST /api/admin/prompts',
      url: '/api/admin/prompts',
      token: 'admin',
      body: { profile: 'general', name: 'brief', instructions: 'Answer briefly, citing sources.' },
    });
    await check({
      key: 'POST /api/admin/prompts/{id}/activate',
      url: `/api/admin/prompts/${String(created.body.id)}/activate`,
      token: 'admin',
    });
    await check({
      key: 'POST /api/admin/prompts/{id}/deactivate',
      url: `/api/admin/prompts/${String(created.body.id)}/deactivate`,
      token: 'admin',
    });
    // Seed 000's admin routes.
    for (const key of [
      'GET /api/admin/lexybrain/rag/stats',
      'GET /api/admin/lexybrain/rag/feedback',
      'GET /api/admin/lexybrain/configs',
    ]) {
      await check({ key, url: key.split(' ')[1]!, token: 'admin' });
    }
    const config = await check({
      key: 'POST /api/admin/lexybrain/configs',
      url: '/api/admin/lexybrain/configs',
      token: 'admin',
      body: {
        name: 'ask_lexybrain_general_chat_v2',
        type: 'general',
        system_instructions: 'Answer briefly.',
        constraints: { retrieval_scope: ['docs'] },
      },
    });
    for (const action of ['activate', 'deactivate']) {
      await check({
        key: `POST /api/admin/lexybrain/configs/{id}/${action}`,
        url: `/api/admin/lexybrain/configs/${String(config.body.id)}/${action}`,
        token: 'admin',
      });
    }

    await check({
      key: 'GET /api/admin/source-policy',
      url: '/api/admin/source-policy',
      token: 'admin',
    });
    await check({
      key: 'POST /api/admin/source-policy',
      url: '/api/admin/source-policy',
      token: 'admin',
      body: { mode: 'permissive' },
    });
    await check({
      key: 'POST /api/admin/harness',
      url: '/api/admin/harness',
      token: 'admin',
      body: { query_text: 'How long does express shipping take?' },
    });
    // Seed 004: results, an answer, and a multipart upload.
    await check({ key: 'GET /api/search', url: '/api/search?q=express%20shipping' });
    await check({ key: 'GET /api/search', url: '/api/search?q=express%20shipping&rag=true' });
    const form = new FormData();
    form.append(
      'file',
      new Blob(['# Upload\n\nA seed 004 upload.'], { type: 'text/markdown' }),
      'up.md',
    );
    await check({ key: 'POST /api/upload', url: '/api/upload', body: form });
    expect((await check({ key: 'GET /api/search', url: '/api/search?q=' })).status).toBe(400);
    expect(
      (await check({ key: 'POST /api/upload', url: '/api/upload', body: { file: 'x' } })).status,
    ).toBe(400);

    // Errors, as documented: no token, invalid input, not found, not an admin.
    for (const route of API_ROUTES.filter((r) => r.auth)) {
      const url = route.path.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000');
      const { status } = await check({ key: routeKey(route), url, token: 'none' });
      expect(status).toBe(401);
    }
    expect(
      (await check({ key: 'POST /api/rag/search', url: '/api/rag/search', body: { top_k: 0 } }))
        .status,
    ).toBe(400);
    expect(
      (await check({ key: 'POST /api/documents', url: '/api/documents', body: { filename: '' } }))
        .status,
    ).toBe(422);
    expect(
      (await check({ key: 'POST /api/lexybrain/rag', url: '/api/lexybrain/rag', body: {} })).status,
    ).toBe(422);
    expect(
      (
        await check({
          key: 'GET /api/documents/{id}',
          url: '/api/documents/00000000-0000-4000-8000-000000000000',
        })
      ).status,
    ).toBe(404);
    expect((await check({ key: 'GET /api/admin/stats', url: '/api/admin/stats' })).status).toBe(
      403,
    );
    expect(
      (
        await check({
          key: 'POST /api/admin/harness',
          url: '/api/admin/harness',
          body: { query_text: 'How long does express shipping take?' },
        })
      ).status,
    ).toBe(403);

    // Every route of the table was called with success at least once.
    expect(API_ROUTES.map(routeKey).filter((key) => !covered.has(key))).toEqual([]);
  });
});
