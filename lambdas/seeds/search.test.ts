import type { AnswerResult } from '../core/answer/answer';
import type { Admission } from '../core/limits/limiter';
import { quotaClass } from '../http/request-lifecycle';
import {
  agentStepsOf,
  countMatches,
  fileNameOf,
  parseSeedQuery,
  rateLimitOf,
  toRagObject,
} from './search';

const result = (overrides: Partial<AnswerResult> = {}): AnswerResult => ({
  status: 'success',
  queryText: 'how long do refunds take',
  threadId: 't1',
  messageId: 'm1',
  profile: 'general',
  answer: { text: 'Fourteen days [1].', confidence: 'high', model: 'm', generatedAt: 'x' },
  citations: [],
  contextUsed: { chunksRetrieved: 1, uniqueSources: 1, avgRelevance: 0.5 },
  usage: { inputTokens: 100, outputTokens: 7 },
  flags: {
    used_rag: true,
    fallback_to_generic: false,
    insufficient_context: false,
    conversational: false,
    retrieval_failed: false,
  },
  processingTimeMs: 12,
  thresholds: { high: 0.75, medium: 0.6 },
  llmFailure: null,
  debug: {
    prompt: 'SYSTEM: tenant secret rules',
    standaloneQuery: 'refunds duration',
    chunks: [],
    steps: [
      { name: 'thread', ms: 1, detail: { id: 't1' } },
      { name: 'standalone_query', ms: 1, detail: 'refunds duration' },
      { name: 'retrieve', ms: 3, detail: { hits: 4 } },
      {
        name: 'confidence',
        ms: 1,
        detail: { level: 'high', avgRelevance: 0.5, evidenceChunks: 2 },
      },
      { name: 'generate', ms: 5, detail: undefined },
      { name: 'store_answer', ms: 1, detail: undefined },
    ],
  },
  ...overrides,
});

describe('seed 004 search mapping', () => {
  it("maps tool steps to action + tool_result under the seed's tool names, decisions to thoughts, bookkeeping to logs only", () => {
    const steps = agentStepsOf(result());
    expect(steps.map((s) => `${s.type}:${s.tool ?? ''}`)).toEqual([
      'thought:',
      'action:semantic_search',
      'tool_result:semantic_search',
      'thought:',
      'action:generate_answer',
      'tool_result:generate_answer',
    ]);
    expect(steps[1]).toMatchObject({ tool_input: 'refunds duration' });
    expect(steps[2]).toMatchObject({ tool_output: 'Retrieved 4 chunks' });
    expect(steps[3]?.text).toMatch(/^Confidence high/);
  });

  it('withholds the rendered prompt from anyone but a tenant admin', () => {
    expect(toRagObject(result(), { isAdmin: false }, undefined).final_prompt).toBe('');
    expect(toRagObject(result(), { isAdmin: true }, undefined).final_prompt).toBe(
      'SYSTEM: tenant secret rules',
    );
  });

  it('names the model `none` when no model wrote the answer', () => {
    const gated = result({
      answer: { text: 'x', confidence: 'low', model: null, generatedAt: 'x' },
      usage: null,
    });
    expect(toRagObject(gated, { isAdmin: false }, undefined).model).toBe('none');
  });

  it('reports zeros when no LLM reported usage, and the sum otherwise', () => {
    expect(toRagObject(result({ usage: null }), { isAdmin: false }, undefined).token_usage).toEqual(
      { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
    );
    expect(toRagObject(result(), { isAdmin: false }, undefined).token_usage.total_tokens).toBe(107);
  });

  it('reports the quota after the request; null when unlimited or unknown', () => {
    const resetsAt = new Date('2026-12-01T00:00:00Z');
    const admission = (limit: number | null, used: number | null) =>
      ({ quotaUsage: { limit, used, resetsAt } }) as unknown as Admission;
    expect(rateLimitOf(admission(50, 3))).toEqual({
      limit: 50,
      remaining: 47,
      resetDate: '2026-12-01T00:00:00.000Z',
    });
    expect(rateLimitOf(admission(null, 3))).toMatchObject({ limit: null, remaining: null });
    expect(rateLimitOf(admission(50, null))).toMatchObject({ limit: 50, remaining: null });
    expect(rateLimitOf(undefined)).toBeNull();
  });

  it('refuses repeated and unknown parameters', () => {
    expect(() => parseSeedQuery({ q: ['a', 'b'] }, { q: 'a,b' })).toThrow(
      /q: given more than once/,
    );
    expect(() => parseSeedQuery({ q: ['a'], x: ['1'] }, { q: 'a', x: '1' })).toThrow(/x/);
    expect(parseSeedQuery({ q: ['a'], rag: ['true'] }, { q: ' a ', rag: 'true' })).toEqual({
      q: 'a',
      rag: 'true',
    });
  });

  it('names files and counts matches', () => {
    expect(fileNameOf('s3://b/tenants/acme/uploads/1/my%20notes.md')).toBe('my notes.md');
    expect(countMatches('Test query. TEST QUERY test', 'test query')).toBe(2);
    expect(countMatches('aaaa', 'aa')).toBe(2);
  });

  it('may draw on the answer quota only because the route table declares it', () => {
    expect(quotaClass('api-search')).toBe('search');
    expect(quotaClass('api-search', 'answer')).toBe('answer');
    expect(() => quotaClass('api-upload', 'answer')).toThrow(/otherQuotas/);
  });
});
