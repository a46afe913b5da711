/**
 * The two remote LlmProviders end to end: Bedrock Converse through the real AWS SDK client
 * (signing, retries, event-stream decoding) against a local fake of the Bedrock Runtime API,
 * and the OpenAI-compatible adapter through the real fetch against a local chat completions
 * server.
 */
import type { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { createBedrockRuntimeClient } from '../../lambdas/adapters/embeddings/bedrock-runtime-client';
import { createBedrockLlm } from '../../lambdas/adapters/llm/bedrock-converse';
import {
  createOpenAiCompatibleLlm,
  readServerSentEvents,
  type OpenAiCompatibleLlmOptions,
} from '../../lambdas/adapters/llm/openai-compatible';
import {
  LlmUnavailableError,
  type GenerationEvent,
  type GenerationRequest,
} from '../../lambdas/core/answer/llm';
import { splitIntoDeltas, startFakeBedrock, type FakeBedrock } from '../support/fake-bedrock';
import { startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai';

const HAIKU = 'anthropic.claude-3-haiku-20240307-v1:0';

const REQUEST: GenerationRequest = {
  system: 'Answer only from the context. <context>Groundwork stores vectors.</context>',
  messages: [
    { role: 'user', content: 'What is Groundwork?' },
    { role: 'assistant', content: 'A RAG stack.' },
    { role: 'user', content: 'Where are vectors stored?' },
  ],
  maxTokens: 256,
  temperature: 0.2,
};

const ANSWER = 'Vectors live in PostgreSQL with pgvector [1].';

/** Everything a stream yielded before it ended, and what it threw, if anything. */
async function drain(
  stream: AsyncIterable<GenerationEvent>,
): Promise<{ events: GenerationEvent[]; error: unknown }> {
  const events: GenerationEvent[] = [];
  try {
    for await (const event of stream) events.push(event);
    return { events, error: undefined };
  } catch (error) {
    return { events, error };
  }
}

function deltas(events: readonly GenerationEvent[]): string[] {
  return events.flatMap((event) => (event.type === 'delta' ? [event.text] : []));
}

async function failureOf(promise: Promise<unknown>): Promise<LlmUnavailableError> {
  const error: unknown = await promise.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(LlmUnavailableError);
  return error as LlmUnavailableError;
}

describe('Bedrock Converse adapter', () => {
  let fake: FakeBedrock;
  const clients: BedrockRuntimeClient[] = [];

  /** A client from the production factory; `maxAttempts` kept small where tests exhaust it. */
  function client(maxAttempts?: number): BedrockRuntimeClient {
    const created = createBedrockRuntimeClient({
      region: 'us-east-1',
      endpoint: fake.url,
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
      ...(maxAttempts !== undefined ? { maxAttempts } : {}),
    });
    clients.push(created);
    return created;
  }

  function llm(options: { maxAttempts?: number; timeoutMs?: number } = {}) {
    return createBedrockLlm({
      client: client(options.maxAttempts),
      modelId: HAIKU,
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    });
  }

  const expectedBody = {
    system: [{ text: REQUEST.system }],
    messages: [
      { role: 'user', content: [{ text: 'What is Groundwork?' }] },
      { role: 'assistant', content: [{ text: 'A RAG stack.' }] },
      { role: 'user', content: [{ text: 'Where are vectors stored?' }] },
    ],
    inferenceConfig: { maxTokens: 256, temperature: 0.2 },
  };

  beforeAll(async () => {
    fake = await startFakeBedrock();
  });

  beforeEach(() => {
    fake.setAnswer({
      text: ANSWER,
      stopReason: 'end_turn',
      usage: { inputTokens: 31, outputTokens: 9 },
    });
  });

  afterEach(() => {
    fake.reset();
  });

  afterAll(async () => {
    for (const created of clients) created.destroy();
    await fake.close();
  });

  it('sends system, messages and inferenceConfig to /converse and parses text, usage and stopReason', async () => {
    const provider = llm();

    const generation = await provider.generate(REQUEST);

    expect(provider.modelId).toBe(`bedrock/${HAIKU}`);
    expect(generation).toEqual({
      text: ANSWER,
      usage: { inputTokens: 31, outputTokens: 9 },
      stopReason: 'end_turn',
    });
    expect(fake.requests).toHaveLength(1);
    const [sent] = fake.requests;
    expect(sent?.operation).toBe('converse');
    expect(sent?.path).toBe(`/model/${encodeURIComponent(HAIKU)}/converse`);
    expect(sent?.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=test\//);
    expect(sent?.body).toEqual(expectedBody);
  });

  it('streams the deltas in order from the decoded event stream, then done with usage', async () => {
    fake.setAnswer({
      text: ANSWER,
      stopReason: 'max_tokens',
      usage: { inputTokens: 31, outputTokens: 9 },
    });

    const { events, error } = await drain(llm().stream(REQUEST));

    expect(error).toBeUndefined();
    expect(deltas(events)).toEqual(splitIntoDeltas(ANSWER));
    expect(deltas(events).length).toBeGreaterThan(3);
    expect(deltas(events).join('')).toBe(ANSWER);
    expect(events.at(-1)).toEqual({
      type: 'done',
      usage: { inputTokens: 31, outputTokens: 9 },
      stopReason: 'max_tokens',
    });
    expect(events.filter((event) => event.type === 'done')).toHaveLength(1);
    expect(fake.requests.map((request) => request.operation)).toEqual(['converse-stream']);
    expect(fake.requests[0]?.body).toEqual(expectedBody);
  });

  it('leaves out an empty system prompt, which Bedrock would reject', async () => {
    await llm().generate({ ...REQUEST, system: '' });

    expect(fake.requests[0]?.body).not.toHaveProperty('system');
  });

  it('succeeds after two throttled attempts, retried by the client', async () => {
    fake.setBehaviour({ kind: 'throttle', times: 2 });

    const generation = await llm({ maxAttempts: 3 }).generate(REQUEST);

    expect(generation.text).toBe(ANSWER);
    expect(fake.requests).toHaveLength(3);
  });

  it('retries a stream throttled before it opens', async () => {
    fake.setBehaviour({ kind: 'throttle', times: 1 });

    const { events, error } = await drain(llm({ maxAttempts: 2 }).stream(REQUEST));

    expect(error).toBeUndefined();
    expect(deltas(events).join('')).toBe(ANSWER);
    expect(fake.requests).toHaveLength(2);
  });

  it('turns throttling that outlasts the retries into a retryable LlmUnavailableError', async () => {
    fake.setBehaviour({ kind: 'always-throttle' });
    const started = Date.now();

    const error = await failureOf(llm({ maxAttempts: 2 }).generate(REQUEST));

    expect(error.retryable).toBe(true);
    expect(error.message).toMatch(/throttling .* 2 attempts/);
    expect(fake.requests).toHaveLength(2);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('gives up at its deadline on a slow reply, with a retryable error', async () => {
    fake.setBehaviour({ kind: 'succeed' }, { latencyMs: 3000 });
    const provider = llm({ timeoutMs: 200 });
    const started = Date.now();

    const generateError = await failureOf(provider.generate(REQUEST));
    const { events, error: streamError } = await drain(provider.stream(REQUEST));

    expect(generateError.retryable).toBe(true);
    expect(generateError.message).toMatch(/timed out after 200 ms/);
    expect(events).toEqual([]);
    expect(streamError).toBeInstanceOf(LlmUnavailableError);
    expect((streamError as LlmUnavailableError).retryable).toBe(true);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('gives up at its deadline on a stream that stalls, after the deltas it got', async () => {
    fake.setBehaviour({ kind: 'stream-stall', afterDeltas: 2 });

    // Long enough for the connection and the first deltas even on a loaded machine.
    const { events, error } = await drain(llm({ timeoutMs: 1000 }).stream(REQUEST));

    expect(deltas(events)).toEqual(splitIntoDeltas(ANSWER).slice(0, 2));
    expect(error).toBeInstanceOf(LlmUnavailableError);
    expect((error as Error).message).toMatch(/timed out after 1000 ms/);
  });

  it.each(['missing-output', 'not-json'] as const)(
    'rejects a %s Converse reply with an LlmUnavailableError',
    async (reply) => {
      fake.setBehaviour({ kind: 'malformed', reply });

      const error = await failureOf(llm().generate(REQUEST));

      expect(error.message).toMatch(/malformed|not valid JSON/);
      expect(fake.requests).toHaveLength(1);
    },
  );

  it.each(['missing-output', 'not-json'] as const)(
    'rejects a %s ConverseStream reply with an LlmUnavailableError',
    async (reply) => {
      fake.setBehaviour({ kind: 'malformed', reply });

      const { events, error } = await drain(llm().stream(REQUEST));

      expect(error).toBeInstanceOf(LlmUnavailableError);
      expect(events.some((event) => event.type === 'done')).toBe(false);
    },
  );

  it.each(['modelStreamErrorException', 'throttlingException', 'internalServerException'])(
    'yields the 2 deltas before a mid-stream %s, then throws a retryable LlmUnavailableError',
    async (exceptionType) => {
      fake.setBehaviour({ kind: 'stream-exception', afterDeltas: 2, exceptionType });

      const { events, error } = await drain(llm().stream(REQUEST));

      expect(events).toEqual(
        splitIntoDeltas(ANSWER)
          .slice(0, 2)
          .map((text) => ({ type: 'delta', text })),
      );
      expect(error).toBeInstanceOf(LlmUnavailableError);
      expect((error as LlmUnavailableError).retryable).toBe(true);
      // A stream that has started is never replayed.
      expect(fake.requests).toHaveLength(1);
    },
  );

  it('yields the 2 deltas before the socket closes mid-stream, then throws LlmUnavailableError', async () => {
    fake.setBehaviour({ kind: 'stream-close-socket', afterDeltas: 2 });

    const { events, error } = await drain(llm().stream(REQUEST));

    expect(deltas(events)).toEqual(splitIntoDeltas(ANSWER).slice(0, 2));
    expect(events.some((event) => event.type === 'done')).toBe(false);
    expect(error).toBeInstanceOf(LlmUnavailableError);
    expect((error as LlmUnavailableError).retryable).toBe(true);
  });

  it('lets the consumer stop after the first delta without an error', async () => {
    const provider = llm();
    const seen: GenerationEvent[] = [];

    for await (const event of provider.stream(REQUEST)) {
      seen.push(event);
      break;
    }
    const again = await provider.generate(REQUEST);

    expect(seen).toEqual([{ type: 'delta', text: splitIntoDeltas(ANSWER)[0] }]);
    expect(again.text).toBe(ANSWER);
  });

  it.each([
    [400, 'ValidationException'],
    [403, 'AccessDeniedException'],
  ])('turns HTTP %i %s into a non-retryable LlmUnavailableError', async (status, errorType) => {
    fake.setBehaviour({ kind: 'error', status, errorType, message: 'refused by the fake' });

    const error = await failureOf(llm().generate(REQUEST));

    expect(error.retryable).toBe(false);
    expect(error.message).toContain(errorType);
    expect(fake.requests).toHaveLength(1);
  });

  it('stops when the caller aborts, with a non-retryable error', async () => {
    fake.setBehaviour({ kind: 'succeed' }, { latencyMs: 3000 });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);

    const error = await failureOf(llm().generate({ ...REQUEST, signal: controller.signal }));

    expect(error.retryable).toBe(false);
    expect(error.message).toMatch(/aborted by the caller/);
  });
});

describe('OpenAI-compatible adapter', () => {
  let fake: FakeOpenAi;

  function llm(options: Partial<OpenAiCompatibleLlmOptions> = {}) {
    return createOpenAiCompatibleLlm({
      baseUrl: fake.url,
      model: 'llama3.1',
      retryDelayMs: 1,
      ...options,
    });
  }

  const expectedMessages = [
    { role: 'system', content: REQUEST.system },
    { role: 'user', content: 'What is Groundwork?' },
    { role: 'assistant', content: 'A RAG stack.' },
    { role: 'user', content: 'Where are vectors stored?' },
  ];

  beforeAll(async () => {
    fake = await startFakeOpenAi();
  });

  beforeEach(() => {
    fake.setAnswer({ text: ANSWER, usage: { promptTokens: 31, completionTokens: 9 } });
  });

  afterEach(() => {
    fake.reset();
  });

  afterAll(async () => {
    await fake.close();
  });

  it('posts model, messages, max_tokens and temperature, and parses text, usage and finish_reason', async () => {
    const provider = llm({ apiKey: 'sk-local' });

    const generation = await provider.generate(REQUEST);

    expect(provider.modelId).toBe('openai/llama3.1');
    expect(generation).toEqual({
      text: ANSWER,
      usage: { inputTokens: 31, outputTokens: 9 },
      stopReason: 'stop',
    });
    expect(fake.requests).toHaveLength(1);
    const [sent] = fake.requests;
    expect(sent?.method).toBe('POST');
    expect(sent?.path).toBe('/v1/chat/completions');
    expect(sent?.headers.authorization).toBe('Bearer sk-local');
    expect(sent?.body).toEqual({
      model: 'llama3.1',
      messages: expectedMessages,
      max_tokens: 256,
      temperature: 0.2,
      stream: false,
    });
  });

  it('sends no Authorization header without an apiKey and tolerates a trailing slash', async () => {
    await llm({ baseUrl: `${fake.url}/` }).generate(REQUEST);

    expect(fake.requests[0]?.path).toBe('/v1/chat/completions');
    expect(fake.requests[0]?.headers.authorization).toBeUndefined();
  });

  it('streams the SSE deltas in order, reads usage, and stops at [DONE]', async () => {
    fake.setAnswer({
      text: ANSWER,
      finishReason: 'length',
      usage: { promptTokens: 31, completionTokens: 9 },
    });

    const { events, error } = await drain(llm().stream(REQUEST));

    expect(error).toBeUndefined();
    expect(deltas(events)).toEqual(splitIntoDeltas(ANSWER));
    expect(events.at(-1)).toEqual({
      type: 'done',
      usage: { inputTokens: 31, outputTokens: 9 },
      stopReason: 'length',
    });
    expect(fake.requests[0]?.headers.accept).toBe('text/event-stream');
    expect(fake.requests[0]?.body).toEqual({
      model: 'llama3.1',
      messages: expectedMessages,
      max_tokens: 256,
      temperature: 0.2,
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it('lets the consumer stop after the first delta without an error', async () => {
    const provider = llm();
    const seen: GenerationEvent[] = [];

    for await (const event of provider.stream(REQUEST)) {
      seen.push(event);
      break;
    }
    const again = await provider.generate(REQUEST);

    expect(seen).toEqual([{ type: 'delta', text: splitIntoDeltas(ANSWER)[0] }]);
    expect(again.text).toBe(ANSWER);
  });

  it.each([429, 500])('retries HTTP %i twice, then succeeds', async (status) => {
    fake.setBehaviour({ kind: 'fail', status, times: 2 });

    const generation = await llm().generate(REQUEST);
    expect(generation.text).toBe(ANSWER);
    expect(fake.requests).toHaveLength(3);

    fake.setBehaviour({ kind: 'fail', status, times: 2 });
    const { events, error } = await drain(llm().stream(REQUEST));
    expect(error).toBeUndefined();
    expect(deltas(events).join('')).toBe(ANSWER);
    expect(fake.requests).toHaveLength(6);
  });

  it('honours a short Retry-After', async () => {
    fake.setBehaviour({ kind: 'fail', status: 429, times: 1, retryAfterSeconds: 0.3 });
    const started = Date.now();

    await llm().generate(REQUEST);

    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(fake.requests).toHaveLength(2);
  });

  it.each([429, 503])(
    'gives up on HTTP %i after maxRetries with a retryable LlmUnavailableError',
    async (status) => {
      fake.setBehaviour({ kind: 'always-fail', status });

      const error = await failureOf(llm({ maxRetries: 2 }).generate(REQUEST));

      expect(error.retryable).toBe(true);
      expect(error.message).toMatch(new RegExp(`HTTP ${status} \\(gave up after 3 attempts\\)`));
      expect(fake.requests).toHaveLength(3);
    },
  );

  it('does not retry HTTP 400 and reports it as not retryable', async () => {
    fake.setBehaviour({ kind: 'always-fail', status: 400 });

    const error = await failureOf(llm().generate(REQUEST));

    expect(error.retryable).toBe(false);
    expect(error.message).toMatch(/HTTP 400: The request is not valid/);
    expect(fake.requests).toHaveLength(1);
  });

  it('retries a refused connection, then reports the server unreachable', async () => {
    const closed = await startFakeOpenAi();
    const url = closed.url;
    await closed.close();

    const error = await failureOf(llm({ baseUrl: url, maxRetries: 1 }).generate(REQUEST));

    expect(error.retryable).toBe(true);
    expect(error.message).toMatch(/failed \(gave up after 2 attempts\).*ECONNREFUSED/);
  });

  it('gives up at its deadline on a slow server, without retrying', async () => {
    fake.setBehaviour({ kind: 'succeed' }, { latencyMs: 3000 });
    const started = Date.now();

    const error = await failureOf(llm({ timeoutMs: 200 }).generate(REQUEST));

    expect(error.retryable).toBe(true);
    expect(error.message).toMatch(/timed out after 200 ms/);
    expect(fake.requests).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it.each(['not-json', 'missing-choices'] as const)(
    'rejects a %s reply with an LlmUnavailableError, streaming or not',
    async (reply) => {
      fake.setBehaviour({ kind: 'malformed', reply });

      await failureOf(llm().generate(REQUEST));
      const { events, error } = await drain(llm().stream(REQUEST));

      expect(error).toBeInstanceOf(LlmUnavailableError);
      expect((error as Error).message).toMatch(/not JSON|malformed/);
      expect(events.some((event) => event.type === 'done')).toBe(false);
      expect(fake.requests).toHaveLength(2);
    },
  );

  it('yields the 2 deltas before an error event mid-stream, then throws LlmUnavailableError', async () => {
    fake.setBehaviour({ kind: 'stream-error', afterDeltas: 2 });

    const { events, error } = await drain(llm().stream(REQUEST));

    expect(events).toEqual(
      splitIntoDeltas(ANSWER)
        .slice(0, 2)
        .map((text) => ({ type: 'delta', text })),
    );
    expect(error).toBeInstanceOf(LlmUnavailableError);
    expect((error as Error).message).toMatch(/failed mid-stream: The model crashed/);
    expect(fake.requests).toHaveLength(1);
  });

  it('yields the 2 deltas before the socket closes mid-stream, then throws LlmUnavailableError', async () => {
    fake.setBehaviour({ kind: 'stream-close-socket', afterDeltas: 2 });

    const { events, error } = await drain(llm().stream(REQUEST));

    expect(deltas(events)).toEqual(splitIntoDeltas(ANSWER).slice(0, 2));
    expect(events.some((event) => event.type === 'done')).toBe(false);
    expect(error).toBeInstanceOf(LlmUnavailableError);
    expect((error as LlmUnavailableError).retryable).toBe(true);
    expect(fake.requests).toHaveLength(1);
  });
});

describe('server-sent events reader', () => {
  it('handles CRLF, CR and LF split across chunks, multi-line data, comments and a cut-off event', async () => {
    const wire = [
      ': comment\r',
      '\n',
      'event: ping\r\ndata: {"a":',
      '1}\r',
      '\r\ndata: first line\ndata:second line\n\n',
      'data:   padded\r\rdata: cut off by the end',
    ];
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const piece of wire) controller.enqueue(new TextEncoder().encode(piece));
        controller.close();
      },
    });

    const events = [];
    for await (const event of readServerSentEvents(body)) events.push(event);

    expect(events).toEqual([
      { event: 'ping', data: '{"a":1}' },
      { event: 'message', data: 'first line\nsecond line' },
      { event: 'message', data: '  padded' },
    ]);
  });
});
