/**
 * A streamed request (request-lifecycle.ts runStreamedRequest): the status line leaves with the
 * first event, an error before it is the JSON error model with its status, an error after it is
 * the route's error event, and the admission is settled with the request's status.
 */
import { createLogger, createMetrics } from '../adapters/observability/powertools';
import { NotFoundError, type ErrorBody } from '../core/errors';
import type { Admission, Limiter } from '../core/limits/limiter';
import * as z from '../core/zod';
import { buildApiEvent } from './api-event';
import { runStreamedRequest, type EventStream } from './request-lifecycle';

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

function recordingStream(): EventStream & {
  log: (string | [number, Record<string, string>])[];
  ended: number;
} {
  const log: (string | [number, Record<string, string>])[] = [];
  const s = {
    log,
    ended: 0,
    start: (status: number, headers: Record<string, string>) => void log.push([status, headers]),
    write: (chunk: string) => void log.push(chunk),
    end: () => {
      s.ended += 1;
    },
  };
  return s;
}

const event = buildApiEvent({
  method: 'POST',
  resource: '/test-stream',
  body: '{}',
  claims: { sub: 'alice', 'custom:tenant_id': 'acme' },
});

/** Events `a` and `b`, failing before the first or after it. */
const work =
  (failure: 'none' | 'before' | 'after') =>
  async (_req: unknown, write: (chunk: string) => void): Promise<void> => {
    if (failure === 'before') throw new NotFoundError('No such thread');
    write('data: a\n\n');
    if (failure === 'after') throw new Error('boom');
    write('data: b\n\n');
  };

const errorEvent = ({ error }: ErrorBody) =>
  `data: ${JSON.stringify({ type: 'error', code: error.code })}\n\n`;

async function run(failure: 'none' | 'before' | 'after') {
  const limiter = recordingLimiter();
  const stream = recordingStream();
  const status = await runStreamedRequest(
    { logger, metrics, limiter },
    { route: 'test-stream', schema: z.looseObject({}), errorEvent },
    event,
    stream,
    work(failure),
  );
  return { status, stream, limiter };
}

describe('a streamed request', () => {
  it('sends the status line and headers with the first event, then every event, and ends once', async () => {
    const { status, stream, limiter } = await run('none');
    expect(status).toBe(200);
    expect(stream.log).toEqual([
      [
        200,
        expect.objectContaining({
          'content-type': 'text/event-stream; charset=utf-8',
          'x-ratelimit-limit': '60',
        }),
      ],
      'data: a\n\n',
      'data: b\n\n',
    ]);
    expect(stream.ended).toBe(1);
    expect(limiter.settled).toEqual([200]);
  });

  it('answers an error before the first event with the error model and its status', async () => {
    const { status, stream, limiter } = await run('before');
    expect(status).toBe(404);
    expect(stream.log).toHaveLength(2);
    expect(stream.log[0]).toEqual([
      404,
      expect.objectContaining({ 'content-type': 'application/json; charset=utf-8' }),
    ]);
    expect(JSON.parse(stream.log[1] as string)).toEqual({
      error: { code: 'not_found', message: 'No such thread', retryable: false },
    });
    expect(stream.ended).toBe(1);
    expect(limiter.settled).toEqual([404]);
  });

  it("reports an error after the first event as the route's error event, settled as a 5xx", async () => {
    const { stream, limiter } = await run('after');
    expect(stream.log.slice(1)).toEqual([
      'data: a\n\n',
      `data: ${JSON.stringify({ type: 'error', code: 'internal_error' })}\n\n`,
    ]);
    expect(stream.ended).toBe(1);
    // A 5xx is refunded, although the caller saw a 200 status line.
    expect(limiter.settled).toEqual([500]);
  });
});
