/**
 * A local HTTP/1.1 server that answers as an OpenAI-compatible embeddings API does
 * (`POST /v1/embeddings`), for driving the real fetch-based embedder in integration tests.
 *
 * It checks requests as the servers do: `model` and a non-empty `input` (a string or an array
 * of non-empty strings) are required, at most `maxInputs` texts per request (OpenAI: 2048; Text
 * Embeddings Inference: 32 by default), a bearer key when one is configured, and `dimensions`
 * either honoured (text-embedding-3: the native vector cut short and re-normalised) or refused.
 * Replies are `{ object: 'list', data: [{ object: 'embedding', index, embedding }], model, usage }`;
 * `reverseOrder` lists `data` last input first, which the spec allows (each item carries its index).
 * Errors are OpenAI's error JSON.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fakeTitanEmbedding } from './fake-bedrock';

/** How the fake answers the next requests. */
type FakeEmbeddingsBehaviour =
  /** Answer successfully. */
  | { kind: 'succeed' }
  /** Fail the next `times` requests with `status`, then succeed. */
  | { kind: 'fail'; status: number; times: number; retryAfterSeconds?: number }
  /** Fail every request with `status`. */
  | { kind: 'always-fail'; status: number }
  /** Hold the next `times` requests without answering until the client gives up, then succeed. */
  | { kind: 'stall'; times: number }
  /**
   * 200 with a bad body: `not-json` (an HTML page), `missing-data` (no `data`), `too-few` (one
   * vector less than inputs), `wrong-dimension` (vectors of another size).
   */
  | { kind: 'malformed'; reply: 'not-json' | 'missing-data' | 'too-few' | 'wrong-dimension' };

/** The model the fake serves. */
interface FakeEmbeddingsModel {
  /** @default 768 */
  readonly nativeDimension?: number;
  /** `truncate`: honour `dimensions` as text-embedding-3 does; `reject`: answer 400. @default 'truncate' */
  readonly dimensions?: 'truncate' | 'reject';
  /** Most texts per request; more is a 400 (OpenAI) @default 2048 */
  readonly maxInputs?: number;
  /** When set, requests without `Authorization: Bearer <apiKey>` get a 401. */
  readonly apiKey?: string;
  /** Vectors are scaled by this (some servers do not normalise). @default 1 */
  readonly scale?: number;
  /** List `data` last input first. @default false */
  readonly reverseOrder?: boolean;
}

/** One request as the fake received it. */
interface RecordedEmbeddingsRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /** Parsed JSON body (the raw string if it is not JSON). */
  readonly body: unknown;
}

/** A running fake; `close()` it in `afterAll`. */
export interface FakeEmbeddingsServer {
  /** Base URL, `/v1` included, to pass as the embedder's `baseUrl`. */
  readonly url: string;
  readonly requests: RecordedEmbeddingsRequest[];
  /** Most requests being handled at the same time since the last `reset()`. */
  readonly maxInFlight: number;
  setBehaviour(behaviour: FakeEmbeddingsBehaviour, options?: { latencyMs?: number }): void;
  setModel(model: FakeEmbeddingsModel): void;
  /** Back to `succeed`, no latency, the default model; clears `requests` and `maxInFlight`. */
  reset(): void;
  close(): Promise<void>;
}

/**
 * The vector the fake returns for `text` at `dimension` (before `scale`): the native vector cut
 * to `dimension` values and re-normalised, as text-embedding-3 shortens its embeddings.
 */
export function fakeOpenAiEmbedding(
  text: string,
  nativeDimension: number,
  dimension = nativeDimension,
): number[] {
  const cut = fakeTitanEmbedding(text, nativeDimension).slice(0, dimension);
  const norm = Math.sqrt(cut.reduce((sum, x) => sum + x * x, 0));
  return cut.map((x) => x / norm);
}

/** OpenAI's error JSON. */
function errorBody(status: number, message?: string): string {
  const [text, type] =
    status === 429
      ? ['Rate limit reached for requests', 'rate_limit_exceeded']
      : status === 401
        ? ['Incorrect API key provided', 'invalid_api_key']
        : status >= 500
          ? ['The server had an error while processing your request', 'server_error']
          : ['The request is not valid', 'invalid_request_error'];
  return JSON.stringify({ error: { message: message ?? text, type, param: null, code: type } });
}

