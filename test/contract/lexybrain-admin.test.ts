/**
 * Seed 000's thread, feedback and admin contract over HTTP, on PGlite and on PostgreSQL: the
 * local server with real tokens, answers from the project's pipeline (a fake OpenAI-compatible
 * LLM), then
 * - threads with `message_count` and `last_message_at`, listed by latest message, and DELETE as
 *   a soft deletion (the thread, its messages and their feedback gone from every read);
 * - feedback with the seed's `feedback_text` (or the project's `comment`, which wins);
 * - `/api/admin/lexybrain/rag/stats`, `/api/admin/lexybrain/rag/feedback` and
 *   `/api/admin/lexybrain/configs` (list, create, activate, deactivate): every field, admin only
 *   (403), tenant-scoped from the token, bad input a 4xx in the error model.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { createOpenAiCompatibleLlm } from '../../lambdas/adapters/llm/openai-compatible';
import type { Database } from '../../lambdas/adapters/postgres/database';
import {
  lexyConfigSchema,
  lexyConfigsResponseSchema,
  lexyFeedbackResponseSchema,
  lexyStatsResponseSchema,
} from '../../lambdas/admin/lexybrain-schema';
import { parseLimitsConfig } from '../../lambdas/core/limits/config';
import {
  deleteThreadResponseSchema,
  messageFeedbackResponseSchema,
  listThreadsResponseSchema,
  threadResponseSchema,
} from '../../lambdas/rag-answer/schema';
import { startLocalApi, type LocalApi } from '../../local/api';
import { startLocalStack, type LocalStack } from '../../local/stack';
import { ENGINES, openTestDatabase } from '../support/databases';
import { startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai';
import { createHashEmbedder } from '../support/hash-embedder';
import { MARKET_BRIEF_CONSTRAINTS } from '../support/lexybrain';

process.env.POWERTOOLS_METRICS_DISABLED = 'true';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const CALIBRATION = { 'test/hash-512': { cosineWeight: 0.5, high: 0.3, medium: 0.12 } };
const NOWHERE = '00000000-0000-4000-8000-000000000000';
/** Every seed admin route with a valid request, so that only the caller decides the answer. */
const SEED_ROUTES: readonly (readonly [string, string, unknown?])[] = [
  ['GET', '/api/admin/lexybrain/rag/stats'],
  ['GET', '/api/admin/lexybrain/rag/feedback'],
  ['GET', '/api/admin/lexybrain/configs'],
  [
    'POST',
    '/api/admin/lexybrain/configs',
    { name: 'n', type: 'general_chat', system_instructions: 'Answer.' },
  ],
  ['POST', `/api/admin/lexybrain/configs/${NOWHERE}/activate`, {}],
  ['POST', `/api/admin/lexybrain/configs/${NOWHERE}/deactivate`, {}],
];

