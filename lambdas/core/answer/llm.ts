/**
 * The port every text generator implements: Amazon Bedrock (Converse / ConverseStream), any
 * OpenAI-compatible chat endpoint (Ollama, vLLM, llama.cpp) and the offline extractive answerer.
 */

export interface ChatMessage {
  readonly role: 'user' | 'assistant';
  readonly content: string;
}

export interface GenerationRequest {
  /** System prompt: rules, profile instructions and the delimited context. */
  readonly system: string;
  /** The conversation so far, ending with the user's question. */
  readonly messages: readonly ChatMessage[];
  readonly maxTokens: number;
  readonly temperature: number;
  /** Aborts the call (client went away, or the caller's deadline passed). */
  readonly signal?: AbortSignal;
}

export interface TokenUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
}

export interface Generation {
  readonly text: string;
  readonly usage: TokenUsage | null;
  readonly stopReason: string | null;
}

/** One streamed piece: text deltas, then exactly one final `done` event. */
export type GenerationEvent =
  | { readonly type: 'delta'; readonly text: string }
  | {
      readonly type: 'done';
      readonly usage: TokenUsage | null;
      readonly stopReason: string | null;
    };

export interface LlmProvider {
  /** Reported with every answer, e.g. `bedrock/anthropic.claude-3-haiku-20240307-v1:0`, `openai/llama3.1`, `extractive`. */
  readonly modelId: string;
  generate(request: GenerationRequest): Promise<Generation>;
  /** Streams the answer; a failure mid-stream throws from the iterator. */
  stream(request: GenerationRequest): AsyncIterable<GenerationEvent>;
}

/** The LLM failed after its retries (throttled, timed out, unreachable, malformed reply). */
export class LlmUnavailableError extends Error {
  /** The provider refused for rate or quota (HTTP 429, Bedrock's ThrottlingException). */
  readonly throttled: boolean;
  constructor(
    message: string,
    readonly retryable: boolean,
    options?: { cause?: unknown; throttled?: boolean },
  ) {
    super(message, options);
    this.name = 'LlmUnavailableError';
    this.throttled = options?.throttled ?? false;
  }
}
