/**
 * LlmProvider on any OpenAI-compatible chat completions endpoint (Ollama, vLLM, llama.cpp's
 * server, LM Studio, OpenAI itself), over fetch. Streaming reads the server-sent events of
 * `stream: true`. 429, 5xx and network failures are retried a few times with a short backoff,
 * all under one deadline per call; whatever still fails surfaces as an LlmUnavailableError.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import * as z from '../../core/zod';
import {
  LlmUnavailableError,
  type GenerationEvent,
  type GenerationRequest,
  type LlmProvider,
  type TokenUsage,
} from '../../core/answer/llm';
import { ConfigError } from '../../core/errors';
import { describeError, startDeadline, type Deadline } from './deadline';

/** Options of {@link createOpenAiCompatibleLlm}. */
export interface OpenAiCompatibleLlmOptions {
  /** Base URL of the API, the `/v1` included, e.g. `http://127.0.0.1:11434/v1` for Ollama. */
  readonly baseUrl: string;
  /** Model name as the server knows it, e.g. `llama3.1`. */
  readonly model: string;
  /** Sent as `Authorization: Bearer ...`; local servers usually need none. */
  readonly apiKey?: string;
  /**
   * Deadline of one call in milliseconds, its retries and (for `stream`) the whole stream
   * included.
   * @default 60000
   */
  readonly timeoutMs?: number;
  /**
   * Extra attempts after a 408, 429, 5xx or network failure (not after a timeout).
   * @default 2
   */
  readonly maxRetries?: number;
  /**
   * First backoff in milliseconds, doubled per retry, with jitter; a `Retry-After` header of up
   * to 5 seconds is honoured instead.
   * @default 250
   */
  readonly retryDelayMs?: number;
  /** The fetch to use. @default globalThis.fetch */
  readonly fetchImpl?: typeof fetch;
}

const usageSchema = z.object({
  prompt_tokens: z.int().check(z.nonnegative()),
  completion_tokens: z.int().check(z.nonnegative()),
});

/** The parts of a chat completion the adapter reads. */
const chatCompletionSchema = z.object({
  choices: z
    .array(
      z.object({
        message: z.object({ content: z.string() }),
        finish_reason: z.nullish(z.string()),
      }),
    )
    .check(z.minLength(1)),
  usage: z.nullish(usageSchema),
});

/** The parts of one streamed chunk the adapter reads; the usage chunk has no choices. */
const chatCompletionChunkSchema = z.object({
  choices: z.array(
    z.object({
      delta: z.nullish(z.object({ content: z.nullish(z.string()) })),
      finish_reason: z.nullish(z.string()),
    }),
  ),
  usage: z.nullish(usageSchema),
});
type ChatCompletionChunk = z.infer<typeof chatCompletionChunkSchema>;

/** An error object some servers send instead of a chunk, mid-stream. */
const streamedErrorSchema = z.object({
  error: z.union([z.string(), z.object({ message: z.optional(z.string()) })]),
});

/** Longest `Retry-After` the adapter waits for; longer ones fall back to its own backoff. */
const MAX_RETRY_AFTER_MS = 5_000;

/**
 * Creates an LlmProvider on `POST {baseUrl}/chat/completions`; `modelId` is reported as
 * `openai/${model}`. No other URL is ever called.
 *
 * Failures are LlmUnavailableErrors: retryable for 408/429/5xx, network failures, timeouts and
 * malformed replies; not retryable for other 4xx replies or when the caller's own signal
 * aborted the call.
 *
 * @throws ConfigError for invalid options.
 */
