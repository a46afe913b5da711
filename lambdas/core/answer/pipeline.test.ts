/**
 * Every branch of the answer pipeline, one row each: the row's input (the corpus, the LLM, the
 * thread, which port is down, the request) and the tagged outcome it must come to, on in-memory
 * ports. The degraded branches are rows like any other.
 */
import { ForbiddenError, NotFoundError, UnavailableError, ValidationError } from '../errors';
import type { Embedder, Log, MetricsSink, TokenCounter } from '../ports';
import type { Search, SearchRequest } from '../retrieval/search';
import type { SearchHit } from '../retrieval/types';
import {
  createAnswerPipeline,
  INSUFFICIENT_CONTEXT_TEXT,
  type AnswerHooks,
  type AnswerRequest,
  type Answered,
} from './answer';
import type {
  AnswerFlags,
  ConversationStore,
  MessageRecord,
  NewAssistantMessage,
  Owner,
  PromptConfig,
  ThreadRecord,
} from './conversations';
import { LlmUnavailableError, type Generation, type GenerationRequest } from './llm';
import type { AnswerOutcome } from './outcome';

// ---------------------------------------------------------------------------------------------
// In-memory ports

const STOP = new Set(['the', 'and', 'what', 'how', 'does', 'for', 'are', 'about', 'take', 'long']);

/** The words a text is searched by: lower case, three letters or more, no stop words. */
function termsOf(text: string): string[] {
  return [...new Set(text.toLowerCase().match(/[a-z]{3,}/g) ?? [])].filter((w) => !STOP.has(w));
}

interface Doc {
  readonly id: string;
  readonly text: string;
}

const HANDBOOK: readonly Doc[] = [
  {
    id: 'refunds',
    text: 'Refunds reach the customer account fourteen days after the returned parcel arrives. Store credit is issued at once.',
  },
  {
    id: 'shipping',
    text: 'Express shipping delivers within two business days inside the country. Standard shipping needs five business days.',
  },
];

/** A search over documents in memory: a document matches by the share of the query's terms it holds. */
function memorySearch(docs: readonly Doc[], down: Error | null) {
  const requests: SearchRequest[] = [];
  const searchWithEmbedding: Search['searchWithEmbedding'] = async (_identity, request) => {
    requests.push(request);
    if (down) throw down;
    const query = termsOf(request.queryText);
    const hits: SearchHit[] = docs
      .map((doc) => {
        const words = new Set(termsOf(doc.text));
        const share = query.filter((w) => words.has(w)).length / Math.max(query.length, 1);
        return { doc, share };
      })
      .filter(({ share }) => share > 0)
      .sort((a, b) => b.share - a.share)
      .slice(0, request.topK)
      .map(({ doc, share }) => ({
        chunkId: `${doc.id}#0`,
        documentId: doc.id,
        chunkIndex: 0,
        text: doc.text,
        score: share,
        keywordScore: share,
        keywordCoverage: share,
        fusedScore: share,
        sourceType: 'handbook',
        title: doc.id,
        sourceUri: `memory://${doc.id}`,
        language: 'en',
        metadata: {},
        startOffset: 0,
        endOffset: doc.text.length,
      }));
    return { hits, embedMs: 0, retrieveMs: 0 };
  };
  const search: Search = {
    settings: {} as Search['settings'],
    embedder: memoryEmbedder(false),
    search: (identity, request) => searchWithEmbedding(identity, request, []),
    searchWithEmbedding,
    admit: async () => undefined,
  };
  return { search, requests };
}

/** Letter frequencies: a vector for any text, or a model that is down. */
function memoryEmbedder(down: boolean): Embedder {
  return {
    modelId: 'memory/letters',
    dimension: 26,
    async embed(texts) {
      if (down) throw new Error('embedding model down');
      return texts.map((t) => {
        const v = Array.from(
          { length: 26 },
          (_, i) => t.toLowerCase().split(String.fromCharCode(97 + i)).length - 1,
        );
        const norm = Math.hypot(...v) || 1;
        return v.map((x) => x / norm);
      });
    },
  };
}

