/**
 * Seed 003's contract, called over HTTP as its client would: POST
 * /api/chat/conversations/:conversationId/messages with `{ "content" }`, answered with the
 * seed's Server-Sent Events (`data: {"type":"chunk","text":...}`, then
 * `data: {"type":"complete","messageId":...}`), memory of the caller's similar past messages on
 * by default (5 messages, 2,000 tokens), greetings answered without retrieval or memory, and the
 * chat continuing when retrieval fails. Through the local server, the real rag-answer handlers,
 * PGlite, documents indexed through the S3 emulator and an OpenAI-compatible fake LLM.
 */
import { createHash, randomUUID } from 'node:crypto';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { Context } from 'aws-lambda';
import { createOpenAiCompatibleLlm } from '../../lambdas/adapters/llm/openai-compatible';
import { createPromptRepository } from '../../lambdas/adapters/postgres/conversation-repository';
import { createTokenCounter } from '../../lambdas/adapters/tokenizer/gpt-token-counter';
import { createAnswering } from '../../lambdas/core/answer/answer';
import type { ConversationStore } from '../../lambdas/core/answer/conversations';
import type { LlmProvider } from '../../lambdas/core/answer/llm';
import type { Search } from '../../lambdas/core/retrieval/search';
import { localRoutes, startLocalApi, type LocalApi } from '../../local/api';
import { buildApiEvent } from '../../lambdas/http/api-event';
import { startLocalStack, type LocalStack } from '../../local/stack';
import { startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai';
import { createHashEmbedder } from '../support/hash-embedder';

process.env.POWERTOOLS_METRICS_DISABLED = 'true';

// Calibrated for this fixture and the hash embedder, as in answer-api.test.ts.
const CALIBRATION = { 'test/hash-512': { cosineWeight: 0.5, high: 0.3, medium: 0.12 } };
const PATH = (id: string) => `/api/chat/conversations/${id}/messages`;
const ANSWER =
  'Semantic search works by comparing embeddings of the question and the passages [1].';

type ChatEvent =
  | { type: 'chunk'; text: string }
  | { type: 'complete'; messageId: string }
  | { type: 'error'; error: { code: string; message: string; retryable: boolean } };

/** The seed's event stream: `data: <json>` events separated by a blank line, nothing else. */
function parseEvents(body: string): ChatEvent[] {
  expect(body).toMatch(/^(data: [^\n]+\n\n)+$/);
  return body
    .split('\n\n')
    .filter(Boolean)
    .map((e) => JSON.parse(e.slice('data: '.length)) as ChatEvent);
}

/** Checks the shape every successful stream has and returns the text and the message id. */
function completed(events: ChatEvent[]): { text: string; messageId: string } {
  const last = events[events.length - 1];
  expect(last).toEqual({ type: 'complete', messageId: expect.any(String) });
  const chunks = events.slice(0, -1);
  expect(chunks.length).toBeGreaterThan(0);
  for (const c of chunks) {
    expect(Object.keys(c).sort()).toEqual(['text', 'type']);
    expect(c).toEqual({ type: 'chunk', text: expect.any(String) });
  }
  expect(Object.keys(last!).sort()).toEqual(['messageId', 'type']);
  return {
    text: chunks.map((c) => (c as { text: string }).text).join(''),
    messageId: (last as { messageId: string }).messageId,
  };
}

describe('seed 003: POST /api/chat/conversations/:conversationId/messages', () => {
  let stack: LocalStack;
  let api: LocalApi;
  let instrumented: LocalApi;
  let fake: FakeOpenAi;
  let llm: LlmProvider;
  let alice: string;
  let bob: string;
  /** Alice's token for the instrumented server (each server has its own issuer). */
  let aliceThere: string;
  const faults = { search: false, llmCrash: false };
  const calls = { search: 0, memory: 0 };

  beforeAll(async () => {
    fake = await startFakeOpenAi();
    llm = createOpenAiCompatibleLlm({
      baseUrl: fake.url,
      model: 'test-model',
      maxRetries: 1,
      retryDelayMs: 1,
    });
    stack = await startLocalStack({
      embedder: createHashEmbedder(),
      llm,
      logLevel: 'SILENT',
      answer: { calibrationByModel: CALIBRATION },
    });
    api = await startLocalApi(stack);
    alice = api.issuer.issueToken({ sub: 'alice', tenantId: 'acme' });
    bob = api.issuer.issueToken({ sub: 'bob', tenantId: 'acme' });
    const put = (key: string, body: string) =>
      stack.s3.client.send(new PutObjectCommand({ Bucket: stack.s3.bucket, Key: key, Body: body }));
    await put(
      'tenants/acme/semantic-search.md',
      '# Semantic search\n\nSemantic search works by comparing the embeddings of the question and of each passage; the passages closest in meaning rank first.',
    );
    await put(
      'tenants/acme/shipping.md',
      '# Shipping\n\nExpress shipping takes two business days. Standard shipping takes five business days.',
    );
    await put(
      'tenants/acme/refunds.md',
      '# Refunds\n\nRefunds take fourteen days to reach the customer account.',
    );
    await stack.queue.idle();

    // The same use case over ports that count calls and fail on demand.
    const search: Search = {
      ...stack.search,
      searchWithEmbedding: async (...args) => {
        calls.search += 1;
        if (faults.search) throw new Error('database down (injected)');
        return stack.search.searchWithEmbedding(...args);
      },
    };
    const conversations: ConversationStore = {
      ...stack.conversations,
      similarMessages: async (...args) => {
        calls.memory += 1;
        return stack.conversations.similarMessages(...args);
      },
    };
    const crashing: LlmProvider = {
      ...llm,
      modelId: llm.modelId,
      generate: (req) => llm.generate(req),
      async *stream(req) {
        for await (const ev of llm.stream(req)) {
          yield ev;
          if (faults.llmCrash && ev.type === 'delta') throw new Error('provider bug (injected)');
        }
      },
    };
    instrumented = await startLocalApi(stack, {
      answering: createAnswering({
        search,
        embedder: stack.embedder,
        tokens: createTokenCounter(),
        conversations,
        prompts: createPromptRepository(stack.db),
        llm: crashing,
        settings: { calibrationByModel: CALIBRATION },
      }),
    });
  });
  beforeAll(() => {
    aliceThere = instrumented.issuer.issueToken({ sub: 'alice', tenantId: 'acme' });
  });
  afterAll(async () => {
    await instrumented?.close();
    await api?.close();
    await stack?.stop();
    await fake?.close();
  });
  beforeEach(() => {
    fake.reset();
    fake.setAnswer({ text: ANSWER });
    faults.search = false;
    faults.llmCrash = false;
    calls.search = 0;
    calls.memory = 0;
  });

  /** The seed's request: `POST ... Content-Type: application/json {"content": ...}`. */
  const send = (
    conversationId: string,
    body: unknown,
    token: string | null = alice,
    server: LocalApi = api,
  ) =>
    fetch(`${server.server.url}${PATH(conversationId)}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const thread = async (id: string, token = alice) => {
    const res = await fetch(`${api.server.url}/api/threads/${id}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    return {
      status: res.status,
      body: (await res.json()) as {
        thread_id: string;
        messages: {
          message_id: string;
          role: string;
          content: string;
          flags?: Record<string, boolean>;
        }[];
      },
    };
  };
  /** The thread id a conversation id of a client's own reaches (a version 5 UUID). */
  const derivedThread = (tenantId: string, userId: string, conversationId: string) => {
    const hash = createHash('sha1')
      .update(`groundwork-conversation\n${tenantId}\n${userId}\n${conversationId}`)
      .digest();
    hash[6] = (hash[6]! & 0x0f) | 0x50;
    hash[8] = (hash[8]! & 0x3f) | 0x80;
    const hex = hash.subarray(0, 16).toString('hex');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  };
  /** The prompt the LLM was sent last, every message's text joined. */
  const lastPrompt = () => {
    const body = fake.requests[fake.requests.length - 1]?.body as {
      messages: { content: string }[];
    };
    return body.messages.map((m) => m.content).join('\n');
  };

  it('streams chunk events and one complete event for the seed example, in a conversation created on first use', async () => {
    const conversationId = randomUUID();
    const res = await send(conversationId, { content: 'How does semantic search work?' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const body = await res.text();
    expect(body).not.toMatch(/^event:/m);
    const events = parseEvents(body);
    expect(events.filter((e) => e.type === 'chunk').length).toBeGreaterThan(1);
    const { text, messageId } = completed(events);
    expect(text).toBe(ANSWER);

    // The conversation is a thread: the question, then the answer the complete event names.
    const stored = await thread(conversationId);
    expect(stored.status).toBe(200);
    expect(stored.body.thread_id).toBe(conversationId);
    expect(stored.body.messages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'How does semantic search work?'],
      ['assistant', ANSWER],
    ]);
    expect(stored.body.messages[1]!.message_id).toBe(messageId);
  });

  it("takes the seed's own conversation id (abc-123): one thread per caller, continued by the same id", async () => {
    const first = parseEvents(
      await (await send('abc-123', { content: 'How does semantic search work?' })).text(),
    );
    const firstId = completed(first).messageId;
    const second = parseEvents(
      await (await send('abc-123', { content: 'And what about ranking?' })).text(),
    );
    expect(completed(second).messageId).not.toBe(firstId);
    const list = await fetch(`${api.server.url}/api/threads`, {
      headers: { authorization: `Bearer ${alice}` },
    });
    const { threads } = (await list.json()) as { threads: { thread_id: string }[] };
    const owned = await Promise.all(threads.map((t) => thread(t.thread_id)));
    const withBoth = owned.filter((t) => t.body.messages.some((m) => m.message_id === firstId));
    expect(withBoth).toHaveLength(1);
    expect(withBoth[0]!.body.messages.map((m) => m.content)).toEqual(
      expect.arrayContaining(['How does semantic search work?', 'And what about ranking?']),
    );
    // Another user's abc-123 is another thread: nothing of alice's conversation in it.
    const theirs = parseEvents(
      await (await send('abc-123', { content: 'How does semantic search work?' }, bob)).text(),
    );
    expect(completed(theirs).messageId).not.toBe(firstId);
    expect(lastPrompt()).not.toContain('And what about ranking?');
  });

  it("lets nobody claim another user's conversation id first: its derived thread id, sent as a UUID, opens the sender's own thread", async () => {
    // Anyone can derive the thread id of victor's `order-77` (a version 5 UUID of his tenant,
    // user and id); mallory, of another tenant, sends to it before victor ever does.
    const derived = derivedThread('acme', 'victor', 'order-77');
    const mallory = api.issuer.issueToken({ sub: 'mallory', tenantId: 'other' });
    const victor = api.issuer.issueToken({ sub: 'victor', tenantId: 'acme' });
    const claimed = await send(derived, { content: 'Claiming this conversation first' }, mallory);
    expect(claimed.status).toBe(200);
    await claimed.text();
    expect((await thread(derived, mallory)).status).toBe(404);

    const own = await send('order-77', { content: 'How does semantic search work?' }, victor);
    expect(own.status).toBe(200);
    const ownAnswer = completed(parseEvents(await own.text())).messageId;
    const stored = await thread(derived, victor);
    expect(stored.status).toBe(200);
    expect(stored.body.messages.map((m) => m.content)).toEqual([
      'How does semantic search work?',
      ANSWER,
    ]);
    expect(stored.body.messages[1]!.message_id).toBe(ownAnswer);
    // His thread's id in the path continues the same thread.
    await (await send(derived, { content: 'And what about ranking?' }, victor)).text();
    expect((await thread(derived, victor)).body.messages).toHaveLength(4);
  });

  it('continues an existing conversation with its history', async () => {
    const conversationId = randomUUID();
    completed(
      parseEvents(
        await (await send(conversationId, { content: 'How does semantic search work?' })).text(),
      ),
    );
    fake.setAnswer({ text: 'Passages closest in meaning rank first [1].' });
    const res = await send(conversationId, {
      content: 'And which semantic search passages rank first?',
    });
    expect(res.status).toBe(200);
    expect(completed(parseEvents(await res.text())).text).toBe(
      'Passages closest in meaning rank first [1].',
    );
    expect(lastPrompt()).toContain(ANSWER);
    expect((await thread(conversationId)).body.messages).toHaveLength(4);
  });

  it("opens the caller's own thread for another user's conversation UUID, and leaves that one untouched", async () => {
    const conversationId = randomUUID();
    await (await send(conversationId, { content: 'How does semantic search work?' })).text();
    // Quinn's message neither fails nor confirms that the UUID is someone's thread: it starts his own.
    const quinn = api.issuer.issueToken({ sub: 'quinn', tenantId: 'other' });
    const res = await send(conversationId, { content: 'How do refunds work?' }, quinn);
    expect(res.status).toBe(200);
    await res.text();
    expect((await thread(conversationId)).body.messages).toHaveLength(2);
    expect((await thread(conversationId, quinn)).status).toBe(404);
    const quinns = derivedThread('other', 'quinn', conversationId);
    expect((await thread(quinns, quinn)).body.messages[0]!.content).toBe('How do refunds work?');
    // The same UUID keeps reaching his thread.
    await (await send(conversationId, { content: 'And how long do they take?' }, quinn)).text();
    expect((await thread(quinns, quinn)).body.messages).toHaveLength(4);
    expect((await thread(conversationId)).body.messages).toHaveLength(2);
  });

  it('lets clients of every tenant use the same fixed conversation id', async () => {
    const nil = '00000000-0000-0000-0000-000000000000';
    const ruth = api.issuer.issueToken({ sub: 'ruth', tenantId: 'acme' });
    const sol = api.issuer.issueToken({ sub: 'sol', tenantId: 'other' });
    for (const token of [ruth, sol]) {
      const res = await send(nil, { content: 'How do refunds work?' }, token);
      expect(res.status).toBe(200);
      await res.text();
    }
    expect((await thread(nil, ruth)).body.messages).toHaveLength(2);
    expect((await thread(derivedThread('other', 'sol', nil), sol)).body.messages).toHaveLength(2);
  });

  it("recalls the caller's own similar past messages by default, never another user's", async () => {
    const mine =
      'Our semantic search ranking memo says ranking uses cosine similarity of embeddings.';
    const theirs = 'Bob private note: semantic search ranking budget is secret.';
    await (await send(randomUUID(), { content: mine })).text();
    await (await send(randomUUID(), { content: theirs }, bob)).text();
    await (await send(randomUUID(), { content: 'How does semantic search ranking work?' })).text();
    const prompt = lastPrompt();
    expect(prompt).toContain('<memory>');
    expect(prompt).toContain(mine);
    expect(prompt).not.toContain(theirs);
  });

  it('recalls at most 5 past messages', async () => {
    const carol = api.issuer.issueToken({ sub: 'carol', tenantId: 'acme' });
    for (let i = 1; i <= 7; i += 1)
      await (
        await send(
          randomUUID(),
          { content: `Semantic search question number ${i} about ranking?` },
          carol,
        )
      ).text();
    await (
      await send(randomUUID(), { content: 'Semantic search question about ranking?' }, carol)
    ).text();
    const memory = /<memory>\n([\s\S]*?)\n<\/memory>/.exec(lastPrompt())?.[1] ?? '';
    expect(memory.split('\n').filter((l) => l.startsWith('- '))).toHaveLength(5);
  });

  it('spends up to 2,000 tokens of memory: a 1,500-token message is recalled, a 2,100-token one is not', async () => {
    const tokens = createTokenCounter();
    const long = (words: number) =>
      `Semantic search ranking notes: ${Array.from({ length: words }, (_, i) => `w${i % 97}`).join(' ')}`;
    const fits = long(700);
    const tooLong = long(1000);
    const fitsTokens = tokens.count(fits);
    const tooLongTokens = tokens.count(tooLong);
    expect(fitsTokens).toBeGreaterThan(1000); // more than POST /answer's default budget
    expect(fitsTokens).toBeLessThanOrEqual(2000);
    expect(tooLongTokens).toBeGreaterThan(2000);
    expect(tooLong.length).toBeLessThanOrEqual(10_000);

    const dave = api.issuer.issueToken({ sub: 'dave', tenantId: 'acme' });
    await (await send(randomUUID(), { content: fits }, dave)).text();
    await (
      await send(randomUUID(), { content: 'How does semantic search ranking work?' }, dave)
    ).text();
    expect(lastPrompt()).toContain(fits);

    const erin = api.issuer.issueToken({ sub: 'erin', tenantId: 'acme' });
    await (await send(randomUUID(), { content: tooLong }, erin)).text();
    await (
      await send(randomUUID(), { content: 'How does semantic search ranking work?' }, erin)
    ).text();
    expect(lastPrompt()).not.toContain('<memory>');
  });

  it('answers a greeting without retrieval, memory or the LLM', async () => {
    for (const greeting of ['hi', 'hello', 'Hey there!', 'good morning']) {
      const res = await send(randomUUID(), { content: greeting }, aliceThere, instrumented);
      expect(res.status).toBe(200);
      const { text } = completed(parseEvents(await res.text()));
      expect(text).toMatch(/^Hello!/);
    }
    expect(calls).toEqual({ search: 0, memory: 0 });
    expect(fake.requests).toHaveLength(0);
  });

  it('still streams an answer when retrieval fails at the search port, flagged on the stored message', async () => {
    faults.search = true;
    const conversationId = randomUUID();
    const res = await send(
      conversationId,
      { content: 'How does semantic search work?' },
      aliceThere,
      instrumented,
    );
    expect(res.status).toBe(200);
    const { text, messageId } = completed(parseEvents(await res.text()));
    expect(text).toBe(ANSWER);
    expect(calls.search).toBe(1);
    expect(calls.memory).toBe(1);
    const answer = (await thread(conversationId)).body.messages[1]!;
    expect(answer.message_id).toBe(messageId);
    expect(answer.flags).toMatchObject({ retrieval_failed: true, used_rag: false });
  });

  it('reports a failure after the first event as an error event', async () => {
    faults.llmCrash = true;
    const res = await send(
      randomUUID(),
      { content: 'How does semantic search work?' },
      aliceThere,
      instrumented,
    );
    expect(res.status).toBe(200);
    const events = parseEvents(await res.text());
    expect(events[0]).toEqual({ type: 'chunk', text: expect.any(String) });
    expect(events[events.length - 1]).toEqual({
      type: 'error',
      error: { code: 'internal_error', message: expect.any(String), retryable: false },
    });
    expect(events.some((e) => e.type === 'complete')).toBe(false);
  });

  it('refuses bad input with the error model and a 4xx, before any event', async () => {
    const id = randomUUID();
    const cases: [string, unknown, string, number, RegExp][] = [
      ['no content', {}, id, 422, /^content:/],
      ['empty content', { content: '   ' }, id, 422, /^content:/],
      ['content not a string', { content: 42 }, id, 422, /^content:/],
      ['content over 10,000 characters', { content: 'a'.repeat(10_001) }, id, 422, /^content:/],
      ['an unknown field', { content: 'hello there', model: 'x' }, id, 422, /model|body/],
      ['a body that is not JSON', '{"content":', id, 422, /JSON/],
      [
        'a conversation id with a space',
        { content: 'hello there' },
        'abc 123',
        422,
        /^conversationId/,
      ],
      [
        'a conversation id with a non-ASCII letter',
        { content: 'hello there' },
        'café-1',
        422,
        /^conversationId/,
      ],
      [
        'a conversation id that does not start with a letter or digit',
        { content: 'hello there' },
        '-abc',
        422,
        /^conversationId/,
      ],
      [
        'a conversation id of 129 characters',
        { content: 'hello there' },
        'a'.repeat(129),
        422,
        /^conversationId/,
      ],
    ];
    for (const [name, body, conversationId, status, message] of cases) {
      const res = await send(conversationId, body);
      expect({ name, status: res.status }).toEqual({ name, status });
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      const error = (await res.json()) as {
        error: { code: string; message: string; retryable: boolean };
      };
      expect(error).toMatchObject({
        error: {
          code: 'validation_error',
          message: expect.stringMatching(message),
          retryable: false,
        },
      });
    }
    const anonymous = await send(id, { content: 'hello there' }, null);
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toMatchObject({ error: { code: 'authentication_required' } });
    expect((await thread(id)).status).toBe(404);
  });

  it('returns the same events in one text/event-stream body where responses are buffered (a buffered Lambda result)', async () => {
    const route = localRoutes(stack).find(
      (r) => r.method === 'POST' && r.path === '/api/chat/conversations/{conversationId}/messages',
    )!;
    const event = (conversationId: string, sub: string) =>
      buildApiEvent({
        method: 'POST',
        resource: '/api/chat/conversations/{conversationId}/messages',
        path: PATH(conversationId),
        headers: { 'content-type': 'application/json' },
        pathParameters: { conversationId },
        body: JSON.stringify({ content: 'How does semantic search work?' }),
        claims: { sub, 'custom:tenant_id': 'acme' },
      });
    const context = { functionName: 'groundwork-rag-answer', awsRequestId: 'r1' } as Context;
    const conversationId = randomUUID();
    const result = await route.handler(event(conversationId, 'alice'), context);
    expect(result.statusCode).toBe(200);
    expect(result.headers?.['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(completed(parseEvents(result.body ?? '')).text).toBe(ANSWER);

    const invalid = await route.handler(event('not a conversation id', 'alice'), context);
    expect(invalid.statusCode).toBe(422);
    expect(JSON.parse(invalid.body ?? '')).toMatchObject({ error: { code: 'validation_error' } });
  });
});
