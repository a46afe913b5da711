/**
 * A local HTTP/1.1 server that answers as a Cohere-style rerank API does (`POST /v1/rerank`, the
 * shape of Cohere, Jina, vLLM and LiteLLM): `{ model, query, documents, top_n }` in,
 * `{ id, results: [{ index, relevance_score }], meta }` out, best first, at most `top_n`. It
 * refuses what those servers refuse (no model, an empty query, no documents or more than 1,000,
 * a `top_n` below 1), with Cohere's `{ message }` error body.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** How the fake answers the next requests. */
type FakeRerankBehaviour =
  | { kind: 'succeed' }
  /** Answer every request with `status`. */
  | { kind: 'always-fail'; status: number }
  /** Hold every request until the client gives up. */
  | { kind: 'stall' }
  /** 200 with `not-json`, `missing-results` or `bad-index` (an index past the documents). */
  | { kind: 'malformed'; reply: 'not-json' | 'missing-results' | 'bad-index' };

interface RecordedRerankRequest {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: unknown;
}

export interface FakeRerankServer {
  /** Base URL, `/v1` included. */
  readonly url: string;
  readonly requests: RecordedRerankRequest[];
  setBehaviour(behaviour: FakeRerankBehaviour): void;
  reset(): void;
  close(): Promise<void>;
}

function words(text: string): Set<string> {
  return new Set(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);
}

/**
 * The relevance the fakes give `document` for `query`: the share of the query's distinct words
 * it contains, so tests can predict the order.
 */
function fakeRelevance(query: string, document: string): number {
  const asked = words(query);
  if (asked.size === 0) return 0;
  const present = words(document);
  let hits = 0;
  for (const word of asked) if (present.has(word)) hits++;
  return hits / asked.size;
}

/** The ranked results both fakes return: best first, ties by index, at most `topN`. */
export function fakeRerankResults(
  query: string,
  documents: readonly string[],
  topN: number,
): { index: number; relevance_score: number }[] {
  return documents
    .map((document, index) => ({ index, relevance_score: fakeRelevance(query, document) }))
    .sort((a, b) => b.relevance_score - a.relevance_score || a.index - b.index)
    .slice(0, topN);
}

/** Why a rerank request is refused, or null when it is valid. */
export function rerankRequestProblem(body: unknown): string | null {
  const request = body as { query?: unknown; documents?: unknown; top_n?: unknown } | undefined;
  if (typeof request?.query !== 'string' || request.query.trim() === '') {
    return 'invalid request: query must be a non-empty string';
  }
  const { documents } = request;
  if (
    !Array.isArray(documents) ||
    documents.length === 0 ||
    !documents.every((d) => typeof d === 'string')
  ) {
    return 'invalid request: documents must be a non-empty array of strings';
  }
  if (documents.length > 1000) return 'invalid request: too many documents, the limit is 1000';
  if (
    request.top_n !== undefined &&
    (!Number.isInteger(request.top_n) || (request.top_n as number) < 1)
  ) {
    return 'invalid request: top_n must be a positive integer';
  }
  return null;
}

/** Starts the fake on a free port of 127.0.0.1. */
export async function startFakeRerank(): Promise<FakeRerankServer> {
  const requests: RecordedRerankRequest[] = [];
  let behaviour: FakeRerankBehaviour = { kind: 'succeed' };
  const stalled = new Set<ServerResponse>();

  function send(res: ServerResponse, status: number, body: unknown): void {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '/';
      if (req.method !== 'POST' || path !== '/v1/rerank') {
        send(res, 404, { message: `no route for ${req.method} ${path}` });
        return;
      }
      let body: unknown = Buffer.concat(chunks).toString('utf8');
      try {
        body = JSON.parse(body as string);
      } catch {
        // Kept raw.
      }
      requests.push({ path, headers: req.headers, body });
      switch (behaviour.kind) {
        case 'always-fail':
          send(res, behaviour.status, { message: 'the fake fails this request' });
          return;
        case 'stall':
          stalled.add(res);
          res.on('close', () => stalled.delete(res));
          return;
        default:
          break;
      }
      const request = body as {
        model?: unknown;
        query: string;
        documents: string[];
        top_n?: number;
      };
      if (typeof request?.model !== 'string' || request.model === '') {
        send(res, 400, { message: 'invalid request: model is required' });
        return;
      }
      const problem = rerankRequestProblem(body);
      if (problem) {
        send(res, 400, { message: problem });
        return;
      }
      const results = fakeRerankResults(
        request.query,
        request.documents,
        request.top_n ?? request.documents.length,
      );
      if (behaviour.kind === 'malformed') {
        if (behaviour.reply === 'not-json') return send(res, 200, '<html>proxy</html>');
        if (behaviour.reply === 'missing-results') return send(res, 200, { id: 'x' });
        results[0] = { index: request.documents.length + 5, relevance_score: 1 };
      }
      send(res, 200, {
        id: `fake-rerank-${requests.length}`,
        results,
        meta: { billed_units: { search_units: 1 } },
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    setBehaviour(next) {
      behaviour = next;
    },
    reset() {
      behaviour = { kind: 'succeed' };
      requests.length = 0;
    },
    async close() {
      for (const res of stalled) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) =>
        server.close((err) => (err ? reject(err) : resolve())),
      );
    },
  };
}