type Failing = 'writes' | 'history' | 'memory';

/** Threads and messages in maps, each owner's own; `failing` parts throw. */
function memoryConversations(failing: readonly Failing[]) {
  const threads = new Map<string, { owner: string; record: ThreadRecord }>();
  const messages = new Map<string, MessageRecord[]>();
  const answers: NewAssistantMessage[] = [];
  const key = (o: Owner) => `${o.tenantId}/${o.userId}`;
  const fail = (part: Failing) => {
    if (failing.includes(part)) throw new Error(`conversation store: ${part} down`);
  };
  const newThread = (owner: Owner, id: string, title: string): ThreadRecord => {
    const at = new Date(0);
    const record: ThreadRecord = {
      id,
      title,
      status: 'active',
      createdAt: at,
      updatedAt: at,
      messageCount: 0,
      lastMessageAt: at,
    };
    threads.set(id, { owner: key(owner), record });
    messages.set(id, []);
    return record;
  };
  const own = (owner: Owner, id: string) => {
    const t = threads.get(id);
    return t && t.owner === key(owner) ? t.record : null;
  };
  const append = (threadId: string, role: 'user' | 'assistant', id: string, content: string) =>
    messages.get(threadId)?.push({
      id,
      threadId,
      role,
      content,
      createdAt: new Date(0),
      profile: null,
      confidence: null,
      avgRelevance: null,
      citations: [],
      modelId: null,
      inputTokens: null,
      outputTokens: null,
      latencyMs: null,
      flags: {},
      feedback: null,
    });
  const store: ConversationStore = {
    createThread: async (owner, title) => newThread(owner, `thread-${threads.size + 1}`, title),
    openThread: async (owner, id, title) =>
      threads.has(id) ? own(owner, id) : newThread(owner, id, title),
    getThread: async (owner, id) => own(owner, id),
    listThreads: async () => [],
    deleteThread: async () => null,
    messages: async (owner, id, limit) => {
      fail('history');
      return own(owner, id) ? (messages.get(id) ?? []).slice(-(limit ?? 0)) : [];
    },
    addUserMessage: async (_owner, threadId, m) => {
      fail('writes');
      append(threadId, 'user', m.id, m.content);
    },
    addAssistantMessage: async (_owner, threadId, m) => {
      fail('writes');
      answers.push(m);
      append(threadId, 'assistant', m.id, m.content);
    },
    similarMessages: async () => {
      fail('memory');
      return [];
    },
    setFeedback: async () => false,
    trainingConsent: async () => false,
  };
  /** A thread of `owner` holding `turns` (user, assistant, user, ...). */
  const seed = (owner: Owner, id: string, turns: readonly string[]) => {
    newThread(owner, id, turns[0] ?? '');
    turns.forEach((t, i) => append(id, i % 2 === 0 ? 'user' : 'assistant', `seeded-${i}`, t));
  };
  return { store, answers, seed };
}

/** What the LLM does when asked to answer (a follow-up's rewrite is answered by `rewrite`). */
type LlmScript =
  | { readonly answers: string }
  | { readonly fails: Error }
  | { readonly rewrite: string; readonly answers: string }
  /** Streams `sent`, then the caller leaves (its signal aborts) and the call stops. */
  | { readonly leavesAfter: string };

const REWRITE_PROMPT = /^Rewrite the last user question/;

function scriptedLlm(script: LlmScript, leave: () => void) {
  const asked: GenerationRequest[] = [];
  const respond = (request: GenerationRequest): Generation => {
    asked.push(request);
    if ('rewrite' in script && REWRITE_PROMPT.test(request.system))
      return { text: script.rewrite, usage: null, stopReason: 'end' };
    if ('fails' in script) throw script.fails;
    if ('leavesAfter' in script)
      return { text: script.leavesAfter, usage: null, stopReason: 'end' };
    return {
      text: script.answers,
      usage: { inputTokens: 40, outputTokens: 12 },
      stopReason: 'end',
    };
  };
  return {
    asked,
    llm: {
      modelId: 'memory/llm',
      generate: async (request: GenerationRequest) => respond(request),
      async *stream(request: GenerationRequest) {
        const { text, usage } = respond(request);
        if ('leavesAfter' in script) {
          yield { type: 'delta' as const, text };
          leave();
          throw new LlmUnavailableError('LLM call to memory/llm was aborted by the caller', false);
        }
        const half = Math.ceil(text.length / 2);
        yield { type: 'delta' as const, text: text.slice(0, half) };
        yield { type: 'delta' as const, text: text.slice(half) };
        yield { type: 'done' as const, usage, stopReason: 'end' };
      },
    },
  };
}

