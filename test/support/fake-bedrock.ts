/**
 * A local HTTP server that answers as the Bedrock Runtime REST API does, for driving the real
 * AWS SDK client in integration tests (`endpoint: fake.url`). It speaks HTTP/2 (cleartext,
 * prior knowledge) because the Bedrock Runtime client's default handler is NodeHttp2Handler.
 *
 * Routes are `POST /model/{modelId}/{operation}`. `invoke` answers as Titan Text Embeddings v2
 * (a deterministic embedding derived from the text), or as Cohere Embed v3 for `cohere.embed-*`
 * model ids (`texts`, `input_type`, at most 96 texts of at most 2,048 characters, 1,024
 * dimensions, the vector derived from input type and text), or as Amazon Rerank 1.0 and Cohere
 * Rerank 3.5 for `*.rerank-*` model ids; `converse` answers with a scripted text
 * (`setAnswer`) in Bedrock's Converse JSON, and `converse-stream` streams the same text as a real
 * `application/vnd.amazon.eventstream` body (framed with the Smithy event-stream codec, as the
 * SDK decodes it), split into several `contentBlockDelta` events. Error behaviours (throttling,
 * service errors, latency) are the same for every operation, as on Bedrock; the mid-stream
 * failures only affect `converse-stream`.
 */
import { createHash } from 'node:crypto';
import {
  createServer,
  type Http2ServerResponse,
  type Http2Session,
  type IncomingHttpHeaders,
} from 'node:http2';
import type { AddressInfo, Socket } from 'node:net';
import { EventStreamCodec, type MessageHeaders } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { fakeRerankResults, rerankRequestProblem } from './fake-rerank';

/** Operations the fake routes (the last path segment). */
type FakeOperation = 'invoke' | 'converse' | 'converse-stream';

const OPERATIONS: readonly FakeOperation[] = ['invoke', 'converse', 'converse-stream'];

/** How the fake answers the next requests. */
type FakeBehaviour =
  /** Answer successfully. */
  | { kind: 'succeed' }
  /** Throttle the next `times` requests (HTTP 429, ThrottlingException), then succeed. */
  | { kind: 'throttle'; times: number }
  /** Throttle every request. */
  | { kind: 'always-throttle' }
  /** 200 with a bad body; see {@link MalformedReply}. */
  | { kind: 'malformed'; reply: MalformedReply }
  /** Any Bedrock error, e.g. `{ status: 400, errorType: 'ValidationException', ... }`. */
  | { kind: 'error'; status: number; errorType: string; message: string }
  /**
   * converse-stream: `afterDeltas` deltas, then an exception event (`:message-type` exception),
   * e.g. `modelStreamErrorException`, `throttlingException`, `internalServerException`.
   * Other operations succeed.
   */
  | { kind: 'stream-exception'; afterDeltas: number; exceptionType: string; message?: string }
  /**
   * converse-stream: `afterDeltas` deltas, then the TCP connection is dropped (no HTTP/2 GOAWAY
   * or RST_STREAM, and no event-stream end).
   */
  | { kind: 'stream-close-socket'; afterDeltas: number }
  /** converse-stream: `afterDeltas` deltas, then nothing more until the client gives up. */
  | { kind: 'stream-stall'; afterDeltas: number };

/**
 * A 200 with a body the client cannot use.
 * - `missing-embedding`, `wrong-dimension`: Titan replies (invoke); on converse they lack `output`.
 * - `missing-output`: a converse reply without `output` (and no embedding, for invoke).
 * - `not-json`: an HTML page, on every operation (converse-stream included: no event framing).
 * On converse-stream every reply but `not-json` streams the deltas, then ends the body without
 * `messageStop` or `metadata`.
 */
type MalformedReply = 'missing-embedding' | 'wrong-dimension' | 'not-json' | 'missing-output';

/** The text the converse operations answer with. */
interface ScriptedAnswer {
  /** The whole answer; converse-stream sends it in pieces (see {@link splitIntoDeltas}). */
  readonly text: string;
  /** @default 'end_turn' */
  readonly stopReason?: string;
  /**
   * Reported token usage.
   * @default input: words in the system prompt and messages; output: number of deltas
   */
  readonly usage?: { readonly inputTokens: number; readonly outputTokens: number };
}

