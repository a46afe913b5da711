/**
 * LlmProvider on Amazon Bedrock's Converse and ConverseStream APIs, which speak one request
 * shape for every chat model Bedrock hosts. Throttling, timeouts and 5xx replies are retried by
 * the shared client's retry strategy (see ../embeddings/bedrock-runtime-client.ts); each call
 * also runs under its own deadline. Whatever still fails surfaces as an LlmUnavailableError.
 */
import {
  ConverseCommand,
  ConverseStreamCommand,
  type BedrockRuntimeClient,
  type ConverseStreamCommandInput,
  type ConverseStreamOutput,
} from '@aws-sdk/client-bedrock-runtime';
import * as z from '../../core/zod';
import {
  LlmUnavailableError,
  type Generation,
  type GenerationEvent,
  type GenerationRequest,
  type LlmProvider,
  type TokenUsage,
} from '../../core/answer/llm';
import { ConfigError } from '../../core/errors';
import { describeError, startDeadline, type Deadline } from './deadline';

/** Options of {@link createBedrockLlm}. */
export interface BedrockLlmOptions {
  /** Shared client, from `createBedrockRuntimeClient` (it carries the retry policy). */
  readonly client: BedrockRuntimeClient;
  /** Bedrock model id or inference profile id, e.g. `anthropic.claude-3-haiku-20240307-v1:0`. */
  readonly modelId: string;
  /**
   * Deadline of one call in milliseconds, the SDK's retries and (for `stream`) the whole
   * stream included.
   * @default 60000
   */
  readonly timeoutMs?: number;
}

const tokenUsageSchema = z.object({
  inputTokens: z.int().check(z.nonnegative()),
  outputTokens: z.int().check(z.nonnegative()),
});

/** The parts of a Converse reply the adapter reads; other fields (`metrics`, ...) are ignored. */
const converseReplySchema = z.object({
  output: z.object({
    message: z.object({
      content: z.array(z.object({ text: z.optional(z.string()) })),
    }),
  }),
  stopReason: z.nullish(z.string()),
  usage: z.nullish(tokenUsageSchema),
});

/** Bedrock errors that retrying the same request cannot fix. */
const PERMANENT_ERRORS = new Set([
  'ValidationException',
  'AccessDeniedException',
  'ResourceNotFoundException',
  'UnrecognizedClientException',
  'ExpiredTokenException',
  'ModelErrorException',
]);

/** Exception members of the ConverseStream union, should the SDK ever yield one as an event. */
const STREAM_EXCEPTIONS = [
  'internalServerException',
  'modelStreamErrorException',
  'serviceUnavailableException',
  'throttlingException',
  'validationException',
] as const;

/**
 * Creates an LlmProvider on Bedrock Converse; `modelId` is reported as `bedrock/${modelId}`.
 *
 * Failures, after the client's retries, are LlmUnavailableErrors: retryable for throttling,
 * timeouts, 5xx, network and malformed replies; not retryable for validation and access errors
 * (4xx) or when the caller's own signal aborted the call.
 *
 * @throws ConfigError for invalid options.
 */
export function createBedrockLlm(options: BedrockLlmOptions): LlmProvider {
  const { client, modelId } = options;
  const timeoutMs = options.timeoutMs ?? 60_000;
  if (!(timeoutMs > 0)) {
    throw new ConfigError(`Bedrock LLM timeoutMs must be > 0, got ${timeoutMs}`);
  }

  return {
    modelId: `bedrock/${modelId}`,

    async generate(request) {
      const deadline = startDeadline(timeoutMs, request.signal);
      try {
        const reply = await deadline.race(
          client.send(new ConverseCommand(converseInput(modelId, request)), {
            abortSignal: deadline.signal,
          }),
        );
        return parseConverseReply(reply, modelId);
      } catch (err) {
        throw toLlmError(err, deadline, modelId, timeoutMs);
      } finally {
        deadline.dispose();
      }
    },

    async *stream(request) {
      const deadline = startDeadline(timeoutMs, request.signal);
      let events: AsyncIterator<ConverseStreamOutput> | undefined;
      let finished = false;
      try {
        const reply = await deadline.race(
          client.send(new ConverseStreamCommand(converseInput(modelId, request)), {
            abortSignal: deadline.signal,
          }),
        );
        if (!reply.stream) {
          throw new LlmUnavailableError(`Bedrock returned no event stream for ${modelId}`, true);
        }
        events = reply.stream[Symbol.asyncIterator]();
        let stopReason: string | null = null;
        let usage: TokenUsage | null = null;
        let stopped = false;
        for (;;) {
          const next = await deadline.race(events.next());
          if (next.done) break;
          const event = next.value;
          if (event.contentBlockDelta) {
            const text = event.contentBlockDelta.delta?.text;
            if (text) yield { type: 'delta', text } satisfies GenerationEvent;
          } else if (event.messageStop) {
            stopped = true;
            stopReason = event.messageStop.stopReason ?? null;
          } else if (event.metadata) {
            const parsed = tokenUsageSchema.safeParse(event.metadata.usage);
            usage = parsed.success ? parsed.data : null;
          } else {
            throwIfStreamException(event, modelId);
          }
        }
        finished = true;
        if (!stopped) {
          throw new LlmUnavailableError(
            `Bedrock ended the stream from ${modelId} before messageStop (connection lost or reply cut short)`,
            true,
          );
        }
        yield { type: 'done', usage, stopReason } satisfies GenerationEvent;
      } catch (err) {
        throw toLlmError(err, deadline, modelId, timeoutMs);
      } finally {
        // The consumer stopped early or the call failed: let go of the HTTP/2 stream.
        if (!finished) events?.return?.().catch(() => undefined);
        deadline.dispose();
      }
    },
  };
}

