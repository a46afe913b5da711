import { buildApiEvent, isBinaryMediaType, normaliseEvent } from './api-event';

describe('normaliseEvent: a REST API proxy event, as handlers read it', () => {
  it('keys the route by method and resource, not by the request path', () => {
    const event = buildApiEvent({
      method: 'post',
      resource: '/api/documents/{id}/retry',
      pathParameters: { id: 'd-1' },
    });
    expect(event.path).toBe('/api/documents/d-1/retry');
    expect(normaliseEvent(event).routeKey).toBe('POST /api/documents/{id}/retry');
  });

  it('decodes path parameters, which API Gateway passes percent-encoded', () => {
    const request = normaliseEvent(
      buildApiEvent({
        method: 'GET',
        resource: '/api/threads/{id}',
        pathParameters: { id: 'abc%20d%C3%A9f', bad: '%E0%A4%A' },
      }),
    );
    expect(request.pathParameters).toEqual({ id: 'abc déf', bad: '%E0%A4%A' });
  });

  it('reads parameters and headers named like Object.prototype members as plain names', () => {
    // As API Gateway's JSON arrives: `__proto__` an own key, not the prototype.
    const event = JSON.parse(
      JSON.stringify(
        buildApiEvent({ method: 'GET', resource: '/api/search', pathParameters: { id: 'x' } }),
      ).replace(
        '"multiValueQueryStringParameters":null',
        '"multiValueQueryStringParameters":{"__proto__":["a"],"constructor":["b"],"toString":["c"]},' +
          '"multiValueHeaders":{"__proto__":["h"],"Constructor":["k"]}',
      ),
    );
    const request = normaliseEvent(event);
    expect(Object.entries(request.queryValues)).toEqual([
      ['__proto__', ['a']],
      ['constructor', ['b']],
      ['toString', ['c']],
    ]);
    expect(Object.getPrototypeOf(request.query)).toBeNull();
    expect(Object.entries(request.headers)).toEqual([
      ['__proto__', 'h'],
      ['constructor', 'k'],
    ]);
    // Nothing inherited answers for a name that was not sent.
    expect('hasOwnProperty' in request.query).toBe(false);
    expect('constructor' in request.pathParameters).toBe(false);
  });

  it('keeps every value of a repeated query parameter (the single-value map has the last)', () => {
    const event = buildApiEvent({
      method: 'GET',
      resource: '/api/search',
      query: { q: ['a', 'b'], rag: 'true' },
    });
    expect(event.queryStringParameters).toEqual({ q: 'b', rag: 'true' });
    const request = normaliseEvent(event);
    expect(request.query).toEqual({ q: 'a,b', rag: 'true' });
    expect(request.queryValues).toEqual({ q: ['a', 'b'], rag: ['true'] });
  });

  it('reads the single-value maps when an event has no multi-value ones', () => {
    const request = normaliseEvent({
      ...buildApiEvent({ method: 'GET', resource: '/api/usage' }),
      headers: { 'Content-Type': 'text/plain' },
      multiValueHeaders: {},
      queryStringParameters: { limit: '5' },
      multiValueQueryStringParameters: null,
    });
    expect(request.headers).toEqual({ 'content-type': 'text/plain' });
    expect(request.query).toEqual({ limit: '5' });
  });

  it('lower-cases header names and joins repeated headers', () => {
    const request = normaliseEvent(
      buildApiEvent({
        method: 'POST',
        resource: '/api/upload',
        headers: { 'Content-Type': 'multipart/form-data; boundary=x', Accept: ['a', 'b'] },
      }),
    );
    expect(request.headers).toEqual({
      'content-type': 'multipart/form-data; boundary=x',
      accept: 'a, b',
    });
  });

  it('passes a base64 body through with its flag, and no body as null', () => {
    const bytes = Buffer.from([0xff, 0x00, 0x80]);
    const request = normaliseEvent(
      buildApiEvent({
        method: 'POST',
        resource: '/api/upload',
        body: bytes.toString('base64'),
        isBase64Encoded: true,
      }),
    );
    expect(request.isBase64Encoded).toBe(true);
    expect(Buffer.from(request.body ?? '', 'base64')).toEqual(bytes);
    expect(normaliseEvent(buildApiEvent({ method: 'GET', resource: '/x' })).body).toBeNull();
  });

  it('puts the verified claims where the Cognito authorizer does', () => {
    const event = buildApiEvent({ method: 'GET', resource: '/x', claims: { sub: 'u1' } });
    expect(event.requestContext.authorizer).toEqual({ claims: { sub: 'u1' } });
  });
});

describe('binary media types', () => {
  it('the multipart upload is binary; JSON and text are not', () => {
    expect(isBinaryMediaType('multipart/form-data; boundary=abc')).toBe(true);
    expect(isBinaryMediaType('application/json')).toBe(false);
    expect(isBinaryMediaType(undefined)).toBe(false);
  });
});