/** The answer the fake gives until `setAnswer` is called (and after `reset`). */
const DEFAULT_ANSWER: ScriptedAnswer = {
  text: 'Groundwork answers from your documents, with citations.',
};

/** One request as the fake received it. */
interface RecordedRequest {
  readonly operation: FakeOperation;
  /** Decoded model id, e.g. `amazon.titan-embed-text-v2:0`. */
  readonly modelId: string;
  /** Raw request path, still percent-encoded. */
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /** Parsed JSON body (the raw string if it is not JSON). */
  readonly body: unknown;
}

/** A running fake; `close()` it in `afterAll`. */
export interface FakeBedrock {
  /** Base URL to pass as the client's `endpoint`. */
  readonly url: string;
  /** Every routed request, in arrival order. */
  readonly requests: RecordedRequest[];
  /** Most requests that were being handled at the same time since the last `reset()`. */
  readonly maxInFlight: number;
  /**
   * Sets how requests are answered from now on: for one operation, or for all of them.
   * `latencyMs` delays every answer (used to observe concurrency).
   */
  setBehaviour(
    behaviour: FakeBehaviour,
    options?: { operation?: FakeOperation; latencyMs?: number },
  ): void;
  /** Sets the text `converse` and `converse-stream` answer with. */
  setAnswer(answer: ScriptedAnswer): void;
  /** Back to `succeed` with no latency and the default answer; clears `requests` and `maxInFlight`. */
  reset(): void;
  close(): Promise<void>;
}

interface Reply {
  status: number;
  headers?: Record<string, string>;
  body: string;
  /** When present, `body` is ignored and the reply is this event stream. */
  eventStream?: EventStreamReply;
}

/** An `application/vnd.amazon.eventstream` body, written frame by frame. */
interface EventStreamReply {
  readonly frames: readonly Uint8Array[];
  /** How the body ends after the last frame. */
  readonly ending: 'end' | 'close-socket' | 'stall';
}

const EVENT_STREAM_CONTENT_TYPE = 'application/vnd.amazon.eventstream';

/** Pause between two event-stream frames, so the client reads them as they arrive. */
const FRAME_INTERVAL_MS = 2;

const codec = new EventStreamCodec(toUtf8, fromUtf8);

/** Titan v2's default size when `dimensions` is absent. */
const TITAN_DEFAULT_DIMENSION = 1024;

/**
 * The embedding the fake returns for `text`: values from SHA-256 of the text, unit length.
 * Tests use it to check that vectors come back in input order.
 */
export function fakeTitanEmbedding(text: string, dimension: number): number[] {
  const values: number[] = [];
  for (let block = 0; values.length < dimension; block++) {
    const digest = createHash('sha256').update(`${block}\u0000${text}`).digest();
    for (let i = 0; i + 1 < digest.length && values.length < dimension; i += 2) {
      values.push(digest.readInt16BE(i) / 32768);
    }
  }
  const norm = Math.sqrt(values.reduce((sum, x) => sum + x * x, 0));
  return values.map((x) => x / norm);
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): Reply {
  return { status, headers, body: JSON.stringify(body) };
}

/** A Bedrock error reply: the SDK reads the error name from `x-amzn-ErrorType`. */
function bedrockError(status: number, errorType: string, message: string): Reply {
  return json(status, { message }, { 'x-amzn-ErrorType': errorType });
}

/**
 * The embedding the fake returns for a Cohere Embed text: like Titan's, from the input type and
 * the text, so a query and a document of the same text differ, as Cohere's do.
 */
export function fakeCohereEmbedding(text: string, inputType: string): number[] {
  return fakeTitanEmbedding(`${inputType}\u0000${text}`, COHERE_DIMENSION);
}

const COHERE_DIMENSION = 1024;
const COHERE_INPUT_TYPES = ['search_document', 'search_query', 'classification', 'clustering'];

function isCohereEmbed(modelId: string): boolean {
  return /(^|[./])cohere\.embed-/.test(modelId);
}