/** The Converse request: system prompt as one text block, messages as text blocks. */
function converseInput(modelId: string, request: GenerationRequest): ConverseStreamCommandInput {
  return {
    modelId,
    // Bedrock rejects an empty text block, so an empty system prompt is left out.
    ...(request.system !== '' ? { system: [{ text: request.system }] } : {}),
    messages: request.messages.map((message) => ({
      role: message.role,
      content: [{ text: message.content }],
    })),
    inferenceConfig: { maxTokens: request.maxTokens, temperature: request.temperature },
  };
}

/** Checks a Converse reply and reads text (all text blocks, in order), usage and stop reason. */
function parseConverseReply(reply: unknown, modelId: string): Generation {
  const parsed = converseReplySchema.safeParse(reply);
  if (!parsed.success) {
    throw new LlmUnavailableError(
      `Bedrock returned a malformed Converse reply from ${modelId}: ${z.prettifyError(parsed.error)}`,
      true,
    );
  }
  const texts = parsed.data.output.message.content.flatMap((block) =>
    block.text !== undefined ? [block.text] : [],
  );
  if (texts.length === 0) {
    throw new LlmUnavailableError(
      `Bedrock returned a Converse reply with no text block from ${modelId}`,
      true,
    );
  }
  return {
    text: texts.join(''),
    usage: parsed.data.usage ?? null,
    stopReason: parsed.data.stopReason ?? null,
  };
}

function throwIfStreamException(event: ConverseStreamOutput, modelId: string): void {
  for (const key of STREAM_EXCEPTIONS) {
    const exception = event[key];
    if (exception) {
      throw new LlmUnavailableError(
        `Bedrock stream from ${modelId} failed (${key}): ${exception.message ?? ''}`,
        key !== 'validationException',
      );
    }
  }
}

/** Maps an SDK, network or deadline failure onto LlmUnavailableError. */
function toLlmError(
  err: unknown,
  deadline: Deadline,
  modelId: string,
  timeoutMs: number,
): LlmUnavailableError {
  if (err instanceof LlmUnavailableError) return err;
  switch (deadline.firedBy()) {
    case 'timeout':
      return new LlmUnavailableError(
        `Bedrock call to ${modelId} timed out after ${timeoutMs} ms`,
        true,
        { cause: err },
      );
    case 'caller':
      return new LlmUnavailableError(
        `Bedrock call to ${modelId} was aborted by the caller`,
        false,
        {
          cause: err,
        },
      );
    case undefined:
      break;
  }
  const { name, message } = describeError(err);
  const metadata = (err as { $metadata?: { attempts?: number; httpStatusCode?: number } })
    ?.$metadata;
  const attempts = metadata?.attempts;
  const status = metadata?.httpStatusCode;
  const after = attempts && attempts > 1 ? ` (gave up after ${attempts} attempts)` : '';
  if (name === 'ThrottlingException' || name === 'ServiceQuotaExceededException') {
    return new LlmUnavailableError(`Bedrock is throttling ${modelId}${after}`, true, {
      cause: err,
      throttled: true,
    });
  }
  const permanent =
    PERMANENT_ERRORS.has(name) ||
    (status !== undefined && status >= 400 && status < 500 && status !== 429);
  return new LlmUnavailableError(
    `Bedrock call to ${modelId} failed (${name}${status ? `, HTTP ${status}` : ''}): ${message}${after}`,
    !permanent,
    { cause: err },
  );
}