const PROFILES: PromptConfig[] = [
  {
    id: 'p1',
    name: 'general',
    profile: 'general',
    version: 1,
    instructions: 'Answer from the handbook.',
    constraints: {},
    active: true,
  },
];

const wordTokens: TokenCounter = { count: (t) => t.split(/\s+/).filter(Boolean).length };

// ---------------------------------------------------------------------------------------------
// The table

const alice: Owner = { tenantId: 'acme', userId: 'alice' };

interface Row {
  readonly name: string;
  readonly question: string;
  readonly docs?: readonly Doc[];
  /** Null: no LLM configured (the extractive answerer). */
  readonly llm: LlmScript | null;
  readonly searchDown?: Error;
  readonly embedderDown?: boolean;
  readonly failing?: readonly Failing[];
  /** Earlier turns of the thread the question is asked in. */
  readonly thread?: readonly string[];
  readonly request?: Partial<AnswerRequest>;
  /** The caller listens to the answer as it is written. */
  readonly streamed?: boolean;
  readonly expected:
    | {
        readonly kind: AnswerOutcome['kind'];
        readonly reason?: 'low_confidence' | 'nothing_to_quote';
        readonly status: 'success' | 'insufficient_context';
        /** The flags that are set; the others are not. */
        readonly flags: readonly (keyof AnswerFlags)[];
        readonly model: string | null;
      }
    | { readonly throws: new (...args: never[]) => Error; readonly message?: RegExp };
  /** Further effects the row is about. */
  readonly also?: (run: Run) => void;
}

interface Run {
  readonly answered: Answered;
  readonly searched: readonly SearchRequest[];
  readonly asked: readonly GenerationRequest[];
  readonly stored: readonly NewAssistantMessage[];
  readonly counted: readonly string[];
  readonly logged: readonly string[];
  readonly deltas: readonly string[];
}

const REFUNDS = 'How many days until refunds reach my account?';
const ANSWER = 'Refunds reach the account after fourteen days [1].';
/** The refunds question, to an LLM that answers it from the context. */
const ASKED = { question: REFUNDS, llm: { answers: ANSWER } } as const;
/** The refunds question, with no LLM configured. */
const ASKED_OFFLINE = { question: REFUNDS, llm: null } as const;