/** Cohere Embed v3's InvokeModel answer (float embeddings), including its input validation. */
function renderCohereEmbed(request: RecordedRequest): Reply {
  const body = request.body as
    | { texts?: unknown; input_type?: unknown; truncate?: unknown; embedding_types?: unknown }
    | undefined;
  const invalid = (detail: string) =>
    bedrockError(
      400,
      'ValidationException',
      `Malformed input request: ${detail}, please reformat your input and try again.`,
    );
  const texts = body?.texts;
  if (!Array.isArray(texts) || !texts.every((t) => typeof t === 'string')) {
    return invalid('#/texts: expected type: JSONArray of strings');
  }
  if (texts.length > 96)
    return invalid(`#/texts: expected maximum item count: 96, found: ${texts.length}`);
  const long = texts.findIndex((t: string) => t.length > 2048);
  if (long >= 0)
    return invalid(
      `#/texts/${long}: expected maxLength: 2048, actual: ${(texts[long] as string).length}`,
    );
  if (typeof body?.input_type !== 'string' || !COHERE_INPUT_TYPES.includes(body.input_type)) {
    return invalid(`#/input_type: ${JSON.stringify(body?.input_type)} is not a valid enum value`);
  }
  if (body.truncate !== undefined && !['NONE', 'START', 'END'].includes(body.truncate as string)) {
    return invalid(`#/truncate: ${JSON.stringify(body.truncate)} is not a valid enum value`);
  }
  const inputType = body.input_type;
  return json(200, {
    id: `fake-embed-${texts.length}`,
    texts,
    embeddings: texts.map((text) => fakeCohereEmbedding(text, inputType)),
    response_type: 'embeddings_floats',
  });
}

/**
 * Amazon Rerank 1.0's and Cohere Rerank 3.5's InvokeModel answer: `{ query, documents, top_n }`
 * in (Cohere also `api_version` >= 2), `{ results: [{ index, relevance_score }] }` out, scored
 * by `fakeRelevance` (fake-rerank.ts).
 */
function renderRerank(request: RecordedRequest): Reply {
  const invalid = (detail: string) =>
    bedrockError(400, 'ValidationException', `Malformed input request: ${detail}`);
  const problem = rerankRequestProblem(request.body);
  if (problem) return invalid(problem);
  const body = request.body as {
    query: string;
    documents: string[];
    top_n?: number;
    api_version?: unknown;
  };
  if (/cohere\.rerank/.test(request.modelId)) {
    if (typeof body.api_version !== 'number' || body.api_version < 2) {
      return invalid('#/api_version: expected an integer >= 2');
    }
  }
  const results = fakeRerankResults(
    body.query,
    body.documents,
    body.top_n ?? body.documents.length,
  );
  return json(200, /cohere/.test(request.modelId) ? { id: 'fake-rerank', results } : { results });
}

/** The InvokeModel answer of the model the request names. */
function renderInvoke(request: RecordedRequest): Reply {
  if (/(^|[./])(amazon|cohere)\.rerank-/.test(request.modelId)) return renderRerank(request);
  return isCohereEmbed(request.modelId) ? renderCohereEmbed(request) : renderTitan(request);
}

/** Titan Text Embeddings v2's InvokeModel answer, including its input validation. */
function renderTitan(request: RecordedRequest): Reply {
  const body = request.body as { inputText?: unknown; dimensions?: unknown } | undefined;
  if (typeof body?.inputText !== 'string' || body.inputText.length === 0) {
    return bedrockError(
      400,
      'ValidationException',
      'Malformed input request: #/inputText: expected minLength: 1, please reformat your input and try again.',
    );
  }
  const dimension = body.dimensions ?? TITAN_DEFAULT_DIMENSION;
  if (dimension !== 256 && dimension !== 512 && dimension !== 1024) {
    return bedrockError(
      400,
      'ValidationException',
      `Malformed input request: #/dimensions: ${JSON.stringify(dimension)} is not a valid enum value`,
    );
  }
  const tokens = body.inputText.split(/\s+/).filter(Boolean).length;
  const embedding = fakeTitanEmbedding(body.inputText, dimension);
  return json(
    200,
    { embedding, embeddingsByType: { float: embedding }, inputTextTokenCount: tokens },
    { 'X-Amzn-Bedrock-Input-Token-Count': String(tokens) },
  );
}