export function createOpenAiCompatibleLlm(options: OpenAiCompatibleLlmOptions): LlmProvider {
  const { model, apiKey } = options;
  const timeoutMs = options.timeoutMs ?? 60_000;
  const maxRetries = options.maxRetries ?? 2;
  const retryDelayMs = options.retryDelayMs ?? 250;
  const fetchImpl = options.fetchImpl ?? globalThis.fetch;
  const url = completionsUrl(options.baseUrl);
  if (!Number.isInteger(maxRetries) || maxRetries < 0) {
    throw new ConfigError(`LLM maxRetries must be a whole number >= 0, got ${maxRetries}`);
  }
  if (!(timeoutMs > 0) || !(retryDelayMs >= 0)) {
    throw new ConfigError(
      `LLM timeoutMs must be > 0 and retryDelayMs >= 0, got ${timeoutMs} and ${retryDelayMs}`,
    );
  }
  const label = `${model} at ${url}`;

  /** POSTs `body`, retrying 408/429/5xx and network failures; returns the 2xx response. */
  async function post(body: Record<string, unknown>, deadline: Deadline): Promise<Response> {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: body.stream ? 'text/event-stream' : 'application/json',
      ...(apiKey !== undefined ? { authorization: `Bearer ${apiKey}` } : {}),
    };
    for (let attempt = 1; ; attempt++) {
      let retryAfterMs: number | undefined;
      let failure: LlmUnavailableError;
      try {
        const response = await deadline.race(
          fetchImpl(url, {
            method: 'POST',
            headers,
            body: JSON.stringify(body),
            signal: deadline.signal,
          }),
        );
        if (response.ok) return response;
        const detail = await deadline.race(errorDetail(response));
        const retryable =
          response.status === 408 || response.status === 429 || response.status >= 500;
        const after = attempt > 1 ? ` (gave up after ${attempt} attempts)` : '';
        failure = new LlmUnavailableError(
          `LLM ${label} answered HTTP ${response.status}${retryable ? after : ''}: ${detail}`,
          retryable,
          { throttled: response.status === 429 },
        );
        retryAfterMs = parseRetryAfter(response.headers.get('retry-after'));
      } catch (err) {
        failure = toLlmError(err, deadline, label, timeoutMs, attempt);
        if (deadline.firedBy()) throw failure;
      }
      if (!failure.retryable || attempt > maxRetries) throw failure;
      const backoff = retryDelayMs * 2 ** (attempt - 1) * (0.5 + Math.random() / 2);
      try {
        await sleep(retryAfterMs ?? backoff, undefined, { signal: deadline.signal });
      } catch (err) {
        throw toLlmError(err, deadline, label, timeoutMs, attempt);
      }
    }
  }

  function requestBody(request: GenerationRequest, stream: boolean): Record<string, unknown> {
    return {
      model,
      messages: [
        ...(request.system !== '' ? [{ role: 'system', content: request.system }] : []),
        ...request.messages.map((message) => ({ role: message.role, content: message.content })),
      ],
      max_tokens: request.maxTokens,
      temperature: request.temperature,
      stream,
      ...(stream ? { stream_options: { include_usage: true } } : {}),
    };
  }

  return {
    modelId: `openai/${model}`,

    async generate(request) {
      const deadline = startDeadline(timeoutMs, request.signal);
      try {
        const response = await post(requestBody(request, false), deadline);
        const raw = await deadline.race(response.text());
        const parsed = chatCompletionSchema.safeParse(parseJson(raw, label));
        if (!parsed.success) {
          throw new LlmUnavailableError(
            `LLM ${label} returned a malformed chat completion: ${z.prettifyError(parsed.error)}`,
            true,
          );
        }
        const [choice] = parsed.data.choices;
        return {
          text: choice?.message.content ?? '',
          usage: toUsage(parsed.data.usage),
          stopReason: choice?.finish_reason ?? null,
        };
      } catch (err) {
        throw toLlmError(err, deadline, label, timeoutMs);
      } finally {
        deadline.dispose();
      }
    },

    async *stream(request) {
      const deadline = startDeadline(timeoutMs, request.signal);
      try {
        const response = await post(requestBody(request, true), deadline);
        if (!response.body) {
          throw new LlmUnavailableError(`LLM ${label} answered a stream with no body`, true);
        }
        let usage: TokenUsage | null = null;
        let stopReason: string | null = null;
        let sawDone = false;
        for await (const event of readServerSentEvents(response.body, deadline)) {
          if (event.data === '[DONE]') {
            sawDone = true;
            break;
          }
          const chunk = parseChunk(event.data, label);
          for (const choice of chunk.choices) {
            const text = choice.delta?.content;
            if (text) yield { type: 'delta', text } satisfies GenerationEvent;
            if (choice.finish_reason) stopReason = choice.finish_reason;
          }
          if (chunk.usage) usage = toUsage(chunk.usage);
        }
        // A server that finished the choice but closed without [DONE] still gave a whole answer.
        if (!sawDone && stopReason === null) {
          throw new LlmUnavailableError(`LLM ${label} ended the stream before [DONE]`, true);
        }
        yield { type: 'done', usage, stopReason } satisfies GenerationEvent;
      } catch (err) {
        throw toLlmError(err, deadline, label, timeoutMs);
      } finally {
        deadline.dispose();
      }
    },
  };
}

