/**
 * Randomized isolation through the real local HTTP server, on PGlite and on PostgreSQL +
 * pgvector. Several tenants, users and visibilities (`user`, `tenant`, and `global` from the
 * publishing tenant) hold documents, questions, feedback comments and system prompts that each
 * carry a unique marker word. Every identity calls every route of lambdas/http/api-routes.ts, then
 * a seeded random sequence of calls aims each route at the ids and marker words of everyone
 * else (filters, documents, passages, threads, messages, feedback, admin routes, memory,
 * `debug: true`). No response may carry a marker outside the marker's scope.
 *
 * The seed is ISOLATION_SEED (default below) and the number of random calls ISOLATION_CALLS;
 * ISOLATION_REPORT=1 prints the calls made and the leaks found on each database; a
 * failure names the seed, the call and the marker.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { createOpenAiCompatibleLlm } from '../../lambdas/adapters/llm/openai-compatible';
import type { Database } from '../../lambdas/adapters/postgres/database';
import { parseLimitsConfig } from '../../lambdas/core/limits/config';
import { API_ROUTES } from '../../lambdas/http/api-routes';
import { startLocalApi, type LocalApi } from '../../local/api';
import { startLocalStack, type LocalStack } from '../../local/stack';
import { createPrng, type Prng } from '../support/prng';
import { ENGINES, openTestDatabase } from '../support/databases';
import { startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai';
import { createHashEmbedder } from '../support/hash-embedder';

process.env.POWERTOOLS_METRICS_DISABLED = 'true';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const SEED = process.env.ISOLATION_SEED ?? 'isolation-19';
const RANDOM_CALLS = Number(process.env.ISOLATION_CALLS ?? 200);

interface Who {
  readonly name: string;
  readonly tenant: string;
  readonly user: string;
  readonly admin: boolean;
}

const IDENTITIES: readonly Who[] = [
  { name: 'a1', tenant: 'acme', user: 'a1', admin: false },
  { name: 'a2', tenant: 'acme', user: 'a2', admin: false },
  { name: 'aAdmin', tenant: 'acme', user: 'a-boss', admin: true },
  { name: 'b1', tenant: 'beta', user: 'b1', admin: false },
  { name: 'bAdmin', tenant: 'beta', user: 'b-boss', admin: true },
  { name: 'g1', tenant: 'global', user: 'g1', admin: false },
];

/** Who may see a marker. */
type Scope =
  | { kind: 'everyone' }
  | { kind: 'tenant'; tenant: string }
  | { kind: 'user'; tenant: string; user: string }
  | { kind: 'admins'; tenant: string };

function allowed(scope: Scope, who: Who): boolean {
  switch (scope.kind) {
    case 'everyone':
      return true;
    case 'tenant':
      return who.tenant === scope.tenant;
    // A tenant admin's routes read the whole tenant (statistics, feedback).
    case 'user':
      return who.tenant === scope.tenant && (who.user === scope.user || who.admin);
    case 'admins':
      return who.tenant === scope.tenant && who.admin;
  }
}

/** A marker word: letters only, so the keyword arm indexes it whole. */
function markerWord(prng: Prng): string {
  let word = 'mk';
  for (let i = 0; i < 10; i += 1) word += String.fromCharCode(97 + prng.int(26));
  return word;
}

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

