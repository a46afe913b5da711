/**
 * Seed 002's test harness and source-type policies, over HTTP on the local server, on PGlite and
 * on PostgreSQL + pgvector:
 *
 * - POST /api/admin/harness returns the retrieved chunks with their scores, the context blocks
 *   with their sources, the evidence with its citations and the prompt preview, without calling
 *   the LLM; it is the preparation POST /answer generates from (the same prompt reaches the LLM);
 *   tenant admins only, scoped to the token's tenant.
 * - GET / POST /api/admin/source-policy: the tenant's policy, set by its admins, applied by
 *   retrieval for every reader (search, answer, harness); permissive narrows, strict refuses.
 * - Row-level security lets only a tenant admin's scope write the policy.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { createOpenAiCompatibleLlm } from '../../lambdas/adapters/llm/openai-compatible';
import type { Database } from '../../lambdas/adapters/postgres/database';
import { runInDbScope } from '../../lambdas/adapters/postgres/db-scope';
import { errorCode } from '../../lambdas/core/errors';
import { parseLimitsConfig } from '../../lambdas/core/limits/config';
import { startLocalApi, type LocalApi } from '../../local/api';
import { startLocalStack, type LocalStack } from '../../local/stack';
import { ENGINES, openTestDatabase } from '../support/databases';
import { startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai';
import { createHashEmbedder } from '../support/hash-embedder';

process.env.POWERTOOLS_METRICS_DISABLED = 'true';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

// The hash embedder's scale: a relevant document among a few lifts the top-5 mean above 0.12.
const CALIBRATION = { 'test/hash-512': { cosineWeight: 0.5, high: 0.3, medium: 0.12 } };

const QUESTION = 'How many days do refunds take to reach the customer account?';

describe.each(ENGINES)('harness and source-type policies on %s', (engine) => {
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
    tokens.admin = api.issuer.issueToken({ sub: 'carol', tenantId: 'acme', admin: true });
    tokens.globexAdmin = api.issuer.issueToken({ sub: 'gina', tenantId: 'globex', admin: true });
    const put = (key: string, body: string) =>
      stack.s3.client.send(new PutObjectCommand({ Bucket: stack.s3.bucket, Key: key, Body: body }));
    const typed = async (key: string, sourceType: string, title: string, body: string) => {
      await put(
        `${key}.metadata.json`,
        JSON.stringify({ metadataAttributes: { source_type: sourceType, title } }),
      );
      await put(key, body);
    };
    await typed(
      'tenants/acme/refunds-faq.md',
      'faq',
      'Refunds FAQ',
      '# Refunds\n\nRefunds take fourteen days to reach the customer account after approval.',
    );
    await typed(
      'tenants/acme/refunds-policy.md',
      'policy',
      'Refund policy',
      '# Refund policy\n\nRefunds reach the customer account within thirty days, as the policy states.',
    );
    await typed(
      'tenants/acme/shipping.md',
      'doc',
      'Shipping',
      '# Shipping\n\nExpress shipping takes two business days. Standard shipping takes five days.',
    );
    await typed(
      'tenants/globex/refunds.md',
      'faq',
      'Globex refunds',
      '# Globex refunds\n\nGlobex refunds take ninety days to reach the customer account.',
    );
    await stack.queue.idle();
  });
  afterAll(async () => {
    await api?.close();
    await stack?.stop();
    await db?.close();
    await fake?.close();
  });
  beforeEach(() => fake.reset());

  const call = async (method: string, path: string, who: string | null, body?: unknown) => {
    const res = await fetch(`${api.server.url}${path}`, {
      method,
      headers: {
        ...(who ? { authorization: `Bearer ${tokens[who]}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Json };
  };
  const harness = (body: Json, who = 'admin') => call('POST', '/api/admin/harness', who, body);
  const setPolicy = (body: Json, who = 'admin') =>
    call('POST', '/api/admin/source-policy', who, body);
  const expectError = (res: { status: number; body: Json }, status: number, code: string) => {
    expect(res.status).toBe(status);
    expect(res.body).toEqual({
      error: expect.objectContaining({ code, message: expect.any(String), retryable: false }),
    });
  };

  describe('POST /api/admin/harness', () => {
    it('returns the chunks with scores, the context with sources, the evidence and the prompt, without calling the LLM', async () => {
      const res = await harness({ query_text: QUESTION });
      expect(res.status).toBe(200);
      const b = res.body;
      expect(b).toMatchObject({
        tenant_id: 'acme',
        query_text: QUESTION,
        standalone_query: QUESTION,
        profile: 'general',
        retrieval_failed: false,
        source_types: { mode: 'permissive', allowed: null, effective: null, dropped: [] },
      });
      expect(fake.requests).toHaveLength(0);

      // Chunks: ranked 1..n, scores in [0, 1], every field the seed's output names.
      expect(b.chunks.length).toBeGreaterThanOrEqual(3);
      b.chunks.forEach((c: Json, i: number) => {
        expect(c.rank).toBe(i + 1);
        expect(c.score).toBeGreaterThanOrEqual(0);
        expect(c.score).toBeLessThanOrEqual(1);
        expect(typeof c.fused_score).toBe('number');
        expect(c.source_uri).toMatch(/^s3:\/\/[^/]+\/tenants\/acme\//);
        expect(c.text.length).toBeGreaterThan(0);
      });
      expect(b.chunks.map((c: Json) => c.fused_score)).toEqual(
        [...b.chunks.map((c: Json) => c.fused_score)].sort((x: number, y: number) => y - x),
      );
      expect(b.chunks[0].source_title).toMatch(/^Refund/);

      // Context blocks: one per source, numbered, their passages made of retrieved chunks.
      const chunkIds = new Set(b.chunks.map((c: Json) => c.chunk_id));
      expect(b.context_blocks.map((x: Json) => x.index)).toEqual(
        b.context_blocks.map((_: Json, i: number) => i + 1),
      );
      expect(new Set(b.context_blocks.map((x: Json) => x.source_id)).size).toBe(
        b.context_blocks.length,
      );
      for (const block of b.context_blocks) {
        expect(block).toMatchObject({
          source_type: expect.stringMatching(/^(faq|policy|doc)$/),
          source_uri: expect.stringContaining('tenants/acme/'),
          tokens: expect.any(Number),
        });
        for (const p of block.passages)
          for (const id of p.chunk_ids) expect(chunkIds.has(id)).toBe(true);
      }

      // Evidence: each block as the citation an answer carries, by the marker the prompt uses.
      expect(b.evidence.map((e: Json) => e.marker)).toEqual(
        b.context_blocks.map((x: Json) => `[${x.index}]`),
      );
      b.evidence.forEach((e: Json, i: number) => {
        const block = b.context_blocks[i];
        expect(e.citation).toMatchObject({
          source_id: block.source_id,
          source_type: block.source_type,
          source_title: block.source_title,
          source_uri: block.source_uri,
          relevance_score: block.score,
          sentences: [],
        });
        expect(e.chunk_ids).toEqual(block.passages.flatMap((p: Json) => p.chunk_ids));
        expect(b.prompt.system).toContain(
          `<document index="${block.index}" title="${block.source_title}" source="${block.source_uri}">`,
        );
      });

      // The gate and what would happen next.
      expect(b.confidence).toEqual({
        level: expect.stringMatching(/^(high|medium|low)$/),
        avg_relevance: expect.any(Number),
        evidence_chunks: expect.any(Number),
        // Every name of the question is in the sources.
        unmatched_names: [],
      });
      expect(b.next_step).toBe(b.confidence.level === 'low' ? 'insufficient_context' : 'generate');
      expect(b.prompt.messages).toEqual([{ role: 'user', content: QUESTION }]);
      expect(b.prompt.rendered).toContain(b.prompt.system);
      expect(b.prompt.rendered.endsWith(`USER: ${QUESTION}`)).toBe(true);
    });

    it('shows the prompt POST /answer then sends to the LLM: one preparation, not a copy', async () => {
      const prepared = await harness({ query_text: QUESTION });
      expect(prepared.body.next_step).toBe('generate');
      const answered = await call('POST', '/api/rag/answer', 'admin', {
        query_text: QUESTION,
        debug: true,
      });
      expect(answered.status).toBe(200);
      expect(fake.requests).toHaveLength(1);
      const sent = fake.requests[0]!.body as { messages: { role: string; content: string }[] };
      expect(sent.messages[0]).toEqual({ role: 'system', content: prepared.body.prompt.system });
      expect(sent.messages.slice(1)).toEqual(prepared.body.prompt.messages);
      expect(answered.body.debug.prompt).toBe(prepared.body.prompt.rendered);
      expect(answered.body.debug.chunks.map((c: Json) => c.chunkId)).toEqual(
        prepared.body.chunks.map((c: Json) => c.chunk_id),
      );
    });

    it('reads the caller tenant only, from the token', async () => {
      const globex = await harness({ query_text: QUESTION }, 'globexAdmin');
      expect(globex.status).toBe(200);
      expect(globex.body.tenant_id).toBe('globex');
      expect(globex.body.chunks.length).toBeGreaterThan(0);
      for (const c of globex.body.chunks) expect(c.source_uri).toContain('/tenants/globex/');
      const acme = await harness({ query_text: 'Globex refunds ninety days' });
      for (const c of acme.body.chunks) expect(c.source_uri).not.toContain('/tenants/globex/');
      // A filter naming another tenant is refused, as on every retrieval route.
      expectError(
        await harness({ query_text: QUESTION, filters: { org_id: 'globex' } }),
        403,
        'forbidden',
      );
    });

    it('is for tenant admins: 401 without a token, 403 for a member, 422 for bad input', async () => {
      expectError(await harness({ query_text: QUESTION }, 'alice'), 403, 'forbidden');
      const anonymous = await call('POST', '/api/admin/harness', null, { query_text: QUESTION });
      expect(anonymous.status).toBe(401);
      expect(anonymous.body.error.code).toBe('authentication_required');
      expectError(await harness({ query_text: '' }), 422, 'validation_error');
      expectError(await harness({}), 422, 'validation_error');
      expectError(await harness({ query_text: QUESTION, stream: true }), 422, 'validation_error');
      expectError(await harness({ query_text: QUESTION, top_k: 0 }), 422, 'validation_error');
      expectError(
        await harness({ query_text: QUESTION, profile: 'nope' }),
        422,
        'validation_error',
      );
      expect(fake.requests).toHaveLength(0);
    });

    it('says a greeting would not be retrieved for', async () => {
      const res = await harness({ query_text: 'hello' });
      expect(res.status).toBe(200);
      expect(res.body.next_step).toBe('conversational');
    });
  });

  describe('source-type policies as tenant settings', () => {
    afterEach(async () => {
      expect((await setPolicy({ mode: 'permissive' })).status).toBe(200);
    });

    const searchTypes = async (who: string, filters: Json = {}) => {
      const res = await call('POST', '/api/rag/search', who, { query_text: QUESTION, filters });
      expect(res.status).toBe(200);
      return [...new Set(res.body.results.map((r: Json) => r.source_type))].sort();
    };

    it('defaults to permissive with every type; admins read and set it, members cannot', async () => {
      const fresh = await call('GET', '/api/admin/source-policy', 'globexAdmin');
      expect(fresh.status).toBe(200);
      expect(fresh.body).toEqual({
        tenant_id: 'globex',
        mode: 'permissive',
        allowed_source_types: null,
        updated_at: null,
        updated_by: null,
      });
      expectError(await call('GET', '/api/admin/source-policy', 'alice'), 403, 'forbidden');
      expectError(
        await setPolicy({ mode: 'strict', allowed_source_types: ['faq'] }, 'alice'),
        403,
        'forbidden',
      );
      const set = await setPolicy({
        mode: 'strict',
        allowed_source_types: ['faq', 'policy', 'faq'],
      });
      expect(set.status).toBe(200);
      expect(set.body).toEqual({
        tenant_id: 'acme',
        mode: 'strict',
        allowed_source_types: ['faq', 'policy'],
        updated_at: expect.any(String),
        updated_by: 'carol',
      });
      expect((await call('GET', '/api/admin/source-policy', 'admin')).body).toEqual(set.body);
      // Another tenant's policy is untouched.
      expect((await call('GET', '/api/admin/source-policy', 'globexAdmin')).body.mode).toBe(
        'permissive',
      );
    });

    it('refuses a policy it cannot apply (422)', async () => {
      expectError(await setPolicy({ mode: 'strict' }), 422, 'validation_error');
      expectError(
        await setPolicy({ mode: 'strict', allowed_source_types: [] }),
        422,
        'validation_error',
      );
      expectError(await setPolicy({ mode: 'lenient' }), 422, 'validation_error');
      expectError(
        await setPolicy({ mode: 'permissive', allowed_source_types: ['Not A Type'] }),
        422,
        'validation_error',
      );
      expectError(
        await setPolicy({ mode: 'permissive', tenant_id: 'globex' }),
        422,
        'validation_error',
      );
    });

    it('strict: every reader retrieves the allowed types only, and a request for another is a 403', async () => {
      expect(await searchTypes('alice')).toEqual(['doc', 'faq', 'policy']);
      await setPolicy({ mode: 'strict', allowed_source_types: ['faq'] });

      expect(await searchTypes('alice')).toEqual(['faq']);
      const answer = await call('POST', '/api/rag/answer', 'alice', { query_text: QUESTION });
      expect(answer.status).toBe(200);
      expect(answer.body.citations.length).toBeGreaterThan(0);
      for (const c of answer.body.citations) expect(c.source_type).toBe('faq');
      const prepared = await harness({ query_text: QUESTION });
      expect(prepared.body.source_types).toEqual({
        mode: 'strict',
        allowed: ['faq'],
        effective: ['faq'],
        dropped: [],
      });
      expect(prepared.body.chunks.map((c: Json) => c.source_type)).toEqual(
        prepared.body.chunks.map(() => 'faq'),
      );

      const refused = await call('POST', '/api/rag/search', 'alice', {
        query_text: QUESTION,
        filters: { source_type: ['faq', 'doc'] },
      });
      expectError(refused, 403, 'forbidden');
      expect(refused.body.error.message).toContain('"doc"');
      // Refused before anything is written: no thread, no question.
      const threads = async () =>
        (await call('GET', '/api/threads?limit=100', 'alice')).body.threads.length as number;
      const before = await threads();
      expectError(
        await call('POST', '/api/rag/answer', 'alice', {
          query_text: QUESTION,
          filters: { source_type: 'policy' },
        }),
        403,
        'forbidden',
      );
      expect(await threads()).toBe(before);
      expectError(
        await harness({ query_text: QUESTION, filters: { source_type: 'doc' } }),
        403,
        'forbidden',
      );
      // Globex, without a policy, still retrieves what it has.
      expect(await searchTypes('globexAdmin')).toEqual(['faq']);
    });

    it('permissive with a list: the allowed types only, other requested types dropped, not refused', async () => {
      await setPolicy({ mode: 'permissive', allowed_source_types: ['faq', 'doc'] });
      expect(await searchTypes('alice')).toEqual(['doc', 'faq']);
      expect(await searchTypes('alice', { source_type: ['policy', 'faq'] })).toEqual(['faq']);
      expect(await searchTypes('alice', { source_type: 'policy' })).toEqual([]);
      const prepared = await harness({
        query_text: QUESTION,
        filters: { source_type: ['policy', 'faq'] },
      });
      expect(prepared.status).toBe(200);
      expect(prepared.body.source_types).toEqual({
        mode: 'permissive',
        allowed: ['doc', 'faq'],
        effective: ['doc', 'faq'],
        dropped: ['policy'],
      });
    });

    it("a profile's own types narrow within the policy and are never refused", async () => {
      const created = await call('POST', '/api/admin/prompts', 'admin', {
        profile: 'faqs',
        name: 'FAQ and docs',
        instructions: 'Answer from the FAQ.',
        constraints: { allowed_source_types: ['faq', 'doc'] },
        activate: true,
      });
      expect(created.status).toBe(201);
      await setPolicy({ mode: 'strict', allowed_source_types: ['faq', 'policy'] });
      const prepared = await harness({ query_text: QUESTION, profile: 'faqs' });
      expect(prepared.status).toBe(200);
      expect(prepared.body.source_types.effective).toEqual(['faq']);
      for (const c of prepared.body.chunks) expect(c.source_type).toBe('faq');
    });

    it('row-level security: only a tenant admin scope writes the policy, and only its own tenant', async () => {
      const write = (
        scope: { tenantId: string; userId: string; allUsers: boolean },
        tenant: string,
      ) =>
        runInDbScope(scope, () =>
          db.query(
            `INSERT INTO tenant_policies (tenant_id, source_type_mode, allowed_source_types)
             VALUES ($1, 'strict', ARRAY['faq'])
             ON CONFLICT (tenant_id) DO UPDATE
                SET source_type_mode = 'strict', allowed_source_types = ARRAY['faq']`,
            [tenant],
          ),
        ).then(
          () => 'written',
          (err: unknown) => errorCode(err),
        );
      expect(await write({ tenantId: 'acme', userId: 'alice', allUsers: false }, 'acme')).toBe(
        '42501',
      );
      expect(await write({ tenantId: 'acme', userId: 'carol', allUsers: true }, 'globex')).toBe(
        '42501',
      );
      expect(await write({ tenantId: 'acme', userId: 'carol', allUsers: true }, 'acme')).toBe(
        'written',
      );
      // Every reader of the tenant reads it (search applies it for everyone).
      const read = await runInDbScope({ tenantId: 'acme', userId: 'alice', allUsers: false }, () =>
        db.query<{ source_type_mode: string }>('SELECT source_type_mode FROM tenant_policies'),
      );
      expect(read.rows).toEqual([{ source_type_mode: 'strict' }]);
      // The database refuses a strict policy without types, whoever writes it.
      const empty = await db
        .query(`UPDATE tenant_policies SET allowed_source_types = NULL WHERE tenant_id = 'acme'`)
        .then(
          () => 'written',
          (err: unknown) => errorCode(err),
        );
      expect(empty).toBe('23514');
    });
  });
});