function completionsUrl(baseUrl: string): string {
  let parsed: URL;
  try {
    parsed = new URL(baseUrl);
  } catch {
    throw new ConfigError(`LLM baseUrl is not a URL: ${JSON.stringify(baseUrl)}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new ConfigError(`LLM baseUrl must be http or https, got ${parsed.protocol}`);
  }
  return `${baseUrl.replace(/\/+$/, '')}/chat/completions`;
}

function toUsage(usage: z.infer<typeof usageSchema> | null | undefined): TokenUsage | null {
  return usage ? { inputTokens: usage.prompt_tokens, outputTokens: usage.completion_tokens } : null;
}

function parseJson(raw: string, label: string): unknown {
  try {
    return JSON.parse(raw);
  } catch (err) {
    throw new LlmUnavailableError(`LLM ${label} returned a reply that is not JSON`, true, {
      cause: err,
    });
  }
}

/** Parses one `data:` payload: a chunk, or an error the server reports mid-stream. */
function parseChunk(data: string, label: string): ChatCompletionChunk {
  const json = parseJson(data, label);
  const error = streamedErrorSchema.safeParse(json);
  if (error.success) {
    const { error: detail } = error.data;
    const message = typeof detail === 'string' ? detail : (detail.message ?? 'unknown error');
    throw new LlmUnavailableError(`LLM ${label} failed mid-stream: ${message}`, true);
  }
  const chunk = chatCompletionChunkSchema.safeParse(json);
  if (!chunk.success) {
    throw new LlmUnavailableError(
      `LLM ${label} streamed a malformed chunk: ${z.prettifyError(chunk.error)}`,
      true,
    );
  }
  return chunk.data;
}

/** The start of an error reply's body, for the message (OpenAI-style `error.message` if any). */
async function errorDetail(response: Response): Promise<string> {
  const raw = await response.text().catch(() => '');
  try {
    const parsed = streamedErrorSchema.safeParse(JSON.parse(raw));
    if (parsed.success) {
      const { error } = parsed.data;
      return (typeof error === 'string' ? error : (error.message ?? raw)).slice(0, 300);
    }
  } catch {
    // Not JSON: the raw text is the detail.
  }
  return raw.slice(0, 300) || response.statusText;
}

/** `Retry-After` in milliseconds, if it is a small number of seconds. */
function parseRetryAfter(value: string | null): number | undefined {
  if (value === null || !/^\d+(\.\d+)?$/.test(value.trim())) return undefined;
  const ms = Number(value) * 1000;
  return ms <= MAX_RETRY_AFTER_MS ? ms : undefined;
}

/** One server-sent event: its type (`message` unless named) and its joined `data` lines. */
export interface ServerSentEvent {
  readonly event: string;
  readonly data: string;
}

/**
 * Reads server-sent events from a response body as the EventSource spec does: lines end in
 * CRLF, LF or CR, `data:` lines accumulate, a blank line dispatches, `:` lines are comments,
 * and an event cut off by the end of the body is dropped.
 */
export async function* readServerSentEvents(
  body: ReadableStream<Uint8Array>,
  deadline?: Pick<Deadline, 'race'>,
): AsyncGenerator<ServerSentEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  let eventType = '';
  try {
    for (;;) {
      const read = reader.read();
      const { done, value } = await (deadline ? deadline.race(read) : read);
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      for (;;) {
        const end = buffer.search(/\r\n|\r|\n/);
        // A CR at the end of the buffer may be the first half of a CRLF: wait for more.
        if (end < 0 || (end === buffer.length - 1 && buffer[end] === '\r' && !done)) break;
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + (buffer.startsWith('\r\n', end) ? 2 : 1));
        if (line === '') {
          if (data.length > 0) yield { event: eventType || 'message', data: data.join('\n') };
          data = [];
          eventType = '';
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? '' : line.slice(colon + 1);
        if (value.startsWith(' ')) value = value.slice(1);
        if (field === 'data') data.push(value);
        else if (field === 'event') eventType = value;
      }
      if (done) return;
    }
  } finally {
    // Stopped early (e.g. at [DONE]) or failed: release the connection.
    reader.cancel().catch(() => undefined);
  }
}

/** Maps a fetch, network or deadline failure onto LlmUnavailableError. */
function toLlmError(
  err: unknown,
  deadline: Deadline,
  label: string,
  timeoutMs: number,
  attempts?: number,
): LlmUnavailableError {
  if (err instanceof LlmUnavailableError) return err;
  switch (deadline.firedBy()) {
    case 'timeout':
      return new LlmUnavailableError(`LLM ${label} timed out after ${timeoutMs} ms`, true, {
        cause: err,
      });
    case 'caller':
      return new LlmUnavailableError(`LLM call to ${label} was aborted by the caller`, false, {
        cause: err,
      });
    case undefined:
      break;
  }
  // fetch reports network failures as TypeError('fetch failed') with the real one as cause.
  const outer = describeError(err);
  const inner = outer.cause !== undefined ? describeError(outer.cause) : undefined;
  const message = inner
    ? `${outer.message} (${inner.name}: ${inner.message})`
    : `${outer.name}: ${outer.message}`;
  const after = attempts && attempts > 1 ? ` (gave up after ${attempts} attempts)` : '';
  return new LlmUnavailableError(`LLM call to ${label} failed${after}: ${message}`, true, {
    cause: err,
  });
}
