/**
 * The request lifecycle with an event-stream response (http-handler.ts `serve`): the status
 * line leaves with the first event, an error before it is the JSON error model with its status,
 * an error after it is the route's error event, and the admission is settled with the status the
 * caller saw, on the streaming and the buffered transport alike.
 */
import type { Context } from 'aws-lambda';
import { createLogger, createMetrics } from '../adapters/observability/powertools';
import { NotFoundError } from '../core/errors';
import type { Admission, Limiter } from '../core/limits/limiter';
import * as z from '../core/zod';
import {
  createHttpHandler,
  createStreamingHandler,
  type ApiEvent,
  type EventStreamResponse,
  type ResponseTransport,
} from './http-handler';

process.env.POWERTOOLS_METRICS_DISABLED = 'true';

const logger = createLogger({ serviceName: 'test', logLevel: 'SILENT' });
const metrics = createMetrics('test', logger);

/** A limiter that admits everyone and records the status each admission is settled with. */
function recordingLimiter(): Limiter & { settled: number[] } {
  const settled: number[] = [];
  return {
    settled,
    admit: async () => ({ headers: { 'x-ratelimit-limit': '60' } }) as unknown as Admission,
    settle: async (_admission: Admission, outcome: { status: number }) => {
      settled.push(outcome.status);
    },
  } as unknown as Limiter & { settled: number[] };
}

function recordingTransport(): ResponseTransport & {
  log: (string | [number, Record<string, string>])[];
  ended: number;
} {
  const log: (string | [number, Record<string, string>])[] = [];
  let started = false;
  const t = {
    log,
    ended: 0,
    start(status: number, headers: Record<string, string>) {
      started = true;
      log.push([status, headers]);
    },
    write(chunk: string) {
      log.push(chunk);
    },
    end() {
      t.ended += 1;
    },
    get started() {
      return started;
    },
  };
  return t;
}

const event = {
  body: '{}',
  pathParameters: {},
  requestContext: { authorizer: { jwt: { claims: { sub: 'alice', 'custom:tenant_id': 'acme' } } } },
} as unknown as ApiEvent;

/** Events `a` and `b`, failing with `failure` before the first or after the first. */
const route = (failure: 'none' | 'before' | 'after') => async (): Promise<EventStreamResponse> => ({
  events: async (emit) => {
    if (failure === 'before') throw new NotFoundError('No such thread');
    emit('data: a\n\n');
    if (failure === 'after') throw new Error('boom');
    emit('data: b\n\n');
  },
  errorEvent: ({ error }) => `data: ${JSON.stringify({ type: 'error', code: error.code })}\n\n`,
});

const options = { route: 'test-stream', schema: z.looseObject({}) };

describe('an event-stream response through a streaming transport', () => {
  it('sends the status line and headers with the first event, then every event, and ends once', async () => {
    const limiter = recordingLimiter();
    const out = recordingTransport();
    await createStreamingHandler({ logger, metrics, limiter }, options, route('none'))(event, out);
    expect(out.log).toEqual([
      [
        200,
        expect.objectContaining({
          'content-type': 'text/event-stream; charset=utf-8',
          'x-ratelimit-limit': '60',
          'cache-control': 'no-store',
        }),
      ],
      'data: a\n\n',
      'data: b\n\n',
    ]);
    expect(out.ended).toBe(1);
    expect(limiter.settled).toEqual([200]);
  });

  it('answers an error before the first event with the error model and its status', async () => {
    const limiter = recordingLimiter();
    const out = recordingTransport();
    await createStreamingHandler(
      { logger, metrics, limiter },
      options,
      route('before'),
    )(event, out);
    expect(out.log).toHaveLength(2);
    expect(out.log[0]).toEqual([
      404,
      expect.objectContaining({ 'content-type': 'application/json; charset=utf-8' }),
    ]);
    expect(JSON.parse(out.log[1] as string)).toEqual({
      error: { code: 'not_found', message: 'No such thread', retryable: false },
    });
    expect(limiter.settled).toEqual([404]);
  });

  it('reports an error after the first event as the route error event, settled as a 5xx', async () => {
    const limiter = recordingLimiter();
    const out = recordingTransport();
    await createStreamingHandler({ logger, metrics, limiter }, options, route('after'))(event, out);
    expect(out.log.slice(1)).toEqual([
      'data: a\n\n',
      `data: ${JSON.stringify({ type: 'error', code: 'internal_error' })}\n\n`,
    ]);
    expect(out.ended).toBe(1);
    // A 5xx is refunded, although the caller saw a 200 status line.
    expect(limiter.settled).toEqual([500]);
  });
});

describe('the same response through the buffered transport', () => {
  const context = {} as Context;

  it('returns every event in one text/event-stream body', async () => {
    const handler = createHttpHandler({ logger, metrics }, options, route('none'));
    const result = await handler(event, context);
    expect(result.statusCode).toBe(200);
    expect(result.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(result.body).toBe('data: a\n\ndata: b\n\n');
  });

  it('returns an error before the first event as the error model with its status', async () => {
    const handler = createHttpHandler({ logger, metrics }, options, route('before'));
    const result = await handler(event, context);
    expect(result.statusCode).toBe(404);
    expect(JSON.parse(result.body as string)).toMatchObject({ error: { code: 'not_found' } });
  });
});
