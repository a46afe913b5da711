/**
 * Seed 000's contract, POST /api/lexybrain/rag, over HTTP through the local server on both
 * databases: the seed's example request as written, every request field with its validation
 * and default, every response field, capability detection and the capabilities' retrieval
 * policies (kept by a tenant's own versions of them), and each status and error code the seed names (422, 401, 403, 429, 500, 503), with
 * documents indexed through the S3 emulator and an OpenAI-compatible LLM served by a local fake.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { createOpenAiCompatibleLlm } from '../../lambdas/adapters/llm/openai-compatible';
import { createPromptRepository } from '../../lambdas/adapters/postgres/conversation-repository';
import type { Database } from '../../lambdas/adapters/postgres/database';
import { createTokenCounter } from '../../lambdas/adapters/tokenizer/gpt-token-counter';
import { createAnswering } from '../../lambdas/core/answer/answer';
import type { LlmProvider } from '../../lambdas/core/answer/llm';
import type { SearchRequest } from '../../lambdas/core/retrieval/search';
import { parseLimitsConfig } from '../../lambdas/core/limits/config';
import { lexybrainRagResponseSchema } from '../../lambdas/rag-answer/lexybrain-schema';
import { startLocalApi, type LocalApi } from '../../local/api';
import { startLocalStack, type LocalStack } from '../../local/stack';
import { ENGINES, openTestDatabase } from '../support/databases';
import { startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai';
import { createHashEmbedder } from '../support/hash-embedder';
import { MARKET_BRIEF_CONSTRAINTS } from '../support/lexybrain';

process.env.POWERTOOLS_METRICS_DISABLED = 'true';

const ROUTE = '/api/lexybrain/rag';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
// Any retrieved passage is enough support for an answer with the hash embedder.
const CALIBRATION = { 'test/hash-512': { cosineWeight: 0.5, high: 0.3, medium: 0.01 } };

/** Appendix A of the seed, verbatim. */
const SEED_EXAMPLE = {
  threadId: null,
  message: 'What are the top trending keywords in the wedding niche on Etsy right now?',
  capability: 'market_brief',
  context: { marketplaces: ['etsy'] },
  options: { maxTokens: 1024, temperature: 0.7 },
  meta: { client: 'web', version: '1.0' },
};

interface RagBody {
  threadId: string;
  messageId: string;
  answer: string;
  capability: string;
  sources: { id: string; type: string; label: string; score: number }[];
  references: { keywords: string[]; listings: string[]; alerts: string[]; docs: string[] };
  model: {
    id: string;
    usage: { inputTokens: number; outputTokens: number } | null;
    latencyMs: number;
  };
  flags: { usedRag: boolean; fallbackToGeneric: boolean; insufficientContext: boolean };
  error?: { code: string; message: string; retryable: boolean };
}

/** Documents of the tenant `shop` (and one of `other`), with their sidecar attributes. */
const DOCS: { key: string; text: string; attributes: Record<string, string> }[] = [
  {
    key: 'tenants/shop/keywords/vintage-wedding-rings.md',
    text: 'Vintage wedding rings: a trending keyword in the wedding niche on Etsy. Demand index 87, competition 45, momentum up 12 percent.',
    attributes: { title: 'vintage wedding rings', source_type: 'keyword', market: 'etsy' },
  },
  {
    key: 'tenants/shop/keywords/boho-wedding-dress.md',
    text: 'Boho wedding dress: a trending keyword in the wedding niche on Amazon. Demand index 91, competition 62.',
    attributes: { title: 'boho wedding dress', source_type: 'keyword', market: 'amazon' },
  },
  {
    key: 'tenants/shop/trends/wedding-season.md',
    text: 'Wedding niche trend on Etsy: trending wedding keywords grow every spring, top keywords peak in May.',
    attributes: { title: 'wedding season', source_type: 'trend', market: 'etsy' },
  },
  {
    key: 'tenants/shop/listings/bob-rings.md',
    text: 'Competitor listing: a vintage wedding rings shop listing with 500 sales, priced at 120 dollars.',
    attributes: { title: 'bob rings listing', source_type: 'listing', owner: 'bob' },
  },
  {
    key: 'tenants/shop/listings/alice-bracelets.md',
    text: 'Silver bracelets listing with 80 sales.',
    attributes: { title: 'alice bracelets listing', source_type: 'listing', owner: 'alice' },
  },
  {
    key: 'tenants/shop/alerts/trademark.md',
    text: 'Alert: trademark risk on the keyword boho. The alert fired because a trademark was registered for boho.',
    attributes: { title: 'boho trademark alert', source_type: 'alert' },
  },
  {
    key: 'tenants/shop/help/descriptions.md',
    text: 'Getting started: how to write a product description that sells, step by step.',
    attributes: { title: 'writing descriptions', source_type: 'doc' },
  },
  {
    key: 'tenants/other/keywords/secret.md',
    text: 'Vintage wedding rings: a trending keyword in the wedding niche on Etsy, secret data of another tenant.',
    attributes: { title: 'secret keyword', source_type: 'keyword', market: 'etsy' },
  },
  {
    key: 'tenants/studio/help/descriptions.md',
    text: 'How to write a product description that sells, and how shipping times are shown.',
    attributes: { title: 'writing descriptions', source_type: 'doc' },
  },
  {
    key: 'tenants/outdoor/keywords/ultralight-tents.md',
    text: 'Ultralight tents: a trending keyword in the outdoor gear niche. Demand index 74, competition 30.',
    attributes: { title: 'ultralight tents', source_type: 'keyword' },
  },
  {
    key: 'tenants/outdoor/help/packing.md',
    text: 'How to pack a backpack for a weekend hike: heavy items close to the back.',
    attributes: { title: 'packing a backpack', source_type: 'doc' },
  },
  {
    key: 'tenants/capped/help/descriptions.md',
    text: 'How to write a product description that sells, step by step.',
    attributes: { title: 'writing descriptions', source_type: 'doc' },
  },
];