const rows: Row[] = [
  {
    name: 'a greeting is conversational: no retrieval, no LLM',
    question: 'hello there',
    llm: { answers: ANSWER },
    streamed: true,
    expected: { kind: 'conversational', status: 'success', flags: ['conversational'], model: null },
    also: ({ searched, asked, answered, deltas }) => {
      expect(searched).toHaveLength(0);
      expect(asked).toHaveLength(0);
      expect(deltas).toEqual([answered.result.answer.text]);
    },
  },
  {
    name: 'with greetings off, a greeting is retrieved for like any question',
    question: 'hello there',
    llm: { answers: ANSWER },
    request: { greetings: false },
    expected: {
      kind: 'refused',
      reason: 'low_confidence',
      status: 'insufficient_context',
      flags: ['used_rag', 'insufficient_context'],
      model: null,
    },
    also: ({ searched }) => expect(searched).toHaveLength(1),
  },
  {
    name: 'low confidence is refused without an LLM call, listing the closest passages',
    question: 'Do business travellers get lounge access at airports?',
    llm: { answers: ANSWER },
    expected: {
      kind: 'refused',
      reason: 'low_confidence',
      status: 'insufficient_context',
      flags: ['used_rag', 'insufficient_context'],
      model: null,
    },
    also: ({ asked, answered }) => {
      expect(asked).toHaveLength(0);
      expect(answered.result.answer.text).toBe(INSUFFICIENT_CONTEXT_TEXT);
      expect(answered.result.answer.confidence).toBe('low');
      expect(answered.result.citations.map((c) => c.source_id)).toEqual(['shipping']);
    },
  },
  {
    name: 'without an LLM the context is quoted',
    ...ASKED_OFFLINE,
    expected: { kind: 'extractive', status: 'success', flags: ['used_rag'], model: 'extractive' },
    also: ({ answered }) => {
      expect(answered.result.answer.text).toBe(
        'Refunds reach the customer account fourteen days after the returned parcel arrives. [1]',
      );
      expect(answered.result.citations.map((c) => c.source_id)).toEqual(['refunds']);
    },
  },
  {
    name: 'without an LLM and with no sentence to quote, the answer is the refusal',
    question: 'How many days until refunds?',
    docs: [{ id: 'terse', text: 'Refunds and days' }],
    llm: null,
    expected: {
      kind: 'refused',
      reason: 'nothing_to_quote',
      status: 'insufficient_context',
      flags: ['used_rag', 'insufficient_context'],
      model: 'extractive',
    },
    also: ({ answered }) => expect(answered.result.citations).toEqual([]),
  },
  {
    name: 'with an LLM the answer is generated from the context and cited',
    ...ASKED,
    expected: { kind: 'generated', status: 'success', flags: ['used_rag'], model: 'memory/llm' },
    also: ({ answered, asked }) => {
      expect(asked).toHaveLength(1);
      expect(asked[0]!.system).toContain('Refunds reach the customer account');
      expect(answered.result.usage).toEqual({ inputTokens: 40, outputTokens: 12 });
      expect(answered.result.citations.map((c) => c.source_id)).toEqual(['refunds']);
    },
  },
  {
    name: 'streamed, the generated answer reaches the caller piece by piece',
    ...ASKED,
    streamed: true,
    expected: { kind: 'generated', status: 'success', flags: ['used_rag'], model: 'memory/llm' },
    also: ({ deltas, answered }) => {
      expect(deltas).toHaveLength(2);
      expect(deltas.join('')).toBe(answered.result.answer.text);
    },
  },
  {
    name: 'an LLM that fails after its retries falls back to the retrieved sources',
    question: REFUNDS,
    llm: { fails: new LlmUnavailableError('unreachable', true) },
    expected: {
      kind: 'fallback',
      status: 'success',
      flags: ['used_rag', 'fallback_to_generic'],
      model: 'memory/llm',
    },
    also: ({ answered, counted }) => {
      expect(answered.result.llmFailure).toEqual({ throttled: false });
      expect(answered.result.answer.text).toMatch(/^The answer service is temporarily unavailable/);
      // Every passage the fallback lists is cited.
      expect(answered.result.citations.map((c) => c.source_id)).toEqual(['refunds', 'shipping']);
      expect(counted).toContain('LlmFailures');
    },
  },
  {
    name: 'an LLM that throttles falls back, saying it throttled',
    question: REFUNDS,
    llm: { fails: new LlmUnavailableError('rate exceeded', true, { throttled: true }) },
    expected: {
      kind: 'fallback',
      status: 'success',
      flags: ['used_rag', 'fallback_to_generic'],
      model: 'memory/llm',
    },
    also: ({ answered }) => expect(answered.result.llmFailure).toEqual({ throttled: true }),
  },
  {
    name: 'an LLM that times out mid-stream falls back, the sources streamed after what came',
    question: REFUNDS,
    llm: { fails: new LlmUnavailableError('timed out after 30000 ms', true) },
    streamed: true,
    expected: {
      kind: 'fallback',
      status: 'success',
      flags: ['used_rag', 'fallback_to_generic'],
      model: 'memory/llm',
    },
    also: ({ deltas, answered }) => expect(deltas).toEqual([`\n\n${answered.result.answer.text}`]),
  },
  {
    name: 'a caller that leaves mid-answer keeps what it was sent, and its tokens are counted, as no outage',
    question: REFUNDS,
    llm: { leavesAfter: 'Refunds are paid within' },
    streamed: true,
    expected: {
      kind: 'generated',
      status: 'success',
      flags: ['used_rag'],
      model: 'memory/llm',
    },
    also: ({ answered, counted, stored }) => {
      expect(answered.result.answer.text).toBe('Refunds are paid within');
      expect(stored.at(-1)?.content).toBe('Refunds are paid within');
      expect(answered.result.usage?.inputTokens).toBeGreaterThan(50);
      expect(answered.result.usage?.outputTokens).toBe(4);
      expect(answered.result.llmFailure).toBeNull();
      expect(counted).toContain('AnswersAbandoned');
      expect(counted).not.toContain('LlmFailures');
    },
  },
  {
    name: 'an LLM error that is not an outage is thrown, not hidden behind a fallback',
    question: REFUNDS,
    llm: { fails: new TypeError('a bug in the adapter') },
    expected: { throws: TypeError },
  },
  {
    name: 'retrieval down, policy degrade: the LLM answers without context',
    question: REFUNDS,
    llm: { answers: 'Refunds usually take two weeks.' },
    searchDown: new UnavailableError('search index down'),
    request: { onRetrievalFailure: 'degrade' },
    expected: {
      kind: 'generated',
      status: 'insufficient_context',
      flags: ['insufficient_context', 'retrieval_failed'],
      model: 'memory/llm',
    },
    also: ({ answered, asked, counted }) => {
      expect(answered.result.answer.confidence).toBeNull();
      expect(answered.result.citations).toEqual([]);
      expect(asked[0]!.system).toContain('(no documents were found for this question)');
      expect(counted).toContain('RetrievalFailures');
    },
  },
  {
    name: 'retrieval down, policy degrade, no LLM: nothing to quote',
    ...ASKED_OFFLINE,
    searchDown: new UnavailableError('search index down'),
    expected: {
      kind: 'refused',
      reason: 'nothing_to_quote',
      status: 'insufficient_context',
      flags: ['insufficient_context', 'retrieval_failed'],
      model: 'extractive',
    },
  },
  {
    name: 'retrieval down, policy fail: its error is thrown',
    ...ASKED,
    searchDown: new UnavailableError('search index down'),
    request: { onRetrievalFailure: 'fail' },
    expected: { throws: UnavailableError, message: /search index down/ },
  },
  {
    name: 'retrieval failing outside the error model, policy fail: a retryable 503',
    ...ASKED_OFFLINE,
    searchDown: new Error('socket hang up'),
    request: { onRetrievalFailure: 'fail' },
    expected: { throws: UnavailableError, message: /^Retrieval is unavailable/ },
  },
  {
    name: 'embedding model down, policy fail: a retryable 503 naming the model',
    ...ASKED,
    embedderDown: true,
    request: { onRetrievalFailure: 'fail' },
    expected: { throws: UnavailableError, message: /embedding model is unavailable/ },
  },
  {
    name: 'embedding model down, policy degrade: answered without context',
    question: REFUNDS,
    llm: { answers: 'Refunds usually take two weeks.' },
    embedderDown: true,
    expected: {
      kind: 'generated',
      status: 'insufficient_context',
      flags: ['insufficient_context', 'retrieval_failed'],
      model: 'memory/llm',
    },
    also: ({ searched, counted }) => {
      expect(searched).toHaveLength(0);
      expect(counted).toContain('EmbeddingErrors');
    },
  },
  {
    name: "a filter the tenant's policy refuses (403) is the caller's error under degrade",
    ...ASKED,
    searchDown: new ForbiddenError('filters.source_type: strict policy'),
    request: { onRetrievalFailure: 'degrade' },
    expected: { throws: ForbiddenError },
  },
  {
    name: "a ValidationError from retrieval is the caller's error under degrade",
    ...ASKED,
    searchDown: new ValidationError('filters.date_from: not a date'),
    expected: { throws: ValidationError },
  },
  {
    name: 'a follow-up is rewritten by the LLM before retrieval',
    question: 'and what about express parcels?',
    thread: ['How many days until refunds reach my account?', ANSWER],
    llm: {
      rewrite: 'How many business days does express shipping take?',
      answers: 'Two business days [1].',
    },
    expected: { kind: 'generated', status: 'success', flags: ['used_rag'], model: 'memory/llm' },
    also: ({ searched, stored, answered }) => {
      expect(searched[0]!.queryText).toBe('How many business days does express shipping take?');
      expect(stored[0]!.standaloneQuery).toBe('How many business days does express shipping take?');
      expect(answered.result.citations.map((c) => c.source_id)).toEqual(['shipping']);
    },
  },
  {
    name: "without an LLM a follow-up carries the previous question's terms",
    question: 'What about express shipping?',
    thread: ['How many days until refunds reach my account?', ANSWER],
    llm: null,
    expected: { kind: 'extractive', status: 'success', flags: ['used_rag'], model: 'extractive' },
    also: ({ searched }) =>
      expect(searched[0]!.queryText).toBe(
        'What about express shipping? (many days until refunds reach account)',
      ),
  },
  {
    name: 'a question in a thread that names its own subject is answered as asked',
    question: 'How many business days does express shipping take?',
    thread: ['How many days until refunds reach my account?', ANSWER],
    llm: { rewrite: 'not to be used', answers: 'Two business days [1].' },
    expected: { kind: 'generated', status: 'success', flags: ['used_rag'], model: 'memory/llm' },
    also: ({ searched, stored, asked }) => {
      expect(searched[0]!.queryText).toBe('How many business days does express shipping take?');
      expect(stored[0]!.standaloneQuery).toBeNull();
      expect(asked).toHaveLength(1);
      expect(asked[0]!.messages.map((m) => m.content)).toEqual([
        'How many days until refunds reach my account?',
        ANSWER,
        'How many business days does express shipping take?',
      ]);
    },
  },
  {
    name: 'a thread whose history cannot be read: the question is answered as asked',
    question: 'and what about express parcels?',
    thread: ['How many days until refunds reach my account?', ANSWER],
    failing: ['history'],
    llm: { rewrite: 'not to be used', answers: 'I do not know.' },
    expected: { kind: 'generated', status: 'success', flags: ['used_rag'], model: 'memory/llm' },
    also: ({ searched, logged }) => {
      expect(searched[0]!.queryText).toBe('and what about express parcels?');
      expect(logged).toContain('could not read thread history');
    },
  },
  {
    name: 'storage down: the question and the answer are not stored, the caller is answered',
    ...ASKED_OFFLINE,
    failing: ['writes'],
    request: { debug: true },
    expected: { kind: 'extractive', status: 'success', flags: ['used_rag'], model: 'extractive' },
    also: ({ answered, counted, stored }) => {
      expect(stored).toHaveLength(0);
      expect(counted.filter((c) => c === 'PersistErrors')).toHaveLength(2);
      const steps = answered.result.debug!.steps.map((s) => s.name);
      expect(steps).not.toContain('store_question');
      expect(steps).not.toContain('store_answer');
    },
  },
  {
    name: 'memory down: answered without memory',
    ...ASKED_OFFLINE,
    failing: ['memory'],
    request: { useMemory: true },
    expected: { kind: 'extractive', status: 'success', flags: ['used_rag'], model: 'extractive' },
    also: ({ counted }) => expect(counted).toContain('MemoryFailures'),
  },
  {
    name: 'a thread id no thread has is a 404',
    ...ASKED_OFFLINE,
    request: { threadId: '5b0d2a34-1111-4111-8111-000000000001' },
    expected: { throws: NotFoundError },
  },
  {
    name: 'a thread id no thread has opens it when the caller names its conversations',
    ...ASKED_OFFLINE,
    request: {
      threadId: '5b0d2a34-1111-4111-8111-000000000002',
      missingThread: { createAs: ['5b0d2a34-1111-4111-8111-000000000002'] },
    },
    expected: { kind: 'extractive', status: 'success', flags: ['used_rag'], model: 'extractive' },
    also: ({ answered }) =>
      expect(answered.result.threadId).toBe('5b0d2a34-1111-4111-8111-000000000002'),
  },
  {
    name: "a thread id that is not the caller's opens the thread it names instead, never its own id",
    ...ASKED_OFFLINE,
    request: {
      threadId: '5b0d2a34-1111-5111-8111-000000000003',
      missingThread: { createAs: ['5b0d2a34-1111-5111-8111-000000000004'] },
    },
    expected: { kind: 'extractive', status: 'success', flags: ['used_rag'], model: 'extractive' },
    also: ({ answered }) =>
      expect(answered.result.threadId).toBe('5b0d2a34-1111-5111-8111-000000000004'),
  },
];