/**
 * How converse-stream cuts `text` into deltas: one word each, with the whitespace after it
 * (leading whitespace stays with the first). Joined, the pieces give back `text`.
 */
export function splitIntoDeltas(text: string): string[] {
  return text.split(/(?<=\s)(?=\S)/).filter((piece) => piece.length > 0);
}

function countWords(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

/** The usage the fake reports for `request` answered with `answer`. */
function usageOf(request: RecordedRequest, answer: ScriptedAnswer) {
  const body = request.body as {
    system?: { text?: string }[];
    messages?: { content?: { text?: string }[] }[];
  };
  const inputTokens =
    answer.usage?.inputTokens ??
    [
      ...(body.system ?? []),
      ...(body.messages ?? []).flatMap((message) => message.content ?? []),
    ].reduce((sum, block) => sum + countWords(block.text ?? ''), 0);
  const outputTokens = answer.usage?.outputTokens ?? splitIntoDeltas(answer.text).length;
  return { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens };
}

/** A Converse request must name messages; Bedrock refuses the request otherwise. */
function converseValidationError(request: RecordedRequest): Reply | undefined {
  const body = request.body as { messages?: unknown } | undefined;
  if (!Array.isArray(body?.messages) || body.messages.length === 0) {
    return bedrockError(
      400,
      'ValidationException',
      'The model returned the following errors: messages: field required',
    );
  }
  return undefined;
}

/** Bedrock's Converse answer. */
function renderConverse(request: RecordedRequest, answer: ScriptedAnswer): Reply {
  return (
    converseValidationError(request) ??
    json(200, {
      output: { message: { role: 'assistant', content: [{ text: answer.text }] } },
      stopReason: answer.stopReason ?? 'end_turn',
      usage: usageOf(request, answer),
      metrics: { latencyMs: 42 },
    })
  );
}

function frame(headers: MessageHeaders, payload: unknown): Uint8Array {
  return codec.encode({
    headers: { ...headers, ':content-type': { type: 'string', value: 'application/json' } },
    body: fromUtf8(JSON.stringify(payload)),
  });
}

/** One event frame; `p` is the padding field Bedrock adds to hide payload sizes. */
function eventFrame(eventType: string, payload: Record<string, unknown>): Uint8Array {
  return frame(
    {
      ':message-type': { type: 'string', value: 'event' },
      ':event-type': { type: 'string', value: eventType },
    },
    { ...payload, p: 'abcdefghij' },
  );
}

function exceptionFrame(exceptionType: string, message: string): Uint8Array {
  const payload: Record<string, unknown> = { message };
  if (exceptionType === 'modelStreamErrorException') {
    payload.originalStatusCode = 500;
    payload.originalMessage = message;
  }
  return frame(
    {
      ':message-type': { type: 'string', value: 'exception' },
      ':exception-type': { type: 'string', value: exceptionType },
    },
    payload,
  );
}

function eventStreamReply(frames: Uint8Array[], ending: EventStreamReply['ending']): Reply {
  return {
    status: 200,
    headers: { 'content-type': EVENT_STREAM_CONTENT_TYPE },
    body: '',
    eventStream: { frames, ending },
  };
}

/** The frames up to and including the deltas: messageStart, contentBlockDelta x n. */
function openingFrames(deltas: readonly string[]): Uint8Array[] {
  return [
    eventFrame('messageStart', { role: 'assistant' }),
    ...deltas.map((text) =>
      eventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { text } }),
    ),
  ];
}

/** Bedrock's ConverseStream answer, as events. */
function renderConverseStream(request: RecordedRequest, answer: ScriptedAnswer): Reply {
  const invalid = converseValidationError(request);
  if (invalid) return invalid;
  return eventStreamReply(
    [
      ...openingFrames(splitIntoDeltas(answer.text)),
      eventFrame('contentBlockStop', { contentBlockIndex: 0 }),
      eventFrame('messageStop', { stopReason: answer.stopReason ?? 'end_turn' }),
      eventFrame('metadata', { usage: usageOf(request, answer), metrics: { latencyMs: 42 } }),
    ],
    'end',
  );
}