describe.each(ENGINES)('seed 000 threads, feedback and admin routes on %s', (engine) => {
  let db: Database;
  let stack: LocalStack;
  let api: LocalApi;
  let fake: FakeOpenAi;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    db = await openTestDatabase(engine);
    fake = await startFakeOpenAi();
    stack = await startLocalStack({
      db,
      embedder: createHashEmbedder(),
      llm: createOpenAiCompatibleLlm({ baseUrl: fake.url, model: 'test-model', maxRetries: 0 }),
      logLevel: 'SILENT',
      limits: parseLimitsConfig({
        plans: { free: { requestsPerMinute: 100_000 }, admin: { requestsPerMinute: 100_000 } },
      }),
      answer: { calibrationByModel: CALIBRATION },
    });
    api = await startLocalApi(stack);
    tokens.alice = api.issuer.issueToken({ sub: 'alice', tenantId: 'acme' });
    tokens.bob = api.issuer.issueToken({ sub: 'bob', tenantId: 'acme' });
    tokens.carol = api.issuer.issueToken({ sub: 'carol', tenantId: 'acme', admin: true });
    tokens.gadmin = api.issuer.issueToken({ sub: 'gadmin', tenantId: 'globex', admin: true });
    await stack.s3.client.send(
      new PutObjectCommand({
        Bucket: stack.s3.bucket,
        Key: 'tenants/acme/shipping.md',
        Body: '# Shipping\n\nExpress shipping takes two business days. Standard shipping takes five business days.',
      }),
    );
    await stack.queue.idle();
  });
  afterAll(async () => {
    await api?.close();
    await stack?.stop();
    await db?.close();
    await fake?.close();
  });

  const call = async (method: string, path: string, who?: string, body?: unknown) => {
    const res = await fetch(`${api.server.url}${path}`, {
      method,
      headers: {
        ...(who ? { authorization: `Bearer ${tokens[who]}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return {
      status: res.status,
      type: res.headers.get('content-type'),
      body: (await res.json()) as Json,
    };
  };
  const expectError = (r: { status: number; body: Json }, status: number, code: string) => {
    expect(r.status).toBe(status);
    expect(Object.keys(r.body)).toEqual(['error']);
    expect(r.body.error).toMatchObject({ code, message: expect.any(String), retryable: false });
  };

  /** A question and its answer in a thread of `who`; returns the answer's ids. */
  const ask = async (who: string, question: string, threadId?: string) => {
    fake.setAnswer({ text: 'Express shipping takes two business days [1].' });
    const r = await call('POST', '/api/rag/answer', who, {
      query_text: question,
      ...(threadId ? { thread_id: threadId } : {}),
    });
    expect(r.status).toBe(200);
    return { threadId: r.body.thread_id as string, messageId: r.body.message_id as string };
  };

  it('refuses the seed admin routes without a token (401) and to non-admins (403)', async () => {
    for (const [method, path, body] of SEED_ROUTES) {
      expectError(await call(method, path, undefined, body), 401, 'authentication_required');
      expectError(await call(method, path, 'alice', body), 403, 'forbidden');
    }
    // Refused before the input is read: invalid input from a non-admin is still a 403.
    expectError(
      await call('POST', '/api/admin/lexybrain/configs', 'alice', { type: 'Bad Type' }),
      403,
      'forbidden',
    );
    expectError(
      await call('GET', '/api/admin/lexybrain/rag/feedback?rating=great', 'alice'),
      403,
      'forbidden',
    );
  });

  describe('threads', () => {
    it('shows message_count and last_message_at, most recent message first', async () => {
      const first = await ask('bob', 'How long does express shipping take?');
      const second = await ask('bob', 'How long does standard shipping take?');
      let list = await call('GET', '/api/threads', 'bob');
      expect(list.status).toBe(200);
      expect(list.body.threads.map((t: Json) => t.thread_id)).toEqual([
        second.threadId,
        first.threadId,
      ]);
      await ask('bob', 'And express shipping, again?', first.threadId);
      list = await call('GET', '/api/threads', 'bob');
      expect(() => listThreadsResponseSchema.parse(list.body)).not.toThrow();
      const [top, next] = list.body.threads as Json[];
      expect(top!.thread_id).toBe(first.threadId);
      expect(next!.thread_id).toBe(second.threadId);
      expect(top!.message_count).toBe(4);
      expect(next!.message_count).toBe(2);
      expect(Date.parse(top!.last_message_at)).toBeGreaterThan(Date.parse(next!.last_message_at));

      const view = await call('GET', `/api/threads/${first.threadId}`, 'bob');
      expect(() => threadResponseSchema.parse(view.body)).not.toThrow();
      expect(view.body).toMatchObject({
        thread_id: first.threadId,
        message_count: 4,
        last_message_at: top!.last_message_at,
      });
      const messages = view.body.messages as Json[];
      expect(messages).toHaveLength(4);
      expect(view.body.last_message_at).toBe(messages[3]!.created_at);
    });

    it('deletes softly: the thread, its messages and their feedback are gone from every read', async () => {
      const a = await ask('alice', 'How long does express shipping take?');
      expect(
        (
          await call('POST', `/api/messages/${a.messageId}/feedback`, 'alice', {
            rating: 'negative',
            feedback_text: 'deleted later',
          })
        ).status,
      ).toBe(200);
      const before = await call('GET', '/api/admin/lexybrain/rag/stats', 'carol');

      // Another user of the tenant cannot delete it, nor can an admin of another tenant.
      expectError(await call('DELETE', `/api/threads/${a.threadId}`, 'bob'), 404, 'not_found');
      expectError(await call('DELETE', `/api/threads/${a.threadId}`, 'gadmin'), 404, 'not_found');
      const del = await call('DELETE', `/api/threads/${a.threadId}`, 'alice');
      expect(del.status).toBe(200);
      expect(() => deleteThreadResponseSchema.parse(del.body)).not.toThrow();
      expect(del.body).toEqual({
        thread_id: a.threadId,
        deleted: true,
        deleted_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      });

      expectError(await call('GET', `/api/threads/${a.threadId}`, 'alice'), 404, 'not_found');
      expectError(await call('DELETE', `/api/threads/${a.threadId}`, 'alice'), 404, 'not_found');
      const list = await call('GET', '/api/threads?include_archived=true', 'alice');
      expect(JSON.stringify(list.body)).not.toContain(a.threadId);
      expectError(
        await call('POST', `/api/messages/${a.messageId}/feedback`, 'alice', {
          rating: 'positive',
        }),
        404,
        'not_found',
      );
      const review = await call('GET', '/api/admin/lexybrain/rag/feedback?limit=100', 'carol');
      expect(JSON.stringify(review.body)).not.toContain(a.messageId);
      const after = await call('GET', '/api/admin/lexybrain/rag/stats', 'carol');
      expect(after.body.total_threads).toBe(before.body.total_threads - 1);
      expect(after.body.total_messages).toBe(before.body.total_messages - 2);
      // The rows stay, stamped.
      const { rows } = await db.query<{ deleted_at: Date | null }>(
        'SELECT deleted_at FROM messages WHERE thread_id = $1',
        [a.threadId],
      );
      expect(rows).toHaveLength(2);
      expect(rows.every((r) => r.deleted_at !== null)).toBe(true);
    });
  });

  describe('feedback', () => {
    it('takes feedback_text (the comment wins when both are sent) and shows it in the review', async () => {
      const a = await ask('alice', 'How long does standard shipping take?');
      const r = await call('POST', `/api/messages/${a.messageId}/feedback`, 'alice', {
        rating: 'negative',
        feedback_text: 'Missing the weekend rule',
      });
      expect(r.status).toBe(200);
      expect(() => messageFeedbackResponseSchema.parse(r.body)).not.toThrow();
      expect(r.body).toEqual({
        message_id: a.messageId,
        rating: 'negative',
        comment: 'Missing the weekend rule',
        feedback_text: 'Missing the weekend rule',
      });
      let review = await call(
        'GET',
        '/api/admin/lexybrain/rag/feedback?rating=negative&limit=100',
        'carol',
      );
      expect(review.status).toBe(200);
      expect(() => lexyFeedbackResponseSchema.parse(review.body)).not.toThrow();
      const entry = (review.body.feedback as Json[]).find((f) => f.message_id === a.messageId);
      expect(entry).toEqual({
        message_id: a.messageId,
        thread_id: a.threadId,
        user_id: 'alice',
        rating: 'negative',
        feedback_text: 'Missing the weekend rule',
        question: 'How long does standard shipping take?',
        answer: 'Express shipping takes two business days [1].',
        capability: 'general',
        confidence: expect.stringMatching(/^(high|medium)$/),
        created_at: expect.any(String),
        updated_at: expect.any(String),
      });

      const both = await call('POST', `/api/messages/${a.messageId}/feedback`, 'alice', {
        rating: 'positive',
        comment: 'the comment',
        feedback_text: 'the feedback text',
      });
      expect(both.body).toMatchObject({ comment: 'the comment', feedback_text: 'the comment' });
      review = await call('GET', '/api/admin/lexybrain/rag/feedback?rating=positive', 'carol');
      const updated = (review.body.feedback as Json[]).find((f) => f.message_id === a.messageId);
      expect(updated?.feedback_text).toBe('the comment');
      // The project's own review shows the same stored comment.
      const own = await call('GET', '/api/admin/feedback?rating=positive', 'carol');
      expect((own.body.feedback as Json[]).find((f) => f.message_id === a.messageId)?.comment).toBe(
        'the comment',
      );
    });

    it('refuses bad feedback input with a 422', async () => {
      const a = await ask('alice', 'How long does express shipping take?');
      expectError(
        await call('POST', `/api/messages/${a.messageId}/feedback`, 'alice', {
          rating: 'positive',
          feedback_text: 'x'.repeat(2001),
        }),
        422,
        'validation_error',
      );
      expectError(
        await call('POST', `/api/messages/${a.messageId}/feedback`, 'alice', {
          rating: 'positive',
          feedback_text: 42,
        }),
        422,
        'validation_error',
      );
    });

    it('pages the review, keeps it to the tenant, and refuses bad queries', async () => {
      const page = await call('GET', '/api/admin/lexybrain/rag/feedback?limit=1', 'carol');
      expect(page.body.feedback).toHaveLength(1);
      expect(typeof page.body.next_cursor).toBe('string');
      const next = await call(
        'GET',
        `/api/admin/lexybrain/rag/feedback?limit=1&cursor=${page.body.next_cursor}`,
        'carol',
      );
      expect(next.status).toBe(200);
      expect(next.body.feedback[0]?.message_id).not.toBe(page.body.feedback[0].message_id);
      const other = await call('GET', '/api/admin/lexybrain/rag/feedback', 'gadmin');
      expect(other.body).toEqual({ feedback: [], next_cursor: null });
      expectError(
        await call('GET', '/api/admin/lexybrain/rag/feedback?rating=great', 'carol'),
        422,
        'validation_error',
      );
      expectError(
        await call('GET', '/api/admin/lexybrain/rag/feedback?cursor=forged', 'carol'),
        422,
        'validation_error',
      );
      for (const limit of ['0', '0x5', '1e1', '', '%205%20']) {
        expectError(
          await call('GET', `/api/admin/lexybrain/rag/feedback?limit=${limit}`, 'carol'),
          422,
          'validation_error',
        );
      }
    });
  });

  describe('stats', () => {
    it('reports threads, messages, active users, capabilities and quota use by plan', async () => {
      const r = await call('GET', '/api/admin/lexybrain/rag/stats', 'carol');
      expect(r.status).toBe(200);
      expect(r.type).toMatch(/application\/json/);
      expect(() => lexyStatsResponseSchema.parse(r.body)).not.toThrow();
      const live = await db.query<{ threads: string; messages: string; users: string }>(
        `SELECT (SELECT count(*) FROM threads WHERE tenant_id = 'acme' AND deleted_at IS NULL) AS threads,
                (SELECT count(*) FROM messages WHERE tenant_id = 'acme' AND deleted_at IS NULL) AS messages,
                (SELECT count(DISTINCT user_id) FROM messages
                  WHERE tenant_id = 'acme' AND role = 'user' AND deleted_at IS NULL) AS users`,
      );
      expect(r.body).toMatchObject({
        tenant_id: 'acme',
        total_threads: Number(live.rows[0]!.threads),
        total_messages: Number(live.rows[0]!.messages),
        active_users: Number(live.rows[0]!.users),
      });
      expect(r.body.total_threads).toBeGreaterThan(0);
      expect(r.body.capability_distribution.general).toBeGreaterThan(0);
      expect(r.body.answers.total).toBe(
        Object.values(r.body.capability_distribution as Record<string, number>).reduce(
          (a, b) => a + b,
          0,
        ),
      );
      const free = (r.body.quota_usage_by_plan as Json[]).find((p) => p.plan === 'free');
      expect(free).toMatchObject({
        users: 2,
        rag_messages: { used: expect.any(Number), limit_per_user: expect.any(Number) },
      });
      expect(free!.rag_messages.used).toBeGreaterThan(0);
    });

    it('is scoped to the token’s tenant and validates its query', async () => {
      const r = await call('GET', '/api/admin/lexybrain/rag/stats', 'gadmin');
      expect(r.body).toMatchObject({
        tenant_id: 'globex',
        total_threads: 0,
        total_messages: 0,
        active_users: 0,
        capability_distribution: {},
      });
      expectError(
        await call('GET', '/api/admin/lexybrain/rag/stats?window_days=0', 'carol'),
        422,
        'validation_error',
      );
      expectError(
        await call('GET', '/api/admin/lexybrain/rag/stats?tenant_id=globex', 'carol'),
        422,
        'validation_error',
      );
    });
  });

  describe('configs', () => {
    it('lists the defaults in the seed names, the system prompt as type global', async () => {
      const r = await call('GET', '/api/admin/lexybrain/configs', 'carol');
      expect(r.status).toBe(200);
      expect(() => lexyConfigsResponseSchema.parse(r.body)).not.toThrow();
      const configs = r.body.configs as Json[];
      const global = configs.find((c) => c.type === 'global');
      expect(global).toMatchObject({
        scope: 'default',
        is_active: true,
        version: 1,
        system_instructions: expect.stringContaining('answers questions using only the documents'),
        created_by: null,
      });
      expect(configs.some((c) => c.type === '_system')).toBe(false);
      expect(configs.find((c) => c.type === 'general')?.constraints).toEqual({
        top_k: 8,
        keywords: [],
      });
      // A capability's retrieval policy, the source types under the seed's `retrieval_scope`.
      const brief = configs.find((c) => c.type === 'market_brief' && c.scope === 'default');
      expect(brief?.constraints).toMatchObject({
        family: 'lexybrain',
        retrieval_scope: expect.arrayContaining(['keyword']),
        max_age_days: 90,
      });
      expect(brief?.constraints.allowed_source_types).toBeUndefined();
    });

    it('creates, activates and deactivates versions, and the answers use the active one', async () => {
      const created = await call('POST', '/api/admin/lexybrain/configs', 'carol', {
        name: 'ask_lexybrain_system_v2',
        type: 'global',
        system_instructions: 'You are LexyBrain. ZEBRA-MARKER. Cite sources.',
        // The seed's name and the source type it reads, both taken.
        constraints: { retrieval_scope: ['docs', 'keyword'], top_k: 6 },
      });
      expect(created.status).toBe(201);
      expect(() => lexyConfigSchema.parse(created.body)).not.toThrow();
      expect(created.body).toEqual({
        id: expect.any(String),
        name: 'ask_lexybrain_system_v2',
        type: 'global',
        system_instructions: 'You are LexyBrain. ZEBRA-MARKER. Cite sources.',
        constraints: { retrieval_scope: ['doc', 'keyword'], top_k: 6 },
        is_active: false,
        version: 2,
        scope: 'tenant',
        created_at: expect.any(String),
        created_by: 'carol',
      });
      // Stored as the project's system prompt profile, with allowed_source_types.
      const own = await call('GET', '/api/admin/prompts', 'carol');
      expect((own.body.prompts as Json[]).find((p) => p.id === created.body.id)).toMatchObject({
        profile: '_system',
        constraints: { allowed_source_types: ['doc', 'keyword'], top_k: 6 },
      });

      const question = { query_text: 'How long does express shipping take?', debug: true };
      fake.setAnswer({ text: 'Two business days [1].' });
      const beforeAnswer = await call('POST', '/api/rag/answer', 'carol', question);
      expect(beforeAnswer.body.debug.prompt).not.toContain('ZEBRA-MARKER');

      const activated = await call(
        'POST',
        `/api/admin/lexybrain/configs/${created.body.id}/activate`,
        'carol',
      );
      expect(activated.status).toBe(200);
      expect(activated.body).toMatchObject({ id: created.body.id, is_active: true });
      let list = (await call('GET', '/api/admin/lexybrain/configs', 'carol')).body
        .configs as Json[];
      expect(list.filter((c) => c.type === 'global' && c.is_active).map((c) => c.id)).toEqual([
        created.body.id,
      ]);
      fake.setAnswer({ text: 'Two business days [1].' });
      const during = await call('POST', '/api/rag/answer', 'carol', question);
      expect(during.body.debug.prompt).toContain('ZEBRA-MARKER');
      // Another tenant is not affected.
      const globex = (await call('GET', '/api/admin/lexybrain/configs', 'gadmin')).body
        .configs as Json[];
      expect(globex.some((c) => c.id === created.body.id)).toBe(false);
      expect(globex.find((c) => c.type === 'global' && c.is_active)?.scope).toBe('default');

      const deactivated = await call(
        'POST',
        `/api/admin/lexybrain/configs/${created.body.id}/deactivate`,
        'carol',
      );
      expect(deactivated.status).toBe(200);
      expect(deactivated.body).toMatchObject({ id: created.body.id, is_active: false });
      list = (await call('GET', '/api/admin/lexybrain/configs', 'carol')).body.configs as Json[];
      expect(list.find((c) => c.type === 'global' && c.is_active)?.scope).toBe('default');
      fake.setAnswer({ text: 'Two business days [1].' });
      const afterAnswer = await call('POST', '/api/rag/answer', 'carol', question);
      expect(afterAnswer.body.debug.prompt).not.toContain('ZEBRA-MARKER');
    });

    it('creates a capability version active at once with is_active, keeping what it does not restate', async () => {
      const r = await call('POST', '/api/admin/lexybrain/configs', 'carol', {
        name: 'ask_lexybrain_market_brief_v1',
        type: 'market_brief',
        system_instructions: 'Analyze the provided market data.',
        constraints: { retrieval_scope: ['keywords', 'trends'] },
        is_active: true,
      });
      expect(r.status).toBe(201);
      // The next version after the built-in market_brief (version 1): the seed's scope as the
      // source types it reads, the rest of the capability's definition kept.
      expect(r.body).toMatchObject({
        type: 'market_brief',
        is_active: true,
        version: 2,
        scope: 'tenant',
      });
      expect(r.body.constraints).toEqual(MARKET_BRIEF_CONSTRAINTS);
    });

    it('refuses what it cannot do with the error model', async () => {
      const configs = (await call('GET', '/api/admin/lexybrain/configs', 'carol')).body
        .configs as Json[];
      const aDefault = configs.find((c) => c.scope === 'default' && c.type === 'general')!;
      expectError(
        await call('POST', `/api/admin/lexybrain/configs/${aDefault.id}/deactivate`, 'carol'),
        409,
        'default_prompt',
      );
      const own = configs.find((c) => c.scope === 'tenant')!;
      // Another tenant's admin: not found, on both actions.
      expectError(
        await call('POST', `/api/admin/lexybrain/configs/${own.id}/activate`, 'gadmin'),
        404,
        'not_found',
      );
      expectError(
        await call('POST', `/api/admin/lexybrain/configs/${own.id}/deactivate`, 'gadmin'),
        404,
        'not_found',
      );
      expectError(
        await call('POST', '/api/admin/lexybrain/configs/not-a-uuid/activate', 'carol'),
        404,
        'not_found',
      );
      const valid = {
        name: 'v',
        type: 'general_chat',
        system_instructions: 'Answer.',
      };
      for (const bad of [
        { ...valid, constraints: { temperature: 0.7 } },
        { ...valid, constraints: { retrieval_scope: ['docs', 'faqs'] } },
        { ...valid, constraints: { retrieval_scope: ['made_up_type'] } },
        { ...valid, type: 'Not A Type' },
        { ...valid, type: '_system' },
        { ...valid, system_instructions: '   ' },
        { ...valid, is_active: 'yes' },
        { ...valid, extra: 1 },
        { name: 'v', type: 'general_chat' },
      ]) {
        expectError(
          await call('POST', '/api/admin/lexybrain/configs', 'carol', bad),
          422,
          'validation_error',
        );
      }
    });
  });
});
