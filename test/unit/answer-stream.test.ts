/**
 * The streaming answer's entry (lambdas/rag-answer/stream.ts) reads the REST API's proxy event:
 * the route, and the claims the Cognito authorizer verified. Errors before the first byte are
 * JSON error responses with their status, written through the runtime's HttpResponseStream.
 */
import { Writable } from 'node:stream';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';

interface Written {
  prelude?: { statusCode: number; headers?: Record<string, string> };
  body: string;
}

function responseStream(): { stream: Writable; written: Written } {
  const written: Written = { body: '' };
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      written.body += chunk.toString();
      done();
    },
  });
  (stream as Writable & { written: Written }).written = written;
  return { stream, written };
}

// The Lambda Node.js runtime's global, as the handler module expects it at load.
(globalThis as Record<string, unknown>).awslambda = {
  streamifyResponse: (fn: unknown) => fn,
  HttpResponseStream: {
    from(stream: Writable & { written: Written }, prelude: Written['prelude']) {
      stream.written.prelude = prelude;
      return stream;
    },
  },
};
Object.assign(process.env, {
  AWS_REGION: 'eu-west-1',
  DB_SECRET_ARN: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:db',
  LIMITS_TABLE: 'limits',
  TOKEN_AUDIENCES: '["our-client"]',
  CORS_ORIGINS: '[]',
  POWERTOOLS_METRICS_DISABLED: 'true',
  POWERTOOLS_LOG_LEVEL: 'SILENT',
});

const event = (overrides: Partial<APIGatewayProxyEvent>): APIGatewayProxyEvent =>
  ({
    httpMethod: 'POST',
    resource: '/api/rag/answer',
    path: '/api/rag/answer',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query_text: 'How long do refunds take?' }),
    isBase64Encoded: false,
    requestContext: { authorizer: null },
    ...overrides,
  }) as unknown as APIGatewayProxyEvent;

const context = { functionName: 'stream', awsRequestId: 'r1' } as unknown as Context;

describe('the streaming answer entry', () => {
  let streamHandler: (e: APIGatewayProxyEvent, s: Writable, c: Context) => Promise<void>;
  beforeAll(async () => {
    ({ streamHandler } = await import('../../lambdas/rag-answer/stream'));
  });

  it('answers 401 when the request carries no verified claims', async () => {
    const { stream, written } = responseStream();
    await streamHandler(event({}), stream, context);
    expect(written.prelude?.statusCode).toBe(401);
    expect(written.prelude?.headers?.['content-type']).toContain('application/json');
    expect(JSON.parse(written.body)).toMatchObject({ error: { code: 'authentication_required' } });
    expect(stream.writableEnded).toBe(true);
  });

  it('answers 403 when the verified claims name no tenant', async () => {
    const { stream, written } = responseStream();
    const claims = { sub: 'alice', 'cognito:username': 'alice', aud: 'our-client' };
    await streamHandler(
      event({
        requestContext: { authorizer: { claims } },
      } as unknown as Partial<APIGatewayProxyEvent>),
      stream,
      context,
    );
    expect(written.prelude?.statusCode).toBe(403);
    expect(JSON.parse(written.body)).toMatchObject({ error: { code: 'forbidden' } });
  });

  it('answers 401 with the error model for an ID token of another app client of the pool, streamed or buffered', async () => {
    const claimSets = [
      { sub: 'alice', 'custom:tenant_id': 'acme', aud: 'another-client' },
      { sub: 'alice', 'custom:tenant_id': 'acme' },
    ];
    const bodies = [{ query_text: 'q', stream: true }, { query_text: 'q' }];
    for (const [claims, body] of claimSets.flatMap((c) => bodies.map((b) => [c, b] as const))) {
      const { stream, written } = responseStream();
      await streamHandler(
        event({
          body: JSON.stringify(body),
          requestContext: { authorizer: { claims } },
        } as unknown as Partial<APIGatewayProxyEvent>),
        stream,
        context,
      );
      expect(written.prelude?.statusCode).toBe(401);
      expect(JSON.parse(written.body)).toMatchObject({
        error: { code: 'authentication_required', retryable: false },
      });
    }
  });

  it('answers 404 for another method or resource', async () => {
    for (const e of [event({ httpMethod: 'GET' }), event({ resource: '/other' })]) {
      const { stream, written } = responseStream();
      await streamHandler(e, stream, context);
      expect(written.prelude?.statusCode).toBe(404);
    }
  });

  it('serves the chat route of seed 003 on the same entry, with the same checks', async () => {
    const chat = {
      resource: '/api/chat/conversations/{conversationId}/messages',
      path: '/api/chat/conversations/3f0c6a52-7d1e-4c3b-9a55-0b6f1e2d4c01/messages',
      pathParameters: { conversationId: '3f0c6a52-7d1e-4c3b-9a55-0b6f1e2d4c01' },
      body: JSON.stringify({ content: 'How does semantic search work?' }),
    };
    const anonymous = responseStream();
    await streamHandler(event(chat), anonymous.stream, context);
    expect(anonymous.written.prelude?.statusCode).toBe(401);
    const noTenant = responseStream();
    await streamHandler(
      event({
        ...chat,
        requestContext: { authorizer: { claims: { sub: 'alice', aud: 'our-client' } } },
      } as unknown as Partial<APIGatewayProxyEvent>),
      noTenant.stream,
      context,
    );
    expect(noTenant.written.prelude?.statusCode).toBe(403);
    expect(JSON.parse(noTenant.written.body)).toMatchObject({ error: { code: 'forbidden' } });
  });
});