/** Success answers per operation. */
const successRenderers: Record<
  FakeOperation,
  (request: RecordedRequest, answer: ScriptedAnswer) => Reply
> = {
  invoke: renderInvoke,
  converse: renderConverse,
  'converse-stream': renderConverseStream,
};

/** A converse-stream that fails after `afterDeltas` deltas. */
function renderFailingStream(
  behaviour: Extract<
    FakeBehaviour,
    { kind: 'stream-exception' | 'stream-close-socket' | 'stream-stall' }
  >,
  answer: ScriptedAnswer,
): Reply {
  const frames = openingFrames(splitIntoDeltas(answer.text).slice(0, behaviour.afterDeltas));
  switch (behaviour.kind) {
    case 'stream-exception':
      frames.push(
        exceptionFrame(
          behaviour.exceptionType,
          behaviour.message ?? `The fake failed the stream with ${behaviour.exceptionType}`,
        ),
      );
      return eventStreamReply(frames, 'end');
    case 'stream-close-socket':
      return eventStreamReply(frames, 'close-socket');
    case 'stream-stall':
      return eventStreamReply(frames, 'stall');
  }
}

function renderMalformed(
  request: RecordedRequest,
  reply: MalformedReply,
  answer: ScriptedAnswer,
): Reply {
  if (request.operation === 'converse-stream' && reply !== 'not-json') {
    return eventStreamReply(openingFrames(splitIntoDeltas(answer.text)), 'end');
  }
  switch (reply) {
    case 'missing-output':
      return json(200, { stopReason: 'end_turn', usage: usageOf(request, answer) });
    case 'missing-embedding':
      return json(200, { inputTextTokenCount: 3 });
    case 'wrong-dimension':
      if (isCohereEmbed(request.modelId)) {
        const { texts = [] } = request.body as { texts?: string[] };
        return json(200, {
          id: 'fake-embed',
          texts,
          embeddings: texts.map((text) => fakeTitanEmbedding(text, 512)),
          response_type: 'embeddings_floats',
        });
      }
      {
        const asked =
          (request.body as { dimensions?: number } | undefined)?.dimensions ??
          TITAN_DEFAULT_DIMENSION;
        return json(200, {
          embedding: fakeTitanEmbedding('wrong', asked === 256 ? 512 : 256),
          inputTextTokenCount: 1,
        });
      }
    case 'not-json':
      return {
        status: 200,
        headers: { 'content-type': 'text/html' },
        body: '<html>gateway</html>',
      };
  }
}

interface BehaviourState {
  behaviour: FakeBehaviour;
  latencyMs: number;
  /** Requests answered under this behaviour (for `throttle`). */
  served: number;
}

