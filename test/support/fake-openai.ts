/**
 * A local HTTP/1.1 server that answers as an OpenAI-compatible chat completions API does
 * (`POST /v1/chat/completions`), for driving the real fetch-based adapter in integration tests.
 * Non-streaming replies are a `chat.completion` object; `stream: true` replies are server-sent
 * events (`data: {chunk}` lines, a usage chunk when `stream_options.include_usage` is set, then
 * `data: [DONE]`), written in pieces that cut across lines so the client must reassemble them.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { splitIntoDeltas } from './fake-bedrock';

/** How the fake answers the next requests. */
type FakeOpenAiBehaviour =
  /** Answer successfully. */
  | { kind: 'succeed' }
  /** Fail the next `times` requests with `status` (429 or 5xx, OpenAI's error JSON), then succeed. */
  | { kind: 'fail'; status: number; times: number; retryAfterSeconds?: number }
  /** Fail every request with `status` (any 4xx or 5xx). */
  | { kind: 'always-fail'; status: number }
  /**
   * 200 with a bad body: `not-json` (an HTML page; in a stream, a `data:` line that is not JSON)
   * or `missing-choices` (JSON without `choices`, in a stream as a chunk).
   */
  | { kind: 'malformed'; reply: 'not-json' | 'missing-choices' }
  /** Stream `afterDeltas` deltas, then `data: {"error": ...}` and the end of the body. */
  | { kind: 'stream-error'; afterDeltas: number }
  /** Stream `afterDeltas` deltas, then destroy the socket (the chunked body never completes). */
  | { kind: 'stream-close-socket'; afterDeltas: number };

/** The text the fake answers with. */
interface FakeOpenAiAnswer {
  readonly text: string;
  /** @default 'stop' */
  readonly finishReason?: string;
  /**
   * Reported usage.
   * @default prompt: words in all messages; completion: number of deltas
   */
  readonly usage?: { readonly promptTokens: number; readonly completionTokens: number };
}

/** One request as the fake received it. */
interface RecordedChatRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /** Parsed JSON body (the raw string if it is not JSON). */
  readonly body: unknown;
}

/** A running fake; `close()` it in `afterAll`. */
export interface FakeOpenAi {
  /** Base URL, `/v1` included, to pass as the adapter's `baseUrl`. */
  readonly url: string;
  /** Every request, in arrival order. */
  readonly requests: RecordedChatRequest[];
  /** Sets how requests are answered from now on; `latencyMs` delays the response headers. */
  setBehaviour(behaviour: FakeOpenAiBehaviour, options?: { latencyMs?: number }): void;
  setAnswer(answer: FakeOpenAiAnswer): void;
  /** Back to `succeed`, no latency, the default answer; clears `requests`. */
  reset(): void;
  close(): Promise<void>;
}

/** The answer the fake gives until `setAnswer` is called (and after `reset`). */
const DEFAULT_OPENAI_ANSWER: FakeOpenAiAnswer = {
  text: 'Local models answer through the same port.',
};

/** Pause between two writes of a stream. */
const WRITE_INTERVAL_MS = 2;

interface ChatBody {
  model?: unknown;
  messages?: { content?: unknown }[];
  stream?: unknown;
  stream_options?: { include_usage?: unknown };
}

function countWords(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

function usageOf(body: ChatBody, answer: FakeOpenAiAnswer) {
  const prompt =
    answer.usage?.promptTokens ??
    (body.messages ?? []).reduce(
      (sum, message) =>
        sum + (typeof message.content === 'string' ? countWords(message.content) : 0),
      0,
    );
  const completion = answer.usage?.completionTokens ?? splitIntoDeltas(answer.text).length;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
  };
}

/** OpenAI's error JSON for `status`. */
function errorBody(status: number): string {
  const [message, type] =
    status === 429
      ? ['Rate limit reached for requests', 'rate_limit_exceeded']
      : status >= 500
        ? ['The server had an error while processing your request', 'server_error']
        : ['The request is not valid', 'invalid_request_error'];
  return JSON.stringify({ error: { message, type, param: null, code: type } });
}

