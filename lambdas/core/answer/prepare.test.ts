/**
 * The answer's preparation on its own (`Answering.prepare`, what the test harness shows) and as
 * the answer route uses it: the same chunks, context, evidence and prompt, with no thread, no
 * storage and no LLM call.
 */
import { ForbiddenError, UnavailableError } from '../errors';
import type { Embedder, TokenCounter } from '../ports';
import type { Search, SearchRequest, SearchResult } from '../retrieval/search';
import type { SearchHit } from '../retrieval/types';
import { createAnswering, type AnswerRequest, type PrepareRequest } from './answer';
import type { ConversationStore, PromptConfig, PromptStore } from './conversations';
import type { GenerationRequest, LlmProvider } from './llm';

const words: TokenCounter = { count: (t) => (t.trim() === '' ? 0 : t.trim().split(/\s+/).length) };

/** Vectors from the words of a text (hashed into 64 buckets), so related texts are close. */
const embedder: Embedder = {
  modelId: 'test/words-64',
  dimension: 64,
  async embed(texts) {
    return texts.map((t) => {
      const v = new Array<number>(64).fill(0);
      for (const w of t.toLowerCase().match(/[a-z]+/g) ?? [])
        v[[...w].reduce((h, c) => (h * 31 + c.charCodeAt(0)) % 64, 7)]! += 1;
      const n = Math.hypot(...v) || 1;
      return v.map((x) => x / n);
    });
  },
};

function hit(documentId: string, text: string, extra: Partial<SearchHit> = {}): SearchHit {
  return {
    chunkId: `${documentId}-c0`,
    documentId,
    chunkIndex: 0,
    text,
    score: 0.9,
    keywordScore: 2,
    keywordCoverage: 0.9,
    fusedScore: 1,
    sourceType: 'faq',
    title: `Title ${documentId}`,
    sourceUri: `s3://bucket/tenants/acme/${documentId}.md`,
    language: 'en',
    metadata: {},
    startOffset: 0,
    endOffset: text.length,
    ...extra,
  };
}

const HITS = [
  hit('refunds', 'Refunds take fourteen days to reach the customer account.'),
  hit('shipping', 'Express shipping takes two business days.', { score: 0.7, sourceType: 'doc' }),
];

const PROFILES: PromptConfig[] = [
  {
    id: 's',
    name: 'system',
    profile: '_system',
    version: 1,
    instructions: 'You are the Acme assistant.',
    constraints: {},
    active: true,
  },
  {
    id: 'g',
    name: 'general',
    profile: 'general',
    version: 1,
    instructions: 'Answer briefly.',
    constraints: {},
    active: true,
  },
  {
    id: 'f',
    name: 'faq only',
    profile: 'faq',
    version: 1,
    instructions: 'Answer from the FAQ.',
    constraints: { allowed_source_types: ['faq'], top_k: 3 },
    active: true,
  },
];
const prompts: PromptStore = { activeConfigs: async () => PROFILES };

/** A conversation store that records every call; the preparation must make none that write. */
function recordingConversations() {
  const calls: string[] = [];
  const record =
    (name: string, value: unknown = undefined) =>
    async () => {
      calls.push(name);
      return value as never;
    };
  const store: ConversationStore = {
    createThread: async () => {
      calls.push('createThread');
      return {
        id: 't1',
        title: '',
        status: 'active',
        createdAt: new Date(),
        updatedAt: new Date(),
        messageCount: 0,
        lastMessageAt: new Date(),
      };
    },
    getThread: record('getThread', null),
    openThread: record('openThread', null),
    listThreads: record('listThreads', []),
    deleteThread: record('deleteThread', false),
    messages: record('messages', []),
    addUserMessage: record('addUserMessage'),
    addAssistantMessage: record('addAssistantMessage'),
    similarMessages: record('similarMessages', []),
    setFeedback: record('setFeedback', false),
    trainingConsent: record('trainingConsent', false),
  };
  return { store, calls };
}

