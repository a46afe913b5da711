import type { Context } from 'aws-lambda';
import { createLogger, createMetrics } from '../adapters/observability/powertools';
import { NotFoundError } from '../core/errors';
import * as z from '../core/zod';
import { buildApiEvent } from './api-event';
import { corsResponseHeaders } from './cors';
import { createHttpHandler } from './http-handler';

process.env.POWERTOOLS_METRICS_DISABLED = 'true';
const logger = createLogger({ serviceName: 'cors-test', logLevel: 'SILENT' });
const context = { functionName: 'cors-test', awsRequestId: 'r1' } as Context;

describe('CORS headers on responses', () => {
  it('allows any origin with *, echoes a listed one, and names no other', () => {
    expect(corsResponseHeaders(['*'], 'https://a.example')).toMatchObject({
      'access-control-allow-origin': '*',
    });
    expect(corsResponseHeaders(['https://a.example'], 'https://a.example')).toMatchObject({
      'access-control-allow-origin': 'https://a.example',
      vary: 'origin',
    });
    expect(corsResponseHeaders(['https://a.example'], 'https://b.example')).toEqual({});
    expect(corsResponseHeaders(['*'], undefined)).toEqual({});
  });

  // A REST API's proxy integration passes a function's response as it is: the headers are the
  // function's to set, on successes and errors alike.
  it.each([
    ['a success', false, 200],
    ['an error', true, 404],
  ])('are set by the handler builder on %s', async (_case, fail, status) => {
    const handler = createHttpHandler(
      { logger, metrics: createMetrics('cors-test', logger), corsOrigins: ['https://a.example'] },
      { route: 'health', schema: z.looseObject({}), authenticated: false },
      async () => {
        if (fail) throw new NotFoundError('No such thing');
        return { body: { ok: true } };
      },
    );
    const event = (origin: string) =>
      buildApiEvent({ method: 'GET', resource: '/api/health', headers: { Origin: origin } });
    const allowed = await handler(event('https://a.example'), context);
    expect(allowed.statusCode).toBe(status);
    expect(allowed.headers['access-control-allow-origin']).toBe('https://a.example');
    const other = await handler(event('https://b.example'), context);
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
  });
});