/** Starts the fake on a free port of 127.0.0.1. */
export async function startFakeOpenAi(): Promise<FakeOpenAi> {
  const requests: RecordedChatRequest[] = [];
  let behaviour: FakeOpenAiBehaviour = { kind: 'succeed' };
  let latencyMs = 0;
  let served = 0;
  let answer: FakeOpenAiAnswer = DEFAULT_OPENAI_ANSWER;
  const timers = new Set<NodeJS.Timeout>();

  function later(ms: number, fn: () => void): void {
    const timer = setTimeout(() => {
      timers.delete(timer);
      fn();
    }, ms);
    timers.add(timer);
  }

  function sendJson(
    res: ServerResponse,
    status: number,
    body: string,
    headers: Record<string, string> = {},
  ) {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(body);
  }

  /** Writes `text` in pieces of about `size` characters, then runs `after`. */
  function writeInPieces(res: ServerResponse, text: string, after: () => void): void {
    const size = 23;
    const next = (offset: number): void => {
      if (res.destroyed) return;
      if (offset >= text.length) {
        after();
        return;
      }
      res.write(text.slice(offset, offset + size));
      later(WRITE_INTERVAL_MS, () => next(offset + size));
    };
    next(0);
  }

  function chunk(model: unknown, choices: unknown[], usage?: unknown): string {
    const payload = {
      id: 'chatcmpl-fake',
      object: 'chat.completion.chunk',
      created: 1_700_000_000,
      model,
      choices,
      ...(usage !== undefined ? { usage } : {}),
    };
    return `data: ${JSON.stringify(payload)}\n\n`;
  }

  function stream(res: ServerResponse, body: ChatBody): void {
    const includeUsage = body.stream_options?.include_usage === true;
    // With include_usage, OpenAI sends `usage: null` on every chunk but the last.
    const nullUsage = includeUsage ? null : undefined;
    const deltas = splitIntoDeltas(answer.text);
    const limit =
      behaviour.kind === 'stream-error' || behaviour.kind === 'stream-close-socket'
        ? behaviour.afterDeltas
        : deltas.length;
    let text = ': keep-alive\n\n';
    text += chunk(
      body.model,
      [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }],
      nullUsage,
    );
    for (const delta of deltas.slice(0, limit)) {
      text += chunk(
        body.model,
        [{ index: 0, delta: { content: delta }, finish_reason: null }],
        nullUsage,
      );
    }
    let ending: () => void = () => res.end();
    switch (behaviour.kind) {
      case 'stream-error':
        text += `data: ${JSON.stringify({ error: { message: 'The model crashed mid-stream', type: 'server_error' } })}\n\n`;
        break;
      case 'stream-close-socket':
        ending = () => res.socket?.destroy();
        break;
      case 'malformed':
        text +=
          behaviour.reply === 'not-json'
            ? 'data: <html>gateway</html>\n\n'
            : `data: ${JSON.stringify({ id: 'chatcmpl-fake', object: 'chat.completion.chunk' })}\n\n`;
        break;
      default:
        text += chunk(
          body.model,
          [{ index: 0, delta: {}, finish_reason: answer.finishReason ?? 'stop' }],
          nullUsage,
        );
        if (includeUsage) text += chunk(body.model, [], usageOf(body, answer));
        text += 'data: [DONE]\n\n';
    }
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    writeInPieces(res, text, ending);
  }

  function complete(res: ServerResponse, body: ChatBody): void {
    if (behaviour.kind === 'malformed') {
      if (behaviour.reply === 'not-json') {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<html>gateway</html>');
      } else {
        sendJson(res, 200, JSON.stringify({ id: 'chatcmpl-fake', object: 'chat.completion' }));
      }
      return;
    }
    sendJson(
      res,
      200,
      JSON.stringify({
        id: 'chatcmpl-fake',
        object: 'chat.completion',
        created: 1_700_000_000,
        model: body.model,
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: answer.text },
            finish_reason: answer.finishReason ?? 'stop',
          },
        ],
        usage: usageOf(body, answer),
      }),
    );
  }

  function respond(res: ServerResponse, request: RecordedChatRequest): void {
    served++;
    if (
      (behaviour.kind === 'fail' && served <= behaviour.times) ||
      behaviour.kind === 'always-fail'
    ) {
      const retryAfter: Record<string, string> =
        behaviour.kind === 'fail' && behaviour.retryAfterSeconds !== undefined
          ? { 'retry-after': String(behaviour.retryAfterSeconds) }
          : {};
      sendJson(res, behaviour.status, errorBody(behaviour.status), retryAfter);
      return;
    }
    const body = (typeof request.body === 'object' ? request.body : {}) as ChatBody;
    if (!Array.isArray(body.messages) || typeof body.model !== 'string') {
      sendJson(
        res,
        400,
        JSON.stringify({
          error: { message: "'model' and 'messages' are required", type: 'invalid_request_error' },
        }),
      );
      return;
    }
    if (body.stream === true) stream(res, body);
    else complete(res, body);
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (data: Buffer) => chunks.push(data));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown = raw;
      try {
        body = JSON.parse(raw);
      } catch {
        // Kept as the raw string: the test can assert on it.
      }
      const request: RecordedChatRequest = {
        method: req.method ?? '',
        path: req.url ?? '/',
        headers: req.headers,
        body,
      };
      requests.push(request);
      if (req.method !== 'POST' || request.path !== '/v1/chat/completions') {
        sendJson(
          res,
          404,
          JSON.stringify({ error: { message: `No route for ${req.method} ${request.path}` } }),
        );
        return;
      }
      later(latencyMs, () => {
        if (!res.destroyed) respond(res, request);
      });
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    setBehaviour(next, options = {}) {
      behaviour = next;
      latencyMs = options.latencyMs ?? 0;
      served = 0;
    },
    setAnswer(next) {
      answer = next;
    },
    reset() {
      behaviour = { kind: 'succeed' };
      latencyMs = 0;
      served = 0;
      answer = DEFAULT_OPENAI_ANSWER;
      requests.length = 0;
    },
    close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      server.closeAllConnections();
      return new Promise<void>((resolve, reject) =>
        server.close((err) => (err ? reject(err) : resolve())),
      );
    },
  };
}