function fakeSearch(result: (request: SearchRequest) => Promise<SearchResult>) {
  const requests: SearchRequest[] = [];
  const search: Search = {
    settings: {} as Search['settings'],
    embedder,
    search: async () => {
      throw new Error('the answer pipeline searches with its own embedding');
    },
    searchWithEmbedding: async (_identity, request) => {
      requests.push(request);
      return result(request);
    },
    admit: async () => undefined,
  };
  return { search, requests };
}

function countingLlm() {
  const requests: GenerationRequest[] = [];
  const llm: LlmProvider = {
    modelId: 'test/llm',
    async generate(request) {
      requests.push(request);
      return { text: 'Refunds take fourteen days [1].', usage: null, stopReason: 'end' };
    },
    async *stream() {
      throw new Error('not streamed in these tests');
    },
  };
  return { llm, requests };
}

const identity = { tenantId: 'acme', userId: 'alice' };
const prepareRequest: PrepareRequest = {
  queryText: 'How long do refunds take?',
  filters: {},
  maxTokens: 500,
  temperature: 0.2,
};
const answerRequest: AnswerRequest = {
  ...prepareRequest,
  useMemory: false,
  memory: { limit: 5, tokenBudget: 2000 },
  debug: true,
};
// Calibrated so that HITS are `high` and a weak match is `low`.
const settings = {
  calibrationByModel: { 'test/words-64': { cosineWeight: 0.5, high: 0.5, medium: 0.3 } },
};
const applied = {
  mode: 'permissive' as const,
  allowed: null,
  effective: null,
  dropped: [],
};