const ALL_FLAGS: readonly (keyof AnswerFlags)[] = [
  'used_rag',
  'fallback_to_generic',
  'insufficient_context',
  'conversational',
  'retrieval_failed',
];

async function run(row: Row): Promise<Run> {
  const { search, requests } = memorySearch(row.docs ?? HANDBOOK, row.searchDown ?? null);
  const conversations = memoryConversations(row.failing ?? []);
  const leaving = new AbortController();
  const scripted = row.llm ? scriptedLlm(row.llm, () => leaving.abort()) : null;
  const counted: string[] = [];
  const logged: string[] = [];
  const metrics: MetricsSink = { count: (name) => counted.push(name), timing() {} };
  const log: Log = { debug() {}, info() {}, warn() {}, error: (message) => logged.push(message) };
  const pipeline = createAnswerPipeline({
    search,
    embedder: memoryEmbedder(row.embedderDown ?? false),
    tokens: wordTokens,
    conversations: conversations.store,
    prompts: { activeConfigs: async () => PROFILES },
    llm: scripted?.llm ?? null,
    // The gate on coverage alone: the in-memory search's share of the question's terms.
    settings: {
      calibrationByModel: { 'memory/letters': { cosineWeight: 0, high: 0.7, medium: 0.4 } },
    },
    log,
    metrics,
  });
  const threadId = row.thread ? 'earlier-thread' : undefined;
  if (row.thread) conversations.seed(alice, 'earlier-thread', row.thread);
  const deltas: string[] = [];
  const hooks: AnswerHooks = row.streamed
    ? { onDelta: (t) => deltas.push(t), signal: leaving.signal }
    : {};
  const answered = await pipeline.answer(
    alice,
    {
      queryText: row.question,
      filters: {},
      useMemory: false,
      memory: { limit: 3, tokenBudget: 200 },
      maxTokens: 300,
      temperature: 0,
      debug: false,
      ...(threadId ? { threadId } : {}),
      ...row.request,
    },
    hooks,
  );
  return {
    answered,
    searched: requests,
    asked: scripted?.asked ?? [],
    stored: conversations.answers,
    counted,
    logged,
    deltas,
  };
}

describe('the answer pipeline, branch by branch', () => {
  it.each(rows.map((r) => [r.name, r] as const))('%s', async (_name, row) => {
    const expected = row.expected;
    if ('throws' in expected) {
      const thrown = await run(row).then(
        () => null,
        (err: unknown) => err,
      );
      expect(thrown).toBeInstanceOf(expected.throws);
      if (expected.message) expect((thrown as Error).message).toMatch(expected.message);
      return;
    }
    const result = await run(row);
    const { outcome, result: answer } = result.answered;
    expect(outcome.kind).toBe(expected.kind);
    if (outcome.kind === 'refused') expect(outcome.reason).toBe(expected.reason);
    expect(answer.status).toBe(expected.status);
    expect(answer.answer.model).toBe(expected.model);
    expect(ALL_FLAGS.filter((f) => answer.flags[f])).toEqual(expected.flags);
    row.also?.(result);
  });
});