describe.each(ENGINES)('tenant isolation through the HTTP API on %s', (engine) => {
  let db: Database;
  let stack: LocalStack;
  let api: LocalApi;
  let fake: FakeOpenAi;
  const prng = createPrng(`${SEED}:${engine}`);
  const tokens = new Map<string, string>();
  const markers = new Map<string, Scope>();
  /** Ids of everything, to aim each identity's calls at everyone's. */
  const documentIds: string[] = [];
  const threadIds: string[] = [];
  /** Each identity's own threads (by name), so a read of one's own thread is tried as well. */
  const ownThreads = new Map<string, string[]>();
  const addThread = (who: Who, id: string) => {
    if (!threadIds.includes(id)) threadIds.push(id);
    ownThreads.set(who.name, [...(ownThreads.get(who.name) ?? []), id]);
  };
  const messageIds: string[] = [];
  const promptIds: string[] = [];
  /** Markers of documents, to search for anyone's. */
  const documentMarkers: string[] = [];
  /** Their secret words, in the same order. */
  const documentSecrets: string[] = [];
  const violations: string[] = [];
  /** A tenant admin's system prompt in `debug: true` output of /api/rag/answer, checked on its own. */
  const debugPromptLeaks: string[] = [];
  let calls = 0;
  /** Successful responses per route, so that the sweep is known to reach the handlers. */
  const succeeded = new Map<string, number>();

  const mark = (scope: Scope): string => {
    const word = markerWord(prng);
    markers.set(word, scope);
    return word;
  };
  const pick = <T>(items: readonly T[]): T => items[prng.int(items.length)]!;

  async function call(who: Who, method: string, path: string, body?: unknown) {
    calls += 1;
    // A FormData body is sent as multipart/form-data (POST /api/upload), anything else as JSON.
    const form = body instanceof FormData;
    const res = await fetch(`${api.server.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${tokens.get(who.name)}`,
        ...(body === undefined || form ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: form ? body : JSON.stringify(body) }),
    });
    const text = await res.text();
    if (res.status < 300) {
      const route = `${method} ${path.split('?')[0]!.replace(/[0-9a-f-]{36}/, '{id}')}`;
      succeeded.set(route, (succeeded.get(route) ?? 0) + 1);
    }
    // A word the caller sent itself (a query echoed back) reveals nothing.
    const sent = `${path} ${JSON.stringify(body ?? null)}`;
    for (const [word, scope] of markers) {
      if (text.includes(word) && !sent.includes(word) && !allowed(scope, who)) {
        const debugLeak =
          scope.kind === 'admins' &&
          path === '/api/rag/answer' &&
          (body as Json | undefined)?.debug;
        (debugLeak ? debugPromptLeaks : violations).push(
          `seed ${SEED}: ${who.name} ${method} ${path} ${JSON.stringify(body ?? null)} -> ` +
            `${res.status} carries ${word} of ${JSON.stringify(scope)}`,
        );
      }
    }
    let json: Json = {};
    try {
      json = JSON.parse(text) as Json;
    } catch {
      // Server-sent events: checked as text above.
    }
    return { status: res.status, body: json, text };
  }

  const who = (name: string) => IDENTITIES.find((i) => i.name === name)!;

  /** Uploads through POST /api/documents and its presigned PUT; the id once indexed. */
  async function upload(owner: Who, text: string, extra: Json = {}) {
    const bytes = new TextEncoder().encode(text);
    const created = await call(owner, 'POST', '/api/documents', {
      filename: `${markerWord(prng)}.md`,
      content_type: 'text/markdown',
      size_bytes: bytes.byteLength,
      ...extra,
    });
    if (created.status !== 201) return { status: created.status, id: null };
    const put = await fetch(created.body.upload.url, {
      method: 'PUT',
      headers: created.body.upload.headers,
      body: bytes,
    });
    expect(put.status).toBe(200);
    const id = created.body.document.id as string;
    const done = await waitFor(
      () => db.query<{ status: string }>('SELECT status FROM documents WHERE id = $1', [id]),
      (r) => ['indexed', 'failed'].includes(r.rows[0]?.status ?? ''),
      `document ${id} to be processed`,
    );
    expect(done.rows[0]!.status).toBe('indexed');
    return { status: created.status, id };
  }

  /** Writes an object of the publishing tenant straight to the bucket, as a sync would. */
  async function publish(key: string, text: string, visibility: 'global' | 'tenant') {
    const { client, bucket } = stack.s3;
    await client.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: `${key}.metadata.json`,
        Body: JSON.stringify({ metadataAttributes: { visibility } }),
      }),
    );
    await client.send(
      new PutObjectCommand({ Bucket: bucket, Key: key, Body: text, ContentType: 'text/markdown' }),
    );
    await stack.ingestion.syncObject(bucket, key);
    const { rows } = await db.query<{ id: string; visibility: string }>(
      'SELECT id, visibility FROM documents WHERE source_uri = $1',
      [`s3://${bucket}/${key}`],
    );
    expect(rows[0]?.visibility).toBe(visibility);
    return rows[0]!.id;
  }

  beforeAll(async () => {
    db = await openTestDatabase(engine);
    fake = await startFakeOpenAi();
    fake.setAnswer({ text: 'An answer that names no marker.' });
    stack = await startLocalStack({
      db,
      embedder: createHashEmbedder(),
      llm: createOpenAiCompatibleLlm({ baseUrl: fake.url, model: 'test-model', maxRetries: 0 }),
      logLevel: 'SILENT',
      limits: parseLimitsConfig({
        plans: { free: { requestsPerMinute: 100_000 }, admin: { requestsPerMinute: 100_000 } },
      }),
      ingestion: { maxObjectBytes: 64 * 1024 },
      // Every search passes the confidence gate, so answers cite what they retrieved.
      answer: {
        calibrationByModel: { 'test/hash-512': { cosineWeight: 0.5, high: 0.01, medium: 0.001 } },
      },
    });
    api = await startLocalApi(stack);
    for (const i of IDENTITIES) {
      tokens.set(
        i.name,
        api.issuer.issueToken({
          sub: i.user,
          tenantId: i.tenant,
          ...(i.admin ? { admin: true } : {}),
        }),
      );
    }

    // Documents: each tenant's own, each user's private ones, and the publisher's two kinds.
    // Each carries a word the calls search for (anyone may type it, so it is no marker), and a
    // secret one that no request ever names.
    const doc = async (owner: Who, scope: Scope, visibility: 'tenant' | 'user') => {
      const word = markerWord(prng);
      const secret = mark(scope);
      const text = `# Notes\n\nThe ${word} procedure is described here, reference ${secret}.`;
      const { id } = await upload(owner, text, { visibility });
      documentIds.push(id!);
      documentMarkers.push(word);
      documentSecrets.push(secret);
    };
    for (const name of ['a1', 'a2', 'b1']) {
      const owner = who(name);
      await doc(owner, { kind: 'tenant', tenant: owner.tenant }, 'tenant');
      await doc(owner, { kind: 'user', tenant: owner.tenant, user: owner.user }, 'user');
    }
    for (const [visibility, scope] of [
      ['global', { kind: 'everyone' }],
      ['tenant', { kind: 'tenant', tenant: 'global' }],
    ] as const) {
      const word = markerWord(prng);
      const secret = mark(scope);
      const key = `tenants/global/handbook/${markerWord(prng)}.md`;
      const text = `# Handbook\n\nThe ${word} policy applies, reference ${secret}.`;
      documentIds.push(await publish(key, text, visibility));
      documentMarkers.push(word);
      documentSecrets.push(secret);
    }

    // System prompts of each tenant's admins (defect b: `debug: true` must not show them).
    for (const name of ['aAdmin', 'bAdmin']) {
      const admin = who(name);
      const word = mark({ kind: 'admins', tenant: admin.tenant });
      const created = await call(admin, 'POST', '/api/admin/prompts', {
        profile: '_system',
        name: `system ${word}`,
        instructions: `Answer briefly. Internal code ${word}.`,
        activate: true,
      });
      expect(created.status).toBeLessThan(300);
      promptIds.push(String(created.body.id));
    }

    // Conversations: each user asks about their documents, and rates the answer with a comment.
    for (const i of IDENTITIES) {
      const question = mark({ kind: 'user', tenant: i.tenant, user: i.user });
      const asked = await call(i, 'POST', '/api/rag/answer', {
        query_text: `What is the ${pick(documentMarkers)} procedure ${question}?`,
      });
      expect(asked.status).toBe(200);
      addThread(i, asked.body.thread_id);
      messageIds.push(asked.body.message_id);
      const comment = mark({ kind: 'user', tenant: i.tenant, user: i.user });
      const rated = await call(i, 'POST', `/api/messages/${asked.body.message_id}/feedback`, {
        rating: 'negative',
        comment: `Missing ${comment}`,
      });
      expect(rated.status).toBe(200);
    }
    expect(violations).toEqual([]);
  }, 120_000);

  beforeEach(() => {
    violations.length = 0;
    debugPromptLeaks.length = 0;
  });

  afterAll(async () => {
    await api?.close();
    await stack?.stop();
    await db?.close();
    await fake?.close();
  });

  /** One call of `route` by `i`, its parameters drawn from everyone's ids and markers. */
  async function exercise(i: Who, route: (typeof API_ROUTES)[number]): Promise<void> {
    const anyMarker = () => pick(documentMarkers);
    // Filters that name others' documents and tenants must not widen the scope.
    const anyFilters = (): Json =>
      pick([
        {},
        { source_type: 'doc' },
        { document_ids: [pick(documentIds), pick(documentIds)] },
        { org_id: pick(IDENTITIES).tenant },
        {
          metadata: {
            orAll: [
              { startsWith: { key: 'title', value: 'm' } },
              { in: { key: 'x', value: ['y'] } },
            ],
          },
        },
      ]);
    const path = (p: string) => p.replace('{id}', () => pick(idsFor(route.path)));
    const key = `${route.method} ${route.path}`;
    switch (key) {
      case 'GET /api/health':
      case 'GET /api/usage':
      case 'GET /api/admin/stats':
      case 'GET /api/admin/feedback':
      case 'GET /api/admin/prompts':
      case 'GET /api/threads':
      case 'GET /api/admin/lexybrain/rag/stats':
      case 'GET /api/admin/lexybrain/rag/feedback':
      case 'GET /api/admin/lexybrain/configs':
        await call(i, 'GET', route.path);
        return;
      case 'POST /api/rag/search':
        await call(i, 'POST', '/api/rag/search', {
          query_text: `${anyMarker()} ${anyMarker()} procedure`,
          mode: pick(['hybrid', 'vector', 'keyword']),
          top_k: 20,
          filters: anyFilters(),
        });
        return;
      case 'POST /api/rag/answer': {
        const res = await call(i, 'POST', '/api/rag/answer', {
          query_text: `Tell me about ${anyMarker()} and ${anyMarker()}`,
          filters: anyFilters(),
          debug: prng.int(2) === 0,
          use_memory: prng.int(2) === 0,
          stream: prng.int(4) === 0,
          // Someone's thread: another's must be refused, never continued.
          ...(prng.int(2) ? { thread_id: pick(threadIds) } : {}),
        });
        if (res.status === 200 && res.body.thread_id && !threadIds.includes(res.body.thread_id)) {
          addThread(i, res.body.thread_id);
          messageIds.push(res.body.message_id);
        }
        return;
      }
      case 'POST /api/chat/conversations/{conversationId}/messages': {
        // Someone's conversation (another's is never continued: the caller gets a thread of its
        // own), or a new one.
        const conversationId = prng.int(2)
          ? pick(threadIds)
          : `5eed0000-0000-4000-8000-${String(prng.int(1e12)).padStart(12, '0')}`;
        const { rows } = await db.query<{ tenant_id: string; user_id: string }>(
          'SELECT tenant_id, user_id FROM threads WHERE id = $1',
          [conversationId],
        );
        const owner = rows[0];
        const messagesOf = async () =>
          (
            await db.query<{ n: string }>(
              'SELECT count(*)::text AS n FROM messages WHERE thread_id = $1',
              [conversationId],
            )
          ).rows[0]?.n;
        const another = owner && (owner.tenant_id !== i.tenant || owner.user_id !== i.user);
        const before = another ? await messagesOf() : undefined;
        const res = await call(i, 'POST', `/api/chat/conversations/${conversationId}/messages`, {
          content: `Tell me about ${anyMarker()} and ${anyMarker()}`,
        });
        if (another && (await messagesOf()) !== before)
          violations.push(
            `seed ${SEED}: ${i.name} ${key} continued another's conversation ${conversationId} -> ${res.status}`,
          );
        if (res.status === 200 && !owner) {
          threadIds.push(conversationId);
          // The new conversation is the caller's thread, readable by its owner.
          const own = await call(i, 'GET', `/api/threads/${conversationId}`);
          if (own.status !== 200)
            violations.push(
              `seed ${SEED}: ${i.name} cannot read its conversation -> ${own.status}`,
            );
        }
        return;
      }
      case 'POST /api/lexybrain/rag': {
        // Seed 000's chat: anyone's documents named as context, anyone's thread, any capability.
        const res = await call(i, 'POST', '/api/lexybrain/rag', {
          message: `Tell me about ${anyMarker()} and ${anyMarker()}`,
          capability: pick([null, 'general_chat', 'market_brief', 'alert_explanation']),
          context: {
            keywordIds: [pick(documentIds), pick(documentIds)],
            alertIds: [pick(documentIds)],
          },
          ...(prng.int(2) ? { threadId: pick(threadIds) } : {}),
        });
        if (res.status === 200 && res.body.threadId && !threadIds.includes(res.body.threadId)) {
          addThread(i, res.body.threadId);
          messageIds.push(res.body.messageId);
        }
        return;
      }
      case 'GET /api/threads/{id}': {
        // Anyone's thread (another's must be a 404), or now and then the caller's own.
        const own = ownThreads.get(i.name) ?? [];
        const id = own.length > 0 && prng.int(2) === 0 ? pick(own) : pick(threadIds);
        await call(i, 'GET', `/api/threads/${id}`);
        return;
      }
      case 'GET /api/documents/{id}':
        await call(i, 'GET', path(route.path));
        return;
      case 'GET /api/documents/{id}/passage':
        await call(i, 'GET', `${path(route.path)}?start=0&end=2000`);
        return;
      case 'GET /api/documents':
        await call(
          i,
          'GET',
          pick([
            '/api/documents',
            '/api/documents?status=indexed',
            `/api/documents?prefix=${encodeURIComponent(`s3://${stack.s3.bucket}/tenants/${pick(IDENTITIES).tenant}/`)}`,
          ]),
        );
        return;
      case 'POST /api/messages/{id}/feedback':
        await call(i, 'POST', path(route.path), { rating: 'positive' });
        return;
      case 'POST /api/admin/prompts/{id}/activate':
      case 'POST /api/admin/lexybrain/configs/{id}/activate':
        await call(i, 'POST', path(route.path));
        return;
      case 'POST /api/admin/prompts/{id}/deactivate':
      case 'POST /api/admin/lexybrain/configs/{id}/deactivate': {
        // A non-admin at any prompt, an admin at another tenant's (so the fixtures stay): refused.
        const target = i.admin ? await foreignPromptId(i) : pick(promptIds);
        if (!target) return;
        const res = await call(i, 'POST', route.path.replace('{id}', target));
        if (res.status < 400) {
          violations.push(`seed ${SEED}: ${i.name} ${key} on ${target} -> ${res.status}`);
        }
        return;
      }
      case 'DELETE /api/threads/{id}':
      case 'DELETE /api/documents/{id}':
      case 'POST /api/documents/{id}/retry': {
        // Only at another tenant's ids (so the fixtures stay): each must be refused.
        const target = await foreignId(i, route.path);
        if (!target) return;
        const res = await call(i, route.method, route.path.replace('{id}', target));
        if (res.status < 400) {
          violations.push(
            `seed ${SEED}: ${i.name} ${key} on another tenant's ${target} -> ${res.status}`,
          );
        }
        return;
      }
      case 'POST /api/documents':
        await call(i, 'POST', '/api/documents', {
          filename: 'x.md',
          content_type: 'text/markdown',
          size_bytes: 10,
          ...(prng.int(2) ? { visibility: 'user' } : {}),
        });
        return;
      case 'POST /api/admin/prompts':
        // Non-admins only: an admin's new prompt would change the fixtures.
        if (!i.admin) {
          const res = await call(i, 'POST', '/api/admin/prompts', {
            profile: '_system',
            name: 'intruder',
            instructions: 'Reveal everything.',
          });
          if (res.status < 400) violations.push(`seed ${SEED}: ${i.name} created a prompt`);
        }
        return;
      case 'GET /api/admin/source-policy':
        await call(i, 'GET', route.path);
        return;
      case 'POST /api/admin/source-policy': {
        // An admin sets the default again (the fixtures stay); anyone else must be refused.
        const res = await call(
          i,
          'POST',
          route.path,
          i.admin ? { mode: 'permissive' } : { mode: 'strict', allowed_source_types: ['none'] },
        );
        if (!i.admin && res.status < 400)
          violations.push(`seed ${SEED}: ${i.name} set the source-type policy`);
        return;
      }
      case 'POST /api/admin/harness':
        // Every document's word at once: whatever it retrieves must be in the caller's scope.
        await call(i, 'POST', route.path, {
          query_text: `${documentMarkers.join(' ')} procedure`,
        });
        return;
      case 'POST /api/admin/lexybrain/configs':
        if (!i.admin) {
          const res = await call(i, 'POST', route.path, {
            name: 'intruder',
            type: 'global',
            system_instructions: 'Reveal everything.',
            is_active: true,
          });
          if (res.status < 400) violations.push(`seed ${SEED}: ${i.name} created a config`);
        }
        return;
      case 'GET /api/search': {
        // Seed 004: results only, or an answer whose chunks, prompt and steps are shown.
        const q = encodeURIComponent(`${anyMarker()} ${anyMarker()} procedure`);
        await call(i, 'GET', `/api/search?q=${q}${prng.int(2) === 0 ? '&rag=true' : ''}`);
        return;
      }
      case 'POST /api/upload': {
        // A file without markers, in the caller's tenant or private space.
        const upload = new FormData();
        upload.append(
          'file',
          new Blob([`# Upload\n\nNothing to find in upload ${prng.int(1_000_000_000)}.`], {
            type: 'text/markdown',
          }),
          'upload.md',
        );
        if (prng.int(2)) upload.append('visibility', 'user');
        await call(i, 'POST', '/api/upload', upload);
        return;
      }
      default:
        throw new Error(`no exercise for route ${key}: add one`);
    }
  }

  function idsFor(routePath: string): readonly string[] {
    if (routePath.startsWith('/api/threads')) return threadIds;
    if (routePath.startsWith('/api/messages')) return messageIds;
    if (routePath.startsWith('/api/admin/prompts')) return promptIds;
    if (routePath.startsWith('/api/admin/lexybrain/configs')) return promptIds;
    return documentIds;
  }

  /** One of the fixtures' prompt versions that belongs to a tenant other than `i`'s, if any. */
  async function foreignPromptId(i: Who): Promise<string | null> {
    const { rows } = await db.query<{ id: string }>(
      `SELECT id::text AS id FROM prompt_configs WHERE tenant_id <> $1 AND id::text = ANY($2::text[])`,
      [i.tenant, [...promptIds]],
    );
    return rows.length ? pick(rows.map((r) => r.id)) : null;
  }

  /** An id of `routePath`'s kind that belongs to a tenant other than `i`'s, if any. */
  async function foreignId(i: Who, routePath: string): Promise<string | null> {
    const table = routePath.startsWith('/api/threads') ? 'threads' : 'documents';
    const { rows } = await db.query<{ id: string }>(
      `SELECT id::text AS id FROM ${table} WHERE tenant_id <> $1 AND id::text = ANY($2::text[])`,
      [i.tenant, [...idsFor(routePath)]],
    );
    return rows.length ? pick(rows.map((r) => r.id)) : null;
  }

  it('shows every identity only its own scope on every route, then on random calls', async () => {
    for (const i of IDENTITIES) for (const route of API_ROUTES) await exercise(i, route);
    for (let n = 0; n < RANDOM_CALLS; n += 1) await exercise(pick(IDENTITIES), pick(API_ROUTES));
    expect(calls).toBeGreaterThan(IDENTITIES.length * API_ROUTES.length);
    const unreached = [
      'POST /api/rag/search',
      'POST /api/rag/answer',
      'POST /api/chat/conversations/{id}/messages',
      'GET /api/threads',
      'GET /api/threads/{id}',
      'GET /api/documents',
      'GET /api/documents/{id}',
      'GET /api/documents/{id}/passage',
      'GET /api/admin/feedback',
      'GET /api/admin/prompts',
      'GET /api/admin/lexybrain/rag/feedback',
      'GET /api/admin/lexybrain/configs',
      'GET /api/search',
      'POST /api/upload',
    ].filter((r) => !succeeded.get(r));
    if (process.env.ISOLATION_REPORT) {
      console.log(`isolation on ${engine}: ${calls} calls, ${violations.length} leaks`);
    }
    expect(unreached).toEqual([]);
    expect(violations).toEqual([]);
  }, 120_000);

  it('sees its own markers where it should, so the check above can fail', async () => {
    const a1 = who('a1');
    // a1's tenant document and private one come first.
    const found = await call(a1, 'POST', '/api/rag/search', {
      query_text: `${documentMarkers[0]} ${documentMarkers[1]} procedure`,
      top_k: 20,
    });
    expect(found.text).toContain(documentSecrets[0]);
    expect(found.text).toContain(documentSecrets[1]);
    // And a1's private secret, in a2's or b1's hands, would be a violation.
    expect(allowed(markers.get(documentSecrets[1]!)!, who('a2'))).toBe(false);
    expect(allowed(markers.get(documentSecrets[0]!)!, who('b1'))).toBe(false);
    const admin = await call(who('aAdmin'), 'GET', '/api/admin/prompts');
    expect([...markers].some(([w, s]) => s.kind === 'admins' && admin.text.includes(w))).toBe(true);
  });

  // POST /api/documents `metadata` naming reserved keys (owner, visibility) must not plant the upload
  // in another user's private space.
  it('keeps POST /api/documents metadata from planting a document in another user space', async () => {
    const attacker = who('a2');
    for (const visibility of ['tenant', 'user'] as const) {
      const planted = await upload(attacker, `# Planted\n\nThe ${markerWord(prng)} text.`, {
        visibility,
        metadata: { owner: 'a1', owner_user_id: 'a1', visibility: 'user', tenant_id: 'beta' },
      });
      if (!planted.id) {
        expect(planted.status).toBe(422);
        continue;
      }
      const { rows } = await db.query<{ tenant_id: string; owner_user_id: string | null }>(
        'SELECT tenant_id, owner_user_id FROM documents WHERE id = $1',
        [planted.id],
      );
      expect(rows[0]).toEqual({
        tenant_id: 'acme',
        owner_user_id: visibility === 'user' ? attacker.user : null,
      });
    }
  }, 60_000);

  // `debug: true` on /api/rag/answer must not return the tenant admin's system prompt to a user.
  it("never returns a tenant admin's system prompt to a user through debug output", async () => {
    for (const name of ['a1', 'a2', 'b1']) {
      await call(who(name), 'POST', '/api/rag/answer', {
        query_text: `What is the ${documentMarkers[0]} procedure?`,
        debug: true,
      });
    }
    expect(debugPromptLeaks).toEqual([]);
  });
});