describe('Answering.prepare', () => {
  it('returns the chunks, context blocks, evidence and prompt without storing or generating', async () => {
    const { store, calls } = recordingConversations();
    const { llm, requests: generations } = countingLlm();
    const { search } = fakeSearch(async () => ({
      hits: HITS,
      embedMs: 0,
      retrieveMs: 0,
      sourceTypes: applied,
    }));
    const answering = createAnswering({
      search,
      embedder,
      tokens: words,
      conversations: store,
      prompts,
      llm,
      settings,
    });

    const prepared = await answering.prepare(identity, prepareRequest);

    expect(calls).toEqual([]);
    expect(generations).toHaveLength(0);
    expect(prepared.hits.map((h) => h.chunkId)).toEqual(['refunds-c0', 'shipping-c0']);
    expect(prepared.blocks.map((b) => [b.index, b.documentId])).toEqual([
      [1, 'refunds'],
      [2, 'shipping'],
    ]);
    expect(prepared.evidence).toEqual([
      expect.objectContaining({
        marker: '[1]',
        chunkIds: ['refunds-c0'],
        citation: expect.objectContaining({
          source_id: 'refunds',
          source_type: 'faq',
          source_title: 'Title refunds',
          relevance_score: 0.9,
          snippet: HITS[0]!.text,
        }),
      }),
      expect.objectContaining({ marker: '[2]', chunkIds: ['shipping-c0'] }),
    ]);
    // Each evidence marker is the index its block carries in the prompt.
    for (const e of prepared.evidence)
      expect(prepared.prompt.system).toContain(
        `<document index="${e.marker.slice(1, -1)}" title="${e.citation.source_title}"`,
      );
    expect(prepared.prompt.system).toContain('You are the Acme assistant.');
    expect(prepared.prompt.messages).toEqual([
      { role: 'user', content: 'How long do refunds take?' },
    ]);
    expect(prepared.prompt.rendered).toContain('USER: How long do refunds take?');
    expect(prepared.profile.profile).toBe('general');
    expect(prepared.sourceTypes).toEqual(applied);
    expect(prepared.confidence).toBe('high');
    expect(prepared.next).toBe('generate');
    expect(prepared.steps.map((s) => s.name)).toEqual([
      'standalone_query',
      'retrieve',
      'context',
      'confidence',
    ]);
  });

  it('is the preparation the answer route generates from: same prompt, same context', async () => {
    const { store } = recordingConversations();
    const { llm, requests: generations } = countingLlm();
    const { search } = fakeSearch(async () => ({ hits: HITS, embedMs: 0, retrieveMs: 0 }));
    const answering = createAnswering({
      search,
      embedder,
      tokens: words,
      conversations: store,
      prompts,
      llm,
      settings,
    });

    const prepared = await answering.prepare(identity, prepareRequest);
    const answered = await answering.answer(identity, answerRequest);

    expect(generations).toHaveLength(1);
    expect(generations[0]!.system).toBe(prepared.prompt.system);
    expect(generations[0]!.messages).toEqual(prepared.prompt.messages);
    expect(answered.debug?.prompt).toBe(prepared.prompt.rendered);
    expect(answered.debug?.chunks).toEqual(prepared.hits);
    expect(answered.answer.confidence).toBe(prepared.confidence);
    expect(answered.citations[0]).toEqual({
      ...prepared.evidence[0]!.citation,
      sentences: answered.citations[0]!.sentences,
    });
  });

  it('says what generation would do: extract without an LLM, nothing below the gate, greetings apart', async () => {
    const { store } = recordingConversations();
    const strong = fakeSearch(async () => ({ hits: HITS, embedMs: 0, retrieveMs: 0 }));
    const weak = fakeSearch(async () => ({
      hits: [hit('weather', 'The river froze early that winter.', { score: 0.01 })],
      embedMs: 0,
      retrieveMs: 0,
    }));
    const deps = { embedder, tokens: words, conversations: store, prompts, settings };
    const extractive = createAnswering({ ...deps, search: strong.search, llm: null });
    expect((await extractive.prepare(identity, prepareRequest)).next).toBe('extract');
    const { llm, requests } = countingLlm();
    const gated = createAnswering({ ...deps, search: weak.search, llm });
    const low = await gated.prepare(identity, prepareRequest);
    expect([low.confidence, low.next]).toEqual(['low', 'insufficient_context']);
    const greeting = await gated.prepare(identity, { ...prepareRequest, queryText: 'hello' });
    expect(greeting.next).toBe('conversational');
    expect(requests).toHaveLength(0);
  });

  it("narrows retrieval to the profile's source types without touching the caller's filter", async () => {
    const { store } = recordingConversations();
    const { search, requests } = fakeSearch(async () => ({
      hits: HITS,
      embedMs: 0,
      retrieveMs: 0,
    }));
    const answering = createAnswering({
      search,
      embedder,
      tokens: words,
      conversations: store,
      prompts,
      llm: null,
      settings,
    });
    await answering.prepare(identity, {
      ...prepareRequest,
      profile: 'faq',
      filters: { source_type: ['faq', 'doc'] },
    });
    expect(requests[0]).toMatchObject({
      topK: 3,
      filters: { source_type: ['faq', 'doc'] },
      narrowSourceTypes: ['faq'],
    });
  });

  it("refuses what the tenant's policy refuses; a store that is down is a retrieval failure", async () => {
    const { store } = recordingConversations();
    const deps = { embedder, tokens: words, conversations: store, prompts, llm: null, settings };
    const refused = createAnswering({
      ...deps,
      search: fakeSearch(async () => {
        throw new ForbiddenError('filters.source_type: strict');
      }).search,
    });
    await expect(refused.prepare(identity, prepareRequest)).rejects.toBeInstanceOf(ForbiddenError);
    const down = createAnswering({
      ...deps,
      search: fakeSearch(async () => {
        throw new UnavailableError('down');
      }).search,
    });
    const prepared = await down.prepare(identity, prepareRequest);
    expect(prepared).toMatchObject({
      retrievalFailed: true,
      confidence: null,
      hits: [],
      blocks: [],
      next: 'extract',
    });
    expect(prepared.prompt.system).toContain('(no documents were found for this question)');
  });
});