function countWords(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

/** Starts the fake on a free port of 127.0.0.1. */
export async function startFakeOpenAiEmbeddings(): Promise<FakeEmbeddingsServer> {
  const requests: RecordedEmbeddingsRequest[] = [];
  let behaviour: FakeEmbeddingsBehaviour = { kind: 'succeed' };
  let latencyMs = 0;
  let served = 0;
  let model: FakeEmbeddingsModel = {};
  let inFlight = 0;
  let maxInFlight = 0;
  const timers = new Set<NodeJS.Timeout>();
  const stalled = new Set<ServerResponse>();

  function later(ms: number, fn: () => void): void {
    const timer = setTimeout(() => {
      timers.delete(timer);
      fn();
    }, ms);
    timers.add(timer);
  }

  /** The reply to a routed request: status, body, extra headers; null to stall. */
  function reply(
    headers: IncomingHttpHeaders,
    body: unknown,
  ): [number, string, Record<string, string>] | null {
    served++;
    switch (behaviour.kind) {
      case 'fail':
        if (served <= behaviour.times) {
          const retry: Record<string, string> =
            behaviour.retryAfterSeconds !== undefined
              ? { 'retry-after': String(behaviour.retryAfterSeconds) }
              : {};
          return [behaviour.status, errorBody(behaviour.status), retry];
        }
        break;
      case 'always-fail':
        return [behaviour.status, errorBody(behaviour.status), {}];
      case 'stall':
        if (served <= behaviour.times) return null;
        break;
      default:
        break;
    }
    if (model.apiKey !== undefined && headers.authorization !== `Bearer ${model.apiKey}`) {
      return [401, errorBody(401), {}];
    }
    const request = body as { model?: unknown; input?: unknown; dimensions?: unknown } | undefined;
    if (typeof request?.model !== 'string' || request.model === '') {
      return [400, errorBody(400, 'you must provide a model parameter'), {}];
    }
    const input = typeof request.input === 'string' ? [request.input] : request.input;
    if (
      !Array.isArray(input) ||
      input.length === 0 ||
      !input.every((t) => typeof t === 'string' && t !== '')
    ) {
      return [
        400,
        errorBody(400, "'input' must be a non-empty string or array of non-empty strings"),
        {},
      ];
    }
    const maxInputs = model.maxInputs ?? 2048;
    if (input.length > maxInputs) {
      return [
        400,
        errorBody(400, `'input' : maximum ${maxInputs} inputs per request, got ${input.length}`),
        {},
      ];
    }
    const native = model.nativeDimension ?? 768;
    let dimension = native;
    if (request.dimensions !== undefined) {
      if (model.dimensions === 'reject') {
        return [400, errorBody(400, 'This model does not support specifying dimensions.'), {}];
      }
      if (
        !Number.isInteger(request.dimensions) ||
        (request.dimensions as number) < 1 ||
        (request.dimensions as number) > native
      ) {
        return [400, errorBody(400, `Invalid 'dimensions': must be 1-${native}`), {}];
      }
      dimension = request.dimensions as number;
    }
    if (behaviour.kind === 'malformed') {
      switch (behaviour.reply) {
        case 'not-json':
          return [200, '<html>gateway</html>', { 'content-type': 'text/html' }];
        case 'missing-data':
          return [200, JSON.stringify({ object: 'list', model: request.model }), {}];
        case 'too-few':
          input.pop();
          break;
        case 'wrong-dimension':
          dimension = dimension === 256 ? 128 : 256;
          break;
      }
    }
    const scale = model.scale ?? 1;
    const data = (input as string[]).map((text, index) => ({
      object: 'embedding',
      index,
      embedding: fakeOpenAiEmbedding(text, Math.max(native, dimension), dimension).map(
        (x) => x * scale,
      ),
    }));
    if (model.reverseOrder) data.reverse();
    const tokens = (input as string[]).reduce((sum, text) => sum + countWords(text), 0);
    return [
      200,
      JSON.stringify({
        object: 'list',
        data,
        model: request.model,
        usage: { prompt_tokens: tokens, total_tokens: tokens },
      }),
      {},
    ];
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '/';
      if (req.method !== 'POST' || path !== '/v1/embeddings') {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(errorBody(404, `Unknown request URL: ${req.method} ${path}`));
        return;
      }
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown = raw;
      try {
        body = JSON.parse(raw);
      } catch {
        // Kept as the raw string: the test can assert on it.
      }
      requests.push({ method: req.method, path, headers: req.headers, body });
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      const answer = reply(req.headers, body);
      if (answer === null) {
        stalled.add(res);
        res.on('close', () => {
          stalled.delete(res);
          inFlight--;
        });
        return;
      }
      later(latencyMs, () => {
        inFlight--;
        if (res.destroyed) return;
        const [status, text, headers] = answer;
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(text);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    get maxInFlight() {
      return maxInFlight;
    },
    setBehaviour(next, options) {
      behaviour = next;
      latencyMs = options?.latencyMs ?? 0;
      served = 0;
    },
    setModel(next) {
      model = next;
    },
    reset() {
      behaviour = { kind: 'succeed' };
      latencyMs = 0;
      served = 0;
      model = {};
      maxInFlight = 0;
      requests.length = 0;
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      for (const res of stalled) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) =>
        server.close((err) => (err ? reject(err) : resolve())),
      );
    },
  };
}
