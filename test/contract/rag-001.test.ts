/**
 * Seed 001 (the retrieval API contract), called as a client written against it would: the curl
 * examples of POST /api/rag/search and POST /api/rag/answer, every field, default, status code,
 * header and CORS answer the seed names, through the local server (real tokens, PGlite, documents
 * indexed through the S3 emulator, an OpenAI-compatible LLM served by a local fake).
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { createOpenAiCompatibleLlm } from '../../lambdas/adapters/llm/openai-compatible';
import { INSUFFICIENT_CONTEXT_TEXT } from '../../lambdas/core/answer/answer';
import { DEFAULT_LIMITS_CONFIG } from '../../lambdas/core/limits/config';
import { startLocalApi, type LocalApi } from '../../local/api';
import { startLocalStack, type LocalStack } from '../../local/stack';
import { startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai';
import { createHashEmbedder } from '../support/hash-embedder';

process.env.POWERTOOLS_METRICS_DISABLED = 'true';

// Calibrated for this fixture and the hash embedder (as in test/integration/answer-api.test.ts).
const CALIBRATION = { 'test/hash-512': { cosineWeight: 0.5, high: 0.3, medium: 0.12 } };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

interface SearchResult {
  chunk_id: string;
  source_id: string;
  score: number;
  snippet: string;
  source_type: string;
  source_title: string | null;
  source_uri: string | null;
  meta: Record<string, unknown>;
  rank: number;
}
interface SearchBody {
  status: string;
  query_text: string;
  results: SearchResult[];
  total_found: number;
  processing_time_ms: number;
}
interface AnswerBody {
  status: string;
  query_text: string;
  answer: { text: string; confidence: string; model: string | null; generated_at: string };
  citations: {
    source_id: string;
    source_type: string;
    source_title: string | null;
    source_uri: string | null;
    snippet: string;
    relevance_score: number;
    meta: Record<string, unknown>;
  }[];
  context_used: { chunks_retrieved: number; unique_sources: number; avg_relevance: number };
  confidence_thresholds: { high: number; medium: number };
  processing_time_ms: number;
  error?: { code: string; message: string; retryable: boolean };
}

describe('seed 001: POST /api/rag/search and POST /api/rag/answer', () => {
  let stack: LocalStack;
  let api: LocalApi;
  let fake: FakeOpenAi;
  let embedder: ReturnType<typeof createHashEmbedder>;
  let token: string;

  beforeAll(async () => {
    fake = await startFakeOpenAi();
    embedder = createHashEmbedder();
    stack = await startLocalStack({
      embedder,
      llm: createOpenAiCompatibleLlm({
        baseUrl: fake.url,
        model: 'google/gemini-2.5-flash',
        maxRetries: 1,
        retryDelayMs: 1,
      }),
      logLevel: 'SILENT',
      answer: { calibrationByModel: CALIBRATION },
      // Seed 001's limit: 60 requests a minute per user.
      limits: {
        ...DEFAULT_LIMITS_CONFIG,
        plans: {
          ...DEFAULT_LIMITS_CONFIG.plans,
          free: { answersPerMonth: null, searchesPerMonth: null, requestsPerMinute: 60 },
        },
      },
    });
    api = await startLocalApi(stack);
    token = api.issuer.issueToken({ sub: 'alice', tenantId: 'acme' });
    const put = (key: string, body: string) =>
      stack.s3.client.send(new PutObjectCommand({ Bucket: stack.s3.bucket, Key: key, Body: body }));
    const document = async (key: string, sourceType: string, text: string) => {
      await put(
        `${key}.metadata.json`,
        JSON.stringify({ metadataAttributes: { source_type: sourceType } }),
      );
      await put(key, text);
    };
    await document(
      'tenants/acme/calls/pricing-call.txt',
      'transcript',
      'Pricing call\n\nThe customer said the pricing was too high for a team of five and asked ' +
        'about a discount on the annual plan. '.repeat(12),
    );
    await document(
      'tenants/acme/calls/onboarding-call.txt',
      'transcript',
      'Onboarding call\n\nThe customer asked how to invite colleagues and where to find invoices.',
    );
    await document(
      'tenants/acme/mail/feature-feedback.txt',
      'email',
      'Feedback on the export feature\n\nCustomers wrote that the new export feature saves them ' +
        'an hour each week, and asked for a CSV option.',
    );
    for (let i = 0; i < 10; i++) {
      await document(
        `tenants/acme/faq/faq-${i}.txt`,
        'faq',
        `FAQ ${i}\n\nQuestion ${i} about shipping: parcels ship within ${i + 1} business days.`,
      );
    }
    await put(
      'tenants/other/secret.txt',
      'Other tenant\n\nThe pricing of the other tenant is secret.',
    );
    await stack.queue.idle();
  });
  afterAll(async () => {
    await api?.close();
    await stack?.stop();
    await fake?.close();
  });
  beforeEach(() => fake.reset());

  /** As the seed's curl examples: bearer token and JSON content type. */
  const post = async (path: string, body: unknown, bearer: string | null = token) => {
    const res = await fetch(`${api.server.url}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(bearer === null ? {} : { authorization: `Bearer ${bearer}` }),
      },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { res, body: (await res.json()) as Record<string, unknown> };
  };

  function expectErrorModel(body: Record<string, unknown>) {
    const error = body.error as { code: unknown; message: unknown; retryable: unknown };
    expect(typeof error.code).toBe('string');
    expect(typeof error.message).toBe('string');
    expect(typeof error.retryable).toBe('boolean');
  }

  describe('POST /api/rag/search', () => {
    it("answers the seed's curl example with every field of its response", async () => {
      const { res, body } = await post('/api/rag/search', {
        query_text: 'What did the customer say about pricing?',
        top_k: 5,
        filters: { source_type: 'transcript', date_from: '2025-01-01T00:00:00Z' },
      });
      expect(res.status).toBe(200);
      const search = body as unknown as SearchBody;
      expect(search.status).toBe('success');
      expect(search.query_text).toBe('What did the customer say about pricing?');
      expect(search.results.length).toBeGreaterThan(0);
      expect(search.results.length).toBeLessThanOrEqual(5);
      expect(search.total_found).toBe(search.results.length);
      expect(typeof search.processing_time_ms).toBe('number');
      search.results.forEach((r, i) => {
        expect(r.chunk_id).toMatch(UUID);
        expect(r.source_id).toMatch(UUID);
        expect(r.score).toBeGreaterThanOrEqual(0);
        expect(r.score).toBeLessThanOrEqual(1);
        if (i > 0) expect(r.score).toBeLessThanOrEqual(search.results[i - 1]!.score);
        expect(r.rank).toBe(i + 1);
        expect(r.snippet.length).toBeLessThanOrEqual(200);
        expect(r.source_type).toBe('transcript');
        expect(typeof r.source_title === 'string' || r.source_title === null).toBe(true);
        expect(typeof r.source_uri === 'string' || r.source_uri === null).toBe(true);
        expect(typeof r.meta).toBe('object');
      });
      // The long transcript's snippet is the first 200 characters of its chunk.
      const long = search.results.find((r) => r.source_uri?.includes('pricing-call'));
      expect(long?.snippet).toHaveLength(200);
      // Nothing of another tenant.
      expect(JSON.stringify(search)).not.toContain('other tenant');
    });

    it('returns 8 results when top_k is not given', async () => {
      const { res, body } = await post('/api/rag/search', { query_text: 'shipping business days' });
      expect(res.status).toBe(200);
      expect((body as unknown as SearchBody).results).toHaveLength(8);
    });

    it.each([
      ['an empty query_text', { query_text: '' }],
      ['a query_text of 501 characters', { query_text: 'x'.repeat(501) }],
      ['top_k 0', { query_text: 'pricing', top_k: 0 }],
      ['top_k 51', { query_text: 'pricing', top_k: 51 }],
      [
        'a source_type that is not a string',
        { query_text: 'pricing', filters: { source_type: 7 } },
      ],
      ['a date_from that is not a date', { query_text: 'pricing', filters: { date_from: 'soon' } }],
      ['a body that is not JSON', '{"query_text": '],
    ])('answers 400 with the error model for %s', async (_, request) => {
      const { res, body } = await post('/api/rag/search', request);
      expect(res.status).toBe(400);
      expectErrorModel(body);
      expect((body.error as { code: string }).code).toBe('validation_error');
    });

    it('accepts 500 characters and top_k 50', async () => {
      const { res } = await post('/api/rag/search', { query_text: 'x'.repeat(500), top_k: 50 });
      expect(res.status).toBe(200);
    });

    it('answers 401 with the error model without a valid JWT', async () => {
      for (const bearer of [null, 'not-a-jwt']) {
        const { res, body } = await post('/api/rag/search', { query_text: 'pricing' }, bearer);
        expect(res.status).toBe(401);
        expectErrorModel(body);
      }
    });

    it('refuses org_id filters for organisations the token does not grant', async () => {
      const other = await post('/api/rag/search', {
        query_text: 'pricing',
        filters: { org_id: 'other' },
      });
      expect(other.res.status).toBe(403);
      expectErrorModel(other.body);
      const own = await post('/api/rag/search', {
        query_text: 'pricing',
        filters: { org_id: 'acme' },
      });
      expect(own.res.status).toBe(200);
    });

    it('answers 500, retryable, when the embedding model fails', async () => {
      embedder.failNext = 1;
      const { res, body } = await post('/api/rag/search', { query_text: 'pricing' });
      expect(res.status).toBe(500);
      expectErrorModel(body);
      expect((body.error as { retryable: boolean }).retryable).toBe(true);
    });
  });

  describe('POST /api/rag/answer', () => {
    it("answers the seed's curl example (case 1: sufficient context) with every field", async () => {
      fake.setAnswer({ text: 'Customers said the export feature saves them an hour a week [1].' });
      const { res, body } = await post('/api/rag/answer', {
        query_text: 'Summarize customer feedback on our new feature',
        top_k: 10,
        filters: { source_type: 'email' },
      });
      expect(res.status).toBe(200);
      const answer = body as unknown as AnswerBody;
      expect(answer.status).toBe('success');
      expect(answer.query_text).toBe('Summarize customer feedback on our new feature');
      expect(['high', 'medium']).toContain(answer.answer.confidence);
      expect(answer.answer.model).toMatch(/google\/gemini-2\.5-flash$/);
      expect(answer.answer.generated_at).toMatch(ISO);
      expect(answer.answer.text).toContain('export feature');
      expect(answer.citations.length).toBeGreaterThan(0);
      for (const c of answer.citations) {
        expect(c.source_id).toMatch(UUID);
        expect(c.source_type).toBe('email');
        expect(typeof c.snippet).toBe('string');
        expect(c.relevance_score).toBeGreaterThanOrEqual(0);
        expect(c.relevance_score).toBeLessThanOrEqual(1);
        expect(typeof c.meta).toBe('object');
      }
      expect(answer.context_used.chunks_retrieved).toBeGreaterThan(0);
      expect(answer.context_used.unique_sources).toBeGreaterThan(0);
      expect(typeof answer.context_used.avg_relevance).toBe('number');
      expect(typeof answer.processing_time_ms).toBe('number');
      // Which thresholds were in force.
      expect(answer.confidence_thresholds).toEqual({ high: 0.3, medium: 0.12 });
    });

    it('deduplicates citations by source, at most 5, with top_k defaulting to 8', async () => {
      fake.setAnswer({ text: 'Parcels ship within a few business days [1][2][3][4][5][6][7].' });
      const { res, body } = await post('/api/rag/answer', {
        query_text: 'How many business days until parcels ship?',
      });
      expect(res.status).toBe(200);
      const answer = body as unknown as AnswerBody;
      expect(answer.context_used.chunks_retrieved).toBeLessThanOrEqual(8);
      expect(answer.citations.length).toBeLessThanOrEqual(5);
      const ids = answer.citations.map((c) => c.source_id);
      expect(new Set(ids).size).toBe(ids.length);
    });

    it('case 2: insufficient context skips the LLM, confidence low, model null, snippets as citations', async () => {
      const { res, body } = await post('/api/rag/answer', {
        query_text: 'Which volcano erupted on the moon of Jupiter in 1979?',
      });
      expect(res.status).toBe(200);
      const answer = body as unknown as AnswerBody;
      expect(answer.status).toBe('insufficient_context');
      expect(answer.answer).toMatchObject({
        text: INSUFFICIENT_CONTEXT_TEXT,
        confidence: 'low',
        model: null,
      });
      expect(answer.answer.text).toMatch(/^I don't have enough relevant information/);
      expect(answer.answer.generated_at).toMatch(ISO);
      expect(answer.citations.length).toBeLessThanOrEqual(5);
      expect(answer.context_used.avg_relevance).toBeLessThan(answer.confidence_thresholds.medium);
      expect(fake.requests).toHaveLength(0);
    });

    it('answers 400 for an invalid query_text or top_k, 401 without a JWT', async () => {
      for (const request of [
        { query_text: '' },
        { query_text: 'x'.repeat(501) },
        { query_text: 'a', top_k: 51 },
      ]) {
        const { res, body } = await post('/api/rag/answer', request);
        expect(res.status).toBe(400);
        expectErrorModel(body);
      }
      const { res } = await post('/api/rag/answer', { query_text: 'pricing' }, null);
      expect(res.status).toBe(401);
    });

    it('answers 503 when the LLM provider throttles, with the sources it retrieved', async () => {
      fake.setBehaviour({ kind: 'always-fail', status: 429 });
      const { res, body } = await post('/api/rag/answer', {
        query_text: 'Summarize customer feedback on our new feature',
        filters: { source_type: 'email' },
      });
      expect(res.status).toBe(503);
      expectErrorModel(body);
      expect((body as unknown as AnswerBody).citations.length).toBeGreaterThan(0);
    });

    it("answers 500 generation_failed when the LLM fails, the body's status keeping the seed's two values", async () => {
      fake.setBehaviour({ kind: 'always-fail', status: 500 });
      const { res, body } = await post('/api/rag/answer', {
        query_text: 'Summarize customer feedback on our new feature',
        filters: { source_type: 'email' },
      });
      expect(res.status).toBe(500);
      expect(body.error).toMatchObject({ code: 'generation_failed', retryable: true });
      const answer = body as unknown as AnswerBody & { flags: { fallback_to_generic: boolean } };
      // The seed names no error status: `status` says what the seed's rule says of the sources
      // (they supported an answer), the HTTP status and `error` that the model failed.
      expect(answer.status).toBe('success');
      expect(answer.flags.fallback_to_generic).toBe(true);
      expect(answer.citations.length).toBeGreaterThan(0);
    });

    it('answers 500, retryable, when the embedding model fails', async () => {
      // The answer pipeline embeds the question twice before it gives up (a retry of its own).
      embedder.failNext = 2;
      const { res, body } = await post('/api/rag/answer', { query_text: 'pricing' });
      embedder.failNext = 0;
      expect(res.status).toBe(500);
      expect((body.error as { retryable: boolean }).retryable).toBe(true);
    });
  });

  describe('rate limiting and CORS', () => {
    it('answers 429 after 60 requests a minute, with the X-RateLimit-* headers', async () => {
      const limited = api.issuer.issueToken({ sub: 'rate-test', tenantId: 'acme' });
      // The window is a calendar minute: a run that crosses into the next one needs more calls.
      let last: Response | undefined;
      let lastBody: Record<string, unknown> = {};
      for (let i = 0; i < 125; i++) {
        ({ res: last, body: lastBody } = await post(
          '/api/rag/search',
          { query_text: 'pricing', top_k: 1 },
          limited,
        ));
        if (i === 0) expect(last.headers.get('x-ratelimit-remaining')).toBe('59');
        if (last.status !== 200) break;
      }
      expect(last!.status).toBe(429);
      expectErrorModel(lastBody);
      expect(last!.headers.get('x-ratelimit-limit')).toBe('60');
      expect(last!.headers.get('x-ratelimit-remaining')).toBe('0');
      const reset = Number(last!.headers.get('x-ratelimit-reset'));
      expect(reset).toBeGreaterThan(Date.now() / 1000 - 1);
      expect(reset).toBeLessThan(Date.now() / 1000 + 120);
    });

    it('answers preflight from any origin with the seed headers, and every response with *', async () => {
      for (const path of ['/api/rag/search', '/api/rag/answer']) {
        const preflight = await fetch(`${api.server.url}${path}`, {
          method: 'OPTIONS',
          headers: {
            origin: 'https://app.example.com',
            'access-control-request-method': 'POST',
            'access-control-request-headers': 'authorization, x-client-info, apikey, content-type',
          },
        });
        expect(preflight.status).toBe(204);
        expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
        expect(preflight.headers.get('access-control-allow-methods')).toContain('POST');
        const allowed = preflight.headers.get('access-control-allow-headers')!.split(/,\s*/);
        expect(allowed).toEqual(
          expect.arrayContaining(['authorization', 'x-client-info', 'apikey', 'content-type']),
        );
      }
      const res = await fetch(`${api.server.url}/api/rag/search`, {
        method: 'POST',
        headers: {
          origin: 'https://app.example.com',
          'content-type': 'application/json',
          authorization: `Bearer ${token}`,
        },
        body: JSON.stringify({ query_text: 'pricing' }),
      });
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
    });
  });
});