describe.each(ENGINES)('POST /api/lexybrain/rag on %s', (engine) => {
  let db: Database;
  let stack: LocalStack;
  let api: LocalApi;
  let disabled: LocalApi;
  let broken: LocalApi;
  let recording: LocalApi;
  /** What the recording API's answers asked of retrieval. */
  const searched: SearchRequest[] = [];
  let fake: FakeOpenAi;
  const tokens: Record<string, string> = {};
  /** Document ids by the last part of their key. */
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    db = await openTestDatabase(engine);
    fake = await startFakeOpenAi();
    stack = await startLocalStack({
      db,
      embedder: createHashEmbedder(),
      llm: createOpenAiCompatibleLlm({ baseUrl: fake.url, model: 'test-model', maxRetries: 0 }),
      logLevel: 'SILENT',
      answer: { calibrationByModel: CALIBRATION },
      limits: parseLimitsConfig({
        plans: {
          free: { requestsPerMinute: 100_000 },
          pro: { requestsPerMinute: 100_000 },
          admin: { requestsPerMinute: 100_000 },
          'one-answer': { answersPerMonth: 1, searchesPerMonth: 10, requestsPerMinute: 100_000 },
          'two-per-minute': { answersPerMonth: null, searchesPerMonth: null, requestsPerMinute: 2 },
        },
        // About ten input tokens at the unknown-model price: the first answer reaches it.
        costCaps: { tenants: { capped: 0.00001 } },
      }),
    });
    api = await startLocalApi(stack);
    disabled = await startLocalApi(stack, { lexybrainRagEnabled: false });
    // The same pipeline with an LLM port that fails in a way it does not degrade around.
    const failing: LlmProvider = {
      modelId: 'broken/model',
      generate: () => Promise.reject(new Error('unexpected provider reply')),
      stream: () => ({
        [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(new Error('unexpected')) }),
      }),
    };
    broken = await startLocalApi(stack, {
      answering: createAnswering({
        search: stack.search,
        embedder: stack.embedder,
        tokens: createTokenCounter(),
        conversations: stack.conversations,
        prompts: createPromptRepository(stack.db),
        llm: failing,
        settings: { calibrationByModel: CALIBRATION },
      }),
    });
    // The same pipeline, recording each retrieval request it makes.
    recording = await startLocalApi(stack, {
      answering: createAnswering({
        search: {
          ...stack.search,
          searchWithEmbedding: (who, request, embedding) => {
            searched.push(request);
            return stack.search.searchWithEmbedding(who, request, embedding);
          },
        },
        embedder: stack.embedder,
        tokens: createTokenCounter(),
        conversations: stack.conversations,
        prompts: createPromptRepository(stack.db),
        llm: createOpenAiCompatibleLlm({ baseUrl: fake.url, model: 'test-model', maxRetries: 0 }),
        settings: { calibrationByModel: CALIBRATION },
      }),
    });
    const issue = (sub: string, tenantId: string, extra: { admin?: boolean; plan?: string } = {}) =>
      api.issuer.issueToken({ sub, tenantId, ...extra });
    tokens.alice = issue('alice', 'shop');
    tokens.bob = issue('bob', 'shop');
    tokens.carol = issue('carol', 'shop');
    tokens.admin = issue('dora', 'shop', { admin: true });
    tokens.oneAnswer = issue('olga', 'shop', { plan: 'one-answer' });
    tokens.twoPerMinute = issue('tom', 'shop', { plan: 'two-per-minute' });
    tokens.capped = issue('cap', 'capped');
    tokens.studio = issue('sam', 'studio');
    tokens.studioAdmin = issue('sara', 'studio', { admin: true });
    tokens.disabled = disabled.issuer.issueToken({ sub: 'alice', tenantId: 'shop' });
    tokens.broken = broken.issuer.issueToken({ sub: 'alice', tenantId: 'shop' });
    tokens.recording = recording.issuer.issueToken({ sub: 'alice', tenantId: 'shop' });

    for (const doc of DOCS) {
      const put = (Key: string, Body: string) =>
        stack.s3.client.send(new PutObjectCommand({ Bucket: stack.s3.bucket, Key, Body }));
      await put(`${doc.key}.metadata.json`, JSON.stringify({ metadataAttributes: doc.attributes }));
      await put(doc.key, doc.text);
    }
    await stack.queue.idle();
    for (const tenantId of ['shop', 'other']) {
      const rows = await db.query<{ id: string; source_uri: string; status: string }>(
        'SELECT id, source_uri, status FROM documents WHERE tenant_id = $1',
        [tenantId],
      );
      for (const r of rows.rows) {
        expect(r.status).toBe('indexed');
        ids[r.source_uri.replace(/^.*\//, '').replace(/\.md$/, '')] = r.id;
      }
    }
  });
  afterAll(async () => {
    await recording?.close();
    await broken?.close();
    await disabled?.close();
    await api?.close();
    await stack?.stop();
    await fake?.close();
    await db?.close();
  });
  beforeEach(() => fake.reset());

  const call = async (
    body: unknown,
    token: string | null = tokens.alice!,
    server: LocalApi = api,
  ): Promise<{ status: number; headers: Headers; body: RagBody }> => {
    const res = await fetch(`${server.server.url}${ROUTE}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as RagBody };
  };
  /** The system prompt and messages of the last LLM call. */
  const lastLlmCall = () => {
    const request = fake.requests.at(-1)?.body as {
      messages: { role: string; content: string }[];
      max_tokens: number;
      temperature: number;
    };
    return request;
  };
  const expectError = (
    res: { status: number; body: RagBody },
    status: number,
    code: string,
    retryable = false,
  ) => {
    expect(res.status).toBe(status);
    // The seed's error model; `details` (optional) says more, e.g. which field.
    expect(res.body).toEqual({
      error: expect.objectContaining({ code, message: expect.any(String), retryable }),
    });
    expect(
      Object.keys(res.body.error!).every((k) =>
        ['code', 'message', 'retryable', 'details'].includes(k),
      ),
    ).toBe(true);
  };

  it("answers the seed's example request with every field of its response", async () => {
    const res = await call(SEED_EXAMPLE);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const b = res.body;
    expect(Object.keys(b).sort()).toEqual(
      [
        'answer',
        'capability',
        'flags',
        'messageId',
        'model',
        'references',
        'sources',
        'threadId',
      ].sort(),
    );
    // The response schema the OpenAPI document publishes accepts it.
    expect(lexybrainRagResponseSchema.safeParse(b).error).toBeUndefined();
    expect(b.threadId).toMatch(UUID);
    expect(b.messageId).toMatch(UUID);
    expect(b.answer).toBe('Local models answer through the same port.');
    expect(b.capability).toBe('market_brief');
    // market_brief retrieves keywords and trends, in the marketplace asked for, in the caller's tenant.
    expect(b.sources.map((s) => s.id).sort()).toEqual(
      [ids['vintage-wedding-rings'], ids['wedding-season']].sort(),
    );
    for (const s of b.sources) {
      expect(Object.keys(s).sort()).toEqual(['id', 'label', 'score', 'type']);
      expect(s.type).toBe('keyword');
      expect(s.score).toBeGreaterThanOrEqual(0);
      expect(s.score).toBeLessThanOrEqual(1);
    }
    expect(b.sources.find((s) => s.id === ids['vintage-wedding-rings'])?.label).toBe(
      'vintage wedding rings',
    );
    expect(b.references).toEqual({
      keywords: b.sources.map((s) => s.id),
      listings: [],
      alerts: [],
      docs: [],
    });
    expect(b.model.id).toBe('openai/test-model');
    expect(b.model.usage).toEqual({
      inputTokens: expect.any(Number),
      outputTokens: expect.any(Number),
    });
    expect(b.model.usage!.inputTokens).toBeGreaterThan(0);
    expect(b.model.latencyMs).toBeGreaterThanOrEqual(0);
    expect(b.flags).toEqual({
      usedRag: true,
      fallbackToGeneric: false,
      insufficientContext: false,
    });
    const llm = lastLlmCall();
    expect(llm.max_tokens).toBe(1024);
    expect(llm.temperature).toBe(0.7);
    expect(llm.messages[0]?.content).toContain('Analyze the provided market data');
  });

  it('applies the options given and the defaults of those left out', async () => {
    const defaults = await call({ message: 'How do I write a product description that sells?' });
    expect(defaults.status).toBe(200);
    expect(lastLlmCall()).toMatchObject({ max_tokens: 1024, temperature: 0.7 });
    expect(lastLlmCall().messages[0]?.content).toContain('BCP 47 tag "en"');
    const given = await call({
      message: 'How do I write a product description that sells?',
      options: { maxTokens: 256, temperature: 0, language: 'de' },
    });
    expect(given.status).toBe(200);
    expect(lastLlmCall()).toMatchObject({ max_tokens: 256, temperature: 0 });
    expect(lastLlmCall().messages[0]?.content).toContain('BCP 47 tag "de"');
    // Each option left out of a partial `options` takes its own default.
    await call({
      message: 'How do I write a product description that sells?',
      options: { language: 'fr' },
    });
    expect(lastLlmCall()).toMatchObject({ max_tokens: 1024, temperature: 0.7 });
    await call({
      message: 'How do I write a product description that sells?',
      options: { temperature: 0.3 },
    });
    expect(lastLlmCall()).toMatchObject({ max_tokens: 1024, temperature: 0.3 });
    expect(lastLlmCall().messages[0]?.content).toContain('BCP 47 tag "en"');
    const edges = await call({
      message: 'How do I write a product description that sells?',
      options: { maxTokens: 2048, temperature: 1 },
      threadId: null,
      capability: null,
      context: {},
      meta: {},
    });
    expect(edges.status).toBe(200);
    expect(lastLlmCall()).toMatchObject({ max_tokens: 2048, temperature: 1 });
  });

  it('detects the capability when none is given, as the seed orders its rules', async () => {
    const cases: [string, string, string[]][] = [
      ['Which competitor listing has the most sales?', 'competitor_intel', ['listing', 'keyword']],
      ['Why did the trademark alert fire?', 'alert_explanation', ['alert', 'doc']],
      ['Why is the keyword boho trending?', 'keyword_explanation', ['keyword', 'alert']],
      ['Give me a brief on the wedding market', 'market_brief', ['keyword']],
      ['How do I write a product description that sells?', 'general_chat', ['doc', 'keyword']],
    ];
    for (const [message, capability, types] of cases) {
      const res = await call({ message, capability: null });
      expect(res.status).toBe(200);
      expect(res.body.capability).toBe(capability);
      expect(res.body.sources.length).toBeGreaterThan(0);
      for (const s of res.body.sources) expect(types).toContain(s.type);
    }
  });

  it('retrieves only the source types of the capability asked for', async () => {
    const alerts = await call({
      message: 'Explain the boho trademark risk',
      capability: 'alert_explanation',
    });
    expect(alerts.body.capability).toBe('alert_explanation');
    expect(alerts.body.sources.map((s) => s.id)).toContain(ids.trademark);
    expect(alerts.body.references.alerts).toContain(ids.trademark);
    for (const s of alerts.body.sources) expect(['alert', 'doc']).toContain(s.type);
    const listings = await call({
      message: 'vintage wedding rings listing sales',
      capability: 'competitor_intel',
    });
    expect(listings.body.references.listings).toContain(ids['bob-rings']);
    for (const s of listings.body.sources) expect(['listing', 'keyword']).toContain(s.type);
  });

  it("retrieves with each capability's policy: source types, candidates, final count, owner first, recency", async () => {
    const policy = async (capability: string, context?: unknown) => {
      searched.length = 0;
      const before = Date.now();
      const res = await call(
        {
          message: 'trending wedding keywords and listings',
          capability,
          ...(context ? { context } : {}),
        },
        tokens.recording,
        recording,
      );
      expect(res.status).toBe(200);
      expect(searched).toHaveLength(1);
      const r = searched[0]!;
      return {
        before,
        after: Date.now(),
        request: r,
        seen: {
          // The profile's types narrow within the tenant's source-type policy (source-types.ts).
          types: r.narrowSourceTypes,
          candidates: r.candidates,
          topK: r.topK,
          ownerFirst: r.ownerFirst ?? false,
        },
      };
    };
    const expected: Record<string, unknown> = {
      market_brief: { types: ['keyword', 'trend'], candidates: 40, topK: 12, ownerFirst: false },
      competitor_intel: {
        types: ['listing', 'shop', 'keyword'],
        candidates: 40,
        topK: 12,
        ownerFirst: true,
      },
      keyword_explanation: {
        types: ['keyword', 'keyword_history', 'alert'],
        candidates: 30,
        topK: 10,
        ownerFirst: false,
      },
      alert_explanation: {
        types: ['alert', 'risk_rule', 'doc'],
        candidates: 20,
        topK: 8,
        ownerFirst: true,
      },
      general_chat: {
        types: ['doc', 'keyword', 'watchlist'],
        candidates: 30,
        topK: 10,
        ownerFirst: true,
      },
    };
    for (const [capability, seen] of Object.entries(expected)) {
      const got = await policy(capability);
      expect({ capability, ...got.seen }).toEqual({ capability, ...(seen as object) });
      // market_brief reads the last 90 days unless the request gives a range; the others read all.
      if (capability === 'market_brief') {
        const from = Date.parse(got.request.filters.date_from!);
        expect(from).toBeGreaterThanOrEqual(got.before - 90 * 86_400_000);
        expect(from).toBeLessThanOrEqual(got.after - 90 * 86_400_000);
      } else {
        expect(got.request.filters.date_from).toBeUndefined();
      }
    }
    const ranged = await policy('market_brief', {
      timeRange: { from: '2001-01-01T00:00:00Z', to: '2999-01-01T00:00:00Z' },
    });
    expect(ranged.request.filters).toMatchObject({
      date_from: '2001-01-01T00:00:00Z',
      date_to: '2999-01-01T00:00:00Z',
    });
  });

  it("puts the caller's own sources first where the capability says so", async () => {
    const ask = (token: string) =>
      call(
        { message: 'vintage wedding rings listing with sales', capability: 'competitor_intel' },
        token,
      );
    const carol = await ask(tokens.carol!);
    expect(carol.body.sources[0]?.id).not.toBe(ids['alice-bracelets']);
    expect(carol.body.sources.map((s) => s.id)).toContain(ids['alice-bracelets']);
    const alice = await ask(tokens.alice!);
    expect(alice.body.sources[0]?.id).toBe(ids['alice-bracelets']);
    const bob = await ask(tokens.bob!);
    expect(bob.body.sources[0]?.id).toBe(ids['bob-rings']);
  });

  it('continues a thread, starts a new one for a null or missing threadId, and refuses others', async () => {
    const first = await call({ message: 'What does the vintage wedding rings keyword show?' });
    expect(first.status).toBe(200);
    const second = await call({
      message: 'And how does the boho wedding dress compare?',
      threadId: first.body.threadId,
    });
    expect(second.status).toBe(200);
    expect(second.body.threadId).toBe(first.body.threadId);
    expect(second.body.messageId).not.toBe(first.body.messageId);
    // The thread's history reaches the LLM (the follow-up is made standalone with it).
    const sent = JSON.stringify(fake.requests.map((r) => r.body));
    expect(sent).toContain('What does the vintage wedding rings keyword show?');
    const fresh = await call({
      message: 'What does the vintage wedding rings keyword show?',
      threadId: null,
    });
    expect(fresh.body.threadId).not.toBe(first.body.threadId);
    expectError(
      await call({ message: 'Is this my thread?', threadId: first.body.threadId }, tokens.bob),
      404,
      'not_found',
    );
    expectError(
      await call({
        message: 'Is this a thread?',
        threadId: '00000000-0000-4000-8000-000000000000',
      }),
      404,
      'not_found',
    );
  });

  it('narrows retrieval by marketplaces and timeRange', async () => {
    const amazon = await call({
      message: 'trending keywords in the wedding niche',
      capability: 'market_brief',
      context: { marketplaces: ['amazon'] },
    });
    expect(amazon.body.sources.map((s) => s.id)).toEqual([ids['boho-wedding-dress']]);
    const past = await call({
      message: 'trending keywords in the wedding niche',
      capability: 'market_brief',
      context: { timeRange: { from: '2001-01-01T00:00:00Z', to: '2002-01-01T00:00:00Z' } },
    });
    expect(past.status).toBe(200);
    expect(past.body.sources).toEqual([]);
    expect(past.body.flags).toEqual({
      usedRag: true,
      fallbackToGeneric: false,
      insufficientContext: true,
    });
    expect(past.body.model.usage).toBeNull();
    const now = await call({
      message: 'trending keywords in the wedding niche',
      capability: 'market_brief',
      context: { timeRange: { from: '2001-01-01', to: '2999-01-01T00:00:00Z' } },
    });
    expect(now.body.sources.length).toBeGreaterThan(0);
  });

  it("adds the documents the context names to the sources, never another tenant's", async () => {
    const res = await call({
      message: 'trending keywords in the wedding niche',
      capability: 'market_brief',
      context: {
        marketplaces: ['etsy'],
        keywordIds: [ids['boho-wedding-dress'], ids.secret],
        alertIds: [ids.trademark],
      },
    });
    expect(res.status).toBe(200);
    const got = res.body.sources.map((s) => s.id);
    expect(got.slice(0, 2).sort()).toEqual([ids['boho-wedding-dress'], ids.trademark].sort());
    expect(got).not.toContain(ids.secret);
    expect(res.body.references.alerts).toEqual([ids.trademark]);
  });

  it('answers a greeting without retrieval', async () => {
    const res = await call({ message: 'hi' });
    expect(res.status).toBe(200);
    expect(res.body.capability).toBe('general_chat');
    expect(res.body.sources).toEqual([]);
    expect(res.body.flags).toEqual({
      usedRag: false,
      fallbackToGeneric: false,
      insufficientContext: false,
    });
    expect(res.body.model).toEqual({
      id: 'none',
      usage: null,
      latencyMs: expect.any(Number),
    });
  });

  it('falls back to the top sources when the LLM is down (fallbackToGeneric)', async () => {
    fake.setBehaviour({ kind: 'always-fail', status: 503 });
    const res = await call({ message: 'How do I write a product description that sells?' });
    expect(res.status).toBe(200);
    expect(res.body.flags.fallbackToGeneric).toBe(true);
    expect(res.body.answer).toMatch(/temporarily unavailable/);
    expect(res.body.sources.length).toBeGreaterThan(0);
    expect(res.body.model.usage).toBeNull();
  });

  it.each<[string, unknown]>([
    ['no message', {}],
    ['an empty message', { message: '' }],
    ['a blank message', { message: '   ' }],
    ['a message of 4,001 characters', { message: 'a'.repeat(4001) }],
    ['a message that is not a string', { message: 42 }],
    ['an unknown capability', { message: 'hello there you', capability: 'poetry' }],
    ['a threadId that is not a uuid', { message: 'hello there you', threadId: 'thread-1' }],
    [
      '51 keywordIds',
      {
        message: 'hello there you',
        context: {
          keywordIds: Array.from({ length: 51 }, () => '00000000-0000-4000-8000-000000000000'),
        },
      },
    ],
    [
      'a keyword id that is not a uuid',
      { message: 'hello there you', context: { keywordIds: ['kw-1'] } },
    ],
    [
      'timeRange from after to',
      {
        message: 'hello there you',
        context: { timeRange: { from: '2025-02-01T00:00:00Z', to: '2025-01-01T00:00:00Z' } },
      },
    ],
    [
      'timeRange from equal to to',
      {
        message: 'hello there you',
        context: { timeRange: { from: '2025-01-01', to: '2025-01-01' } },
      },
    ],
    [
      'a timeRange date that is not ISO 8601',
      {
        message: 'hello there you',
        context: { timeRange: { from: 'yesterday', to: '2025-01-01' } },
      },
    ],
    [
      // PostgreSQL refuses offsets past 15:59: answered as the caller's error, not degraded.
      'a timeRange offset past 15:59',
      {
        message: 'how long do refunds take',
        context: { timeRange: { from: '2020-01-01T00:00:00+23:59', to: '2030-01-01T00:00:00Z' } },
      },
    ],
    [
      'a shopUrl that is not a URL',
      { message: 'hello there you', context: { shopUrl: 'my shop' } },
    ],
    ['maxTokens 255', { message: 'hello there you', options: { maxTokens: 255 } }],
    ['maxTokens 2049', { message: 'hello there you', options: { maxTokens: 2049 } }],
    ['maxTokens 512.5', { message: 'hello there you', options: { maxTokens: 512.5 } }],
    ['temperature -0.1', { message: 'hello there you', options: { temperature: -0.1 } }],
    ['temperature 1.1', { message: 'hello there you', options: { temperature: 1.1 } }],
    [
      'a language that is not a tag',
      { message: 'hello there you', options: { language: 'English please' } },
    ],
    ['an unknown meta.client', { message: 'hello there you', meta: { client: 'mobile' } }],
    ['an unknown field', { message: 'hello there you', stream: true }],
    ['an unknown context field', { message: 'hello there you', context: { shopId: 'x' } }],
    ['a body that is not JSON', '{"message": '],
  ])('refuses %s with 422 validation_error', async (_name, body) => {
    expectError(await call(body), 422, 'validation_error');
  });

  it('accepts every context field the seed names', async () => {
    const ids50 = (list: number) =>
      Array.from(
        { length: 50 },
        (_, i) => `00000000-0000-4000-8000-${String(list * 1000 + i).padStart(12, '0')}`,
      );
    const res = await call({
      message: 'How do I write a product description that sells?',
      context: {
        // The most ids each list takes, none of them a document the caller can see.
        keywordIds: ids50(1),
        watchlistIds: ids50(2),
        listingIds: ids50(3),
        alertIds: ids50(4),
        shopUrl: 'https://www.etsy.com/shop/example',
        marketplaces: ['etsy', 'amazon'],
        timeRange: { from: '2001-01-01T00:00:00Z', to: '2999-01-01T00:00:00+02:00' },
      },
      meta: { client: 'extension', version: '2.3.1' },
    });
    expect(res.status).toBe(200);
  });

  it('refuses a request without a valid token with 401 authentication_required', async () => {
    expectError(await call({ message: 'hello there you' }, null), 401, 'authentication_required');
    expectError(
      await call({ message: 'hello there you' }, 'not-a-jwt'),
      401,
      'authentication_required',
    );
  });

  it('honours options.planCode for admins only', async () => {
    expectError(
      await call({ message: 'hello there you', options: { planCode: 'pro' } }),
      403,
      'forbidden',
    );
    expectError(
      await call({ message: 'hello there you', options: { planCode: 'platinum' } }, tokens.admin),
      422,
      'validation_error',
    );
    const ok = await call(
      { message: 'hello there you', options: { planCode: 'pro' } },
      tokens.admin,
    );
    expect(ok.status).toBe(200);
  });

  it('refuses an answer beyond the monthly quota with 403 quota_exceeded', async () => {
    const question = { message: 'How do I write a product description that sells?' };
    expect((await call(question, tokens.oneAnswer)).status).toBe(200);
    expectError(await call(question, tokens.oneAnswer), 403, 'quota_exceeded');
  });

  it('refuses requests beyond the rate limit with 429 rate_limit_exceeded', async () => {
    let limited: Awaited<ReturnType<typeof call>> | undefined;
    // Two a minute: the third is refused (a fourth and fifth cover a minute turning meanwhile).
    for (let i = 0; i < 5 && !limited; i++) {
      const res = await call({ message: 'hello there you' }, tokens.twoPerMinute);
      if (res.status === 429) limited = res;
      else expect(res.status).toBe(200);
    }
    expect(limited).toBeDefined();
    expectError(limited!, 429, 'rate_limit_exceeded', true);
    expect(Number(limited!.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it("refuses answers once the tenant's daily cost cap is reached with 503 cost_cap_reached", async () => {
    const question = { message: 'How do I write a product description that sells?' };
    const first = await call(question, tokens.capped);
    expect(first.status).toBe(200);
    expect(first.body.model.usage).not.toBeNull();
    expectError(await call(question, tokens.capped), 503, 'cost_cap_reached', true);
    // Another tenant is not affected.
    expect((await call(question, tokens.alice)).status).toBe(200);
  });

  it("uses a tenant's own versions of the capabilities, and profiles it adds to the family", async () => {
    const createPrompt = (body: unknown) =>
      fetch(`${api.server.url}/api/admin/prompts`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${tokens.studioAdmin}`,
        },
        body: JSON.stringify(body),
      });
    const general = {
      family: 'lexybrain',
      priority: 50,
      fallback: true,
      allowed_source_types: ['doc'],
      candidates: 30,
      top_k: 10,
      owner_first: true,
    };
    expect(
      (
        await createPrompt({
          profile: 'general_chat',
          name: 'Studio general chat',
          instructions: 'STUDIO GENERAL CHAT V2',
          constraints: general,
          activate: true,
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await createPrompt({
          profile: 'shipping_help',
          name: 'Shipping help',
          instructions: 'STUDIO SHIPPING HELP',
          constraints: { family: 'lexybrain', priority: 5, keywords: ['shipping'] },
          activate: true,
        })
      ).status,
    ).toBe(201);
    const chat = await call({ message: 'How do I write a product description?' }, tokens.studio);
    expect(chat.body.capability).toBe('general_chat');
    expect(lastLlmCall().messages[0]?.content).toContain('STUDIO GENERAL CHAT V2');
    const shipping = await call({ message: 'How are shipping times shown?' }, tokens.studio);
    expect(shipping.body.capability).toBe('shipping_help');
    expect(lastLlmCall().messages[0]?.content).toContain('STUDIO SHIPPING HELP');
    // Another tenant keeps the built-in versions.
    const shop = await call({ message: 'How are shipping times shown?' }, tokens.alice);
    expect(shop.body.capability).toBe('general_chat');
    expect(lastLlmCall().messages[0]?.content).not.toContain('STUDIO');
  });

  describe("a tenant's new version of a capability", () => {
    // The tenant `outdoor`, on the recording API: what each answer asked of retrieval is seen.
    const admin = () =>
      recording.issuer.issueToken({ sub: 'olive', tenantId: 'outdoor', admin: true });
    const user = () => recording.issuer.issueToken({ sub: 'oscar', tenantId: 'outdoor' });
    const adminCall = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${recording.server.url}${path}`, {
        method,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${admin()}` },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.status, body: (await res.json()) as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
    };
    /** One answer for the tenant's user: its body, the system prompt sent and the retrieval asked. */
    const ask = async (body: unknown) => {
      searched.length = 0;
      const before = Date.now();
      const res = await call(body, user(), recording);
      expect(res.status).toBe(200);
      expect(searched).toHaveLength(1);
      const r = searched[0]!;
      return {
        body: res.body,
        prompt: lastLlmCall().messages[0]?.content ?? '',
        policy: {
          types: r.narrowSourceTypes,
          candidates: r.candidates,
          topK: r.topK,
          ownerFirst: r.ownerFirst ?? false,
        },
        dateFrom: r.filters.date_from,
        before,
        after: Date.now(),
      };
    };
    const BRIEF = 'Give me a brief on the outdoor gear niche';
    const MARKET_BRIEF_POLICY = {
      types: ['keyword', 'trend'],
      candidates: 40,
      topK: 12,
      ownerFirst: false,
    };
    /** market_brief's recency window: 90 days back from the time of the request. */
    const expectLast90Days = (got: Awaited<ReturnType<typeof ask>>) => {
      const from = Date.parse(got.dateFrom!);
      expect(from).toBeGreaterThanOrEqual(got.before - 90 * 86_400_000);
      expect(from).toBeLessThanOrEqual(got.after - 90 * 86_400_000);
    };

    it("keeps the capability's definition for what a version made through the seed's configs route does not restate", async () => {
      const created = await adminCall('POST', '/api/admin/lexybrain/configs', {
        name: 'ask_lexybrain_market_brief_v2',
        type: 'market_brief',
        system_instructions: 'OUTDOOR BRIEF V2: analyze the provided market data.',
        constraints: { retrieval_scope: ['keywords', 'trends'] },
        is_active: true,
      });
      expect(created.status).toBe(201);
      // What the version states (its instructions, its scope in Groundwork's source types) and
      // what it inherits from the built-in market_brief (migrations/0017).
      expect(created.body.constraints).toEqual(MARKET_BRIEF_CONSTRAINTS);

      // Named and detected alike, answered with the version's prompt and the capability's policy.
      for (const request of [{ message: BRIEF, capability: 'market_brief' }, { message: BRIEF }]) {
        const got = await ask(request);
        expect(got.body.capability).toBe('market_brief');
        expect(got.prompt).toContain('OUTDOOR BRIEF V2');
        expect(got.policy).toEqual(MARKET_BRIEF_POLICY);
        expectLast90Days(got);
        expect(got.body.sources.length).toBeGreaterThan(0);
        for (const s of got.body.sources) expect(s.type).toBe('keyword');
      }

      // Deactivated, the built-in version answers, with the same policy; activated, the version again.
      expect(
        (await adminCall('POST', `/api/admin/lexybrain/configs/${created.body.id}/deactivate`))
          .status,
      ).toBe(200);
      const fallback = await ask({ message: BRIEF });
      expect(fallback.body.capability).toBe('market_brief');
      expect(fallback.prompt).not.toContain('OUTDOOR BRIEF V2');
      expect(fallback.prompt).toContain('Analyze the provided market data');
      expect(fallback.policy).toEqual(MARKET_BRIEF_POLICY);
      expect(
        (await adminCall('POST', `/api/admin/lexybrain/configs/${created.body.id}/activate`))
          .status,
      ).toBe(200);
      const again = await ask({ message: BRIEF, capability: 'market_brief' });
      expect(again.prompt).toContain('OUTDOOR BRIEF V2');
      expect(again.policy).toEqual(MARKET_BRIEF_POLICY);
      expectLast90Days(again);
    });

    it("keeps general_chat the fallback, reading the seed's user_ scopes with the caller's own first", async () => {
      const created = await adminCall('POST', '/api/admin/lexybrain/configs', {
        name: 'ask_lexybrain_general_chat_v2',
        type: 'general_chat',
        system_instructions: 'OUTDOOR CHAT V2: answer helpfully.',
        constraints: { retrieval_scope: ['docs', 'user_keywords', 'user_watchlists'] },
        is_active: true,
      });
      expect(created.status).toBe(201);
      expect(created.body.constraints).toEqual({
        family: 'lexybrain',
        priority: 50,
        fallback: true,
        retrieval_scope: ['doc', 'keyword', 'watchlist'],
        candidates: 30,
        top_k: 10,
        owner_first: true,
        keywords: [],
      });
      const message = 'How do I pack a backpack for a weekend hike?';
      for (const request of [{ message, capability: 'general_chat' }, { message }]) {
        const got = await ask(request);
        expect(got.body.capability).toBe('general_chat');
        expect(got.prompt).toContain('OUTDOOR CHAT V2');
        expect(got.policy).toEqual({
          types: ['doc', 'keyword', 'watchlist'],
          candidates: 30,
          topK: 10,
          ownerFirst: true,
        });
        expect(got.dateFrom).toBeUndefined();
      }
    });

    it("applies what a version states over the definition, on the seed's route and the project's", async () => {
      const v3 = await adminCall('POST', '/api/admin/lexybrain/configs', {
        name: 'ask_lexybrain_market_brief_v3',
        type: 'market_brief',
        system_instructions: 'OUTDOOR BRIEF V3: tents only.',
        constraints: { keywords: ['tent'], top_k: 6 },
        is_active: true,
      });
      expect(v3.status).toBe(201);
      const tents = await ask({ message: 'Which tent sells best this season?' });
      expect(tents.body.capability).toBe('market_brief');
      expect(tents.prompt).toContain('OUTDOOR BRIEF V3');
      expect(tents.policy).toEqual({ ...MARKET_BRIEF_POLICY, topK: 6 });
      expectLast90Days(tents);
      // Its keywords replace the definition's: "brief" no longer selects market_brief.
      expect((await ask({ message: BRIEF })).body.capability).toBe('general_chat');

      // The project's route shares the rule.
      const own = await adminCall('POST', '/api/admin/prompts', {
        profile: 'competitor_intel',
        name: 'Outdoor competitors',
        instructions: 'OUTDOOR COMPETITORS V2',
        activate: true,
      });
      expect(own.status).toBe(201);
      expect(own.body.constraints).toMatchObject({
        family: 'lexybrain',
        allowed_source_types: ['listing', 'shop', 'keyword'],
        owner_first: true,
        keywords: ['competitor', 'listing'],
      });
      const competitors = await ask({ message: 'Which competitor sells the most tents?' });
      expect(competitors.body.capability).toBe('competitor_intel');
      expect(competitors.prompt).toContain('OUTDOOR COMPETITORS V2');
      expect(competitors.policy).toEqual({
        types: ['listing', 'shop', 'keyword'],
        candidates: 40,
        topK: 12,
        ownerFirst: true,
      });
    });

    it('refuses a retrieval_scope that names no source type, naming the field', async () => {
      const before = await adminCall('GET', '/api/admin/lexybrain/configs');
      for (const scope of [['keywords', 'gizmos'], ['Keywords'], ['faqs']]) {
        const r = await adminCall('POST', '/api/admin/lexybrain/configs', {
          name: 'ask_lexybrain_market_brief_v9',
          type: 'market_brief',
          system_instructions: 'Analyze.',
          constraints: { retrieval_scope: scope },
        });
        expect(r.status).toBe(422);
        expect(r.body.error).toMatchObject({ code: 'validation_error', retryable: false });
        expect(r.body.error.message).toMatch(/^constraints\.retrieval_scope\.\d+: /);
      }
      const empty = await adminCall('POST', '/api/admin/lexybrain/configs', {
        name: 'ask_lexybrain_market_brief_v9',
        type: 'market_brief',
        system_instructions: 'Analyze.',
        constraints: { retrieval_scope: [] },
      });
      expect(empty.status).toBe(422);
      expect(empty.body.error.message).toMatch(/^constraints\.retrieval_scope: /);
      const after = await adminCall('GET', '/api/admin/lexybrain/configs');
      expect(after.body.configs).toHaveLength(before.body.configs.length);
    });

    it('answers 409 no_profile, not a 500, once versions move every capability out of the family', async () => {
      const capabilities = [
        'market_brief',
        'competitor_intel',
        'keyword_explanation',
        'alert_explanation',
        'general_chat',
      ];
      const created: string[] = [];
      for (const type of capabilities) {
        const r = await adminCall('POST', '/api/admin/lexybrain/configs', {
          name: `ask_lexybrain_${type}_elsewhere`,
          type,
          system_instructions: 'Elsewhere.',
          constraints: { family: 'elsewhere' },
          is_active: true,
        });
        expect(r.status).toBe(201);
        created.push(r.body.id as string);
      }
      try {
        const res = await call({ message: 'How long do refunds take?' }, user(), recording);
        expect(res.status).toBe(409);
        expect(res.body.error).toMatchObject({ code: 'no_profile', retryable: false });
        expect(res.body.error?.message).toContain('family "lexybrain"');
      } finally {
        for (const id of created)
          expect(
            (await adminCall('POST', `/api/admin/lexybrain/configs/${id}/deactivate`)).status,
          ).toBe(200);
      }
      await ask({ message: BRIEF });
    });
  });

  it('answers 503 feature_disabled when LEXYBRAIN_RAG_ENABLED is off, after authentication and validation', async () => {
    expectError(
      await call({ message: 'hello there you' }, tokens.disabled, disabled),
      503,
      'feature_disabled',
    );
    expectError(
      await call({ message: 'hello there you' }, null, disabled),
      401,
      'authentication_required',
    );
    expectError(await call({ message: '' }, tokens.disabled, disabled), 422, 'validation_error');
    // The rest of the API is unaffected.
    const other = await fetch(`${disabled.server.url}/api/rag/answer`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens.disabled}` },
      body: JSON.stringify({ query_text: 'How do I write a product description?' }),
    });
    expect(other.status).toBe(200);
  });

  it('answers 500 generation_failed when generation fails in a way the pipeline cannot degrade around', async () => {
    const res = await call(
      { message: 'How do I write a product description that sells?' },
      tokens.broken,
      broken,
    );
    expectError(res, 500, 'generation_failed');
    expect(res.body.error?.message).not.toContain('unexpected provider reply');
  });
});