/** Starts the fake on a free port of 127.0.0.1. */
export async function startFakeBedrock(): Promise<FakeBedrock> {
  const requests: RecordedRequest[] = [];
  const perOperation = new Map<FakeOperation, BehaviourState>();
  let fallback: BehaviourState = { behaviour: { kind: 'succeed' }, latencyMs: 0, served: 0 };
  let scripted: ScriptedAnswer = DEFAULT_ANSWER;
  let inFlight = 0;
  let maxInFlight = 0;
  /** Client sockets by remote port, to close one abruptly (the session only exposes a proxy). */
  const sockets = new Map<number, Socket>();
  const timers = new Set<NodeJS.Timeout>();

  function later(ms: number, fn: () => void): void {
    const timer = setTimeout(() => {
      timers.delete(timer);
      fn();
    }, ms);
    timers.add(timer);
  }

  function answer(request: RecordedRequest, state: BehaviourState): Reply {
    const { behaviour } = state;
    state.served++;
    switch (behaviour.kind) {
      case 'throttle':
        if (state.served <= behaviour.times)
          return bedrockError(429, 'ThrottlingException', 'Too many requests');
        break;
      case 'always-throttle':
        return bedrockError(429, 'ThrottlingException', 'Too many requests');
      case 'malformed':
        return renderMalformed(request, behaviour.reply, scripted);
      case 'error':
        return bedrockError(behaviour.status, behaviour.errorType, behaviour.message);
      case 'stream-exception':
      case 'stream-close-socket':
      case 'stream-stall':
        if (request.operation === 'converse-stream')
          return renderFailingStream(behaviour, scripted);
        break;
      case 'succeed':
        break;
    }
    return successRenderers[request.operation](request, scripted);
  }

  /** Writes the frames one by one, each in two chunks so the client must reassemble them. */
  function writeEventStream(res: Http2ServerResponse, stream: EventStreamReply): void {
    const chunks = stream.frames.flatMap((bytes) => {
      const half = Math.floor(bytes.length / 2);
      return [bytes.subarray(0, half), bytes.subarray(half)];
    });
    const writeNext = (index: number): void => {
      if (res.stream.destroyed) return;
      const chunk = chunks[index];
      if (chunk) {
        res.write(chunk);
        later(index % 2 === 0 ? 0 : FRAME_INTERVAL_MS, () => writeNext(index + 1));
        return;
      }
      switch (stream.ending) {
        case 'end':
          res.end();
          return;
        case 'close-socket': {
          const port = res.socket.remotePort;
          // Give the last frame time to leave before the connection drops.
          later(FRAME_INTERVAL_MS, () => {
            if (port !== undefined) sockets.get(port)?.destroy();
          });
          return;
        }
        case 'stall':
          return;
      }
    };
    writeNext(0);
  }

  function send(res: Http2ServerResponse, reply: Reply): void {
    // The client may have given up (timeout, abort) while the fake was waiting.
    if (res.stream.destroyed || res.stream.closed) return;
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'x-amzn-requestid': `fake-${requests.length}`,
    };
    // HTTP/2 header names are lower case; Bedrock's are documented in mixed case.
    for (const [name, value] of Object.entries(reply.headers ?? {}))
      headers[name.toLowerCase()] = value;
    res.writeHead(reply.status, headers);
    if (reply.eventStream) writeEventStream(res, reply.eventStream);
    else res.end(reply.body);
  }

  const sessions = new Set<Http2Session>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '/';
      const match = /^\/model\/([^/]+)\/([a-z-]+)$/.exec(path.split('?')[0] ?? '');
      const operation = OPERATIONS.find((op) => op === match?.[2]);
      if (req.method !== 'POST' || !match?.[1] || !operation) {
        send(
          res,
          bedrockError(404, 'UnknownOperationException', `No route for ${req.method} ${path}`),
        );
        return;
      }
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown = raw;
      try {
        body = JSON.parse(raw);
      } catch {
        // Kept as the raw string: the test can assert on it.
      }
      const request: RecordedRequest = {
        operation,
        modelId: decodeURIComponent(match[1]),
        path,
        headers: req.headers,
        body,
      };
      requests.push(request);
      const state = perOperation.get(operation) ?? fallback;
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      const reply = answer(request, state);
      later(state.latencyMs, () => {
        inFlight--;
        send(res, reply);
      });
    });
  });

  server.on('connection', (socket: Socket) => {
    const port = socket.remotePort;
    if (port === undefined) return;
    sockets.set(port, socket);
    socket.on('close', () => sockets.delete(port));
  });
  server.on('session', (session: Http2Session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    get maxInFlight() {
      return maxInFlight;
    },
    setBehaviour(behaviour, options = {}) {
      const state: BehaviourState = { behaviour, latencyMs: options.latencyMs ?? 0, served: 0 };
      if (options.operation) perOperation.set(options.operation, state);
      else {
        perOperation.clear();
        fallback = state;
      }
    },
    setAnswer(answer) {
      scripted = answer;
    },
    reset() {
      perOperation.clear();
      fallback = { behaviour: { kind: 'succeed' }, latencyMs: 0, served: 0 };
      scripted = DEFAULT_ANSWER;
      requests.length = 0;
      maxInFlight = inFlight;
    },
    close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      for (const session of sessions) session.destroy();
      return new Promise<void>((resolve, reject) =>
        server.close((err) => (err ? reject(err) : resolve())),
      );
    },
  };
}
