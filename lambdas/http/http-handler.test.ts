import { parseEnv, lambdaEnvSchema } from '../adapters/aws/lambda-env';
import { ConfigError, ValidationError } from '../core/errors';
import { FILTER_OPERATORS } from '../core/retrieval/filters';
import { answerRequestSchema } from '../rag-answer/schema';
import { searchRequestSchema } from '../rag-search/schema';
import { statsQuerySchema } from '../admin/schema';
import { parseJsonBody, parseOrThrow, parseQuery } from './http-handler';
import { MAX_BODY_BYTES } from './request-limits';

/** The error `fn` throws (the test fails if it throws none). */
function thrownBy(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected an error');
}

// The 422 message names the field and says what is wrong, in English (zod/mini loads no locale
// by itself; lambdas/core/zod.ts installs it).
describe('parseOrThrow with the schemas the handlers validate with', () => {
  it.each<[string, unknown, string]>([
    [
      'a blank query',
      { query_text: '   ' },
      'query_text: Too small: expected string to have >=1 characters',
    ],
    [
      'a top_k over 50',
      { query_text: 'q', top_k: 51 },
      'top_k: Too big: expected number to be <=50',
    ],
    [
      'an unknown mode',
      { query_text: 'q', mode: 'fast' },
      'mode: Invalid option: expected one of "hybrid"|"vector"|"keyword"',
    ],
    ['an unknown field', { query_text: 'q', extra: 1 }, 'body: Unrecognized key: "extra"'],
    [
      'a document id that is not a UUID',
      { query_text: 'q', filters: { document_ids: ['nope'] } },
      'filters.document_ids.0: Invalid UUID',
    ],
  ])('rejects %s with a 422 naming the field', (_case, body, message) => {
    const err = thrownBy(() => parseOrThrow(searchRequestSchema, body));

    expect(err).toBeInstanceOf(ValidationError);
    expect(err).toMatchObject({ code: 'validation_error', status: 422, message });
  });

  it('keeps a 422 small whatever the body: at most 20 problems listed, each clipped', () => {
    const manyKeys = Object.fromEntries([
      ['query_text', 'q'],
      ...Array.from({ length: 60_000 }, (_, i) => [`k${i}`, 1]),
    ]);
    const longKey = { query_text: 'q', ['k'.repeat(500_000)]: 1 };
    const badIds = { query_text: 'q', filters: { document_ids: Array(100).fill('nope') } };
    const nulInLongKey = { query_text: 'q', [`${'k'.repeat(500_000)}\u0000`]: 1 };
    const emojiKey = { query_text: 'q', ['😀'.repeat(200)]: 1 };
    for (const body of [manyKeys, longKey, badIds, nulInLongKey, emojiKey]) {
      const err = thrownBy(() => parseOrThrow(searchRequestSchema, body)) as ValidationError;
      expect(err).toBeInstanceOf(ValidationError);
      const json = JSON.stringify({ message: err.message, details: err.options.details });
      expect(json).not.toMatch(/.{5000}/);
      // Cut between characters, never inside one: no lone surrogate.
      expect(json).not.toMatch(/\\ud[89ab]/i);
    }
    const listed = (thrownBy(() => parseOrThrow(searchRequestSchema, badIds)) as ValidationError)
      .options.details;
    expect(listed).toHaveLength(21);
    expect((listed as { message: string }[])[20]).toEqual({
      path: '',
      message: '80 more problems not listed',
    });
  });

  it('returns the parsed body with its defaults', () => {
    expect(parseOrThrow(searchRequestSchema, { query_text: '  q  ' })).toEqual({
      query_text: 'q',
      top_k: 8,
      mode: 'hybrid',
      filters: {},
    });
  });
});

describe('the query string', () => {
  it('names an unknown parameter as part of the query, not the body', () => {
    const err = thrownBy(() => parseQuery(statsQuerySchema, { tenant: 'demo' }));

    expect(err).toBeInstanceOf(ValidationError);
    expect(err).toMatchObject({
      status: 422,
      message: 'query: Unrecognized key: "tenant"',
      options: { details: [{ path: 'query', message: 'Unrecognized key: "tenant"' }] },
    });
  });

  it('names a bad parameter by its name', () => {
    expect(thrownBy(() => parseQuery(statsQuerySchema, { window_days: 'x' }))).toMatchObject({
      message: expect.stringMatching(/^window_days: /),
    });
  });
});

describe('the value lists of in and notIn filters', () => {
  const values = (n: number) => Array.from({ length: n }, (_, i) => `v${i}`);
  const body = (filter: unknown) => ({ query_text: 'x', filters: { metadata: filter } });

  it.each([
    [
      'in of 101 values',
      { in: { key: 'a', value: values(101) } },
      'filters.metadata: in.value: at most 100 values',
    ],
    [
      'notIn of 101 values',
      { notIn: { key: 'a', value: values(101) } },
      'filters.metadata: notIn.value: at most 100 values',
    ],
    [
      'in of 101 values inside andAll and orAll',
      {
        andAll: [
          { equals: { key: 'b', value: 1 } },
          { orAll: [{ in: { key: 'a', value: values(101) } }] },
        ],
      },
      'filters.metadata: andAll.1.orAll.0.in.value: at most 100 values',
    ],
    [
      'an unknown operator',
      { within: { key: 'a', value: values(3) } },
      'filters.metadata: unknown or malformed metadata filter: use one of equals, notEquals, in, notIn, greaterThan, greaterThanOrEquals, lessThan, lessThanOrEquals, startsWith, andAll, orAll',
    ],
    [
      'two operators in one object',
      { in: { key: 'a', value: values(3) }, equals: { key: 'a', value: 1 } },
      'filters.metadata: unknown or malformed metadata filter',
    ],
  ])('refuses %s with a 422 that says what is wrong', (_case, filter, message) => {
    for (const schema of [searchRequestSchema, answerRequestSchema]) {
      const err = thrownBy(() => parseOrThrow(schema, body(filter)));

      expect(err).toBeInstanceOf(ValidationError);
      expect((err as Error).message).toContain(message);
    }
  });

  it.each(FILTER_OPERATORS)('judges a malformed %s filter by its own operator', (operator) => {
    const err = thrownBy(() => parseOrThrow(searchRequestSchema, body({ [operator]: {} })));

    expect((err as Error).message).toMatch(new RegExp(`filters\\.metadata: ${operator}[.:]`));
  });

  it('takes 100 values', () => {
    const filter = { in: { key: 'a', value: values(100) } };

    expect(parseOrThrow(searchRequestSchema, body(filter)).filters.metadata).toEqual(filter);
  });
});

describe('the metadata filter depth of /api/rag/search and /api/rag/answer', () => {
  /** A metadata filter of `depth` levels: andAll nested around one equals. */
  const nested = (depth: number): unknown =>
    depth === 1 ? { equals: { key: 'team', value: 'a' } } : { andAll: [nested(depth - 1)] };

  it.each([
    ['/api/rag/search', searchRequestSchema],
    ['/api/rag/answer', answerRequestSchema],
  ] as const)('%s takes 5 levels and refuses 6 with a 422 at filters.metadata', (_r, schema) => {
    const body = (depth: number) => ({ query_text: 'q', filters: { metadata: nested(depth) } });

    expect(parseOrThrow(schema, body(5)).filters.metadata).toEqual(nested(5));
    expect(thrownBy(() => parseOrThrow(schema, body(6)))).toMatchObject({
      status: 422,
      message:
        'filters.metadata: metadata filters are at most 5 levels deep, comparisons included (andAll / orAll nest at most 4 levels)',
    });
  });
});

describe('input PostgreSQL cannot store or the server cannot afford', () => {
  /** `depth` levels of andAll around one equals. */
  const nested = (depth: number): unknown => {
    let filter: unknown = { equals: { key: 'team', value: 'a' } };
    for (let i = 1; i < depth; i++) filter = { andAll: [filter] };
    return filter;
  };
  const leaves = (n: number) =>
    Array.from({ length: n }, (_, i) => ({ equals: { key: `k${i}`, value: i } }));
  /** An andAll of `n` comparisons: n + 1 operators. */
  const group = (n: number) => ({ andAll: leaves(n) });

  it.each<[string, unknown, string]>([
    ['a NUL in the query', { query_text: 'a\u0000b' }, 'query_text: contains a character'],
    ['a lone surrogate in the query', { query_text: 'a\uD800' }, 'query_text: contains'],
    [
      'a NUL in a metadata value',
      { query_text: 'q', filters: { metadata: { equals: { key: 'k', value: '\u0000' } } } },
      'filters.metadata.equals.value: contains',
    ],
    ['a lone surrogate in an object key', { query_text: 'q', 'x\uDC00': 1 }, 'x\\udc00: contains'],
    [
      'year 0 (PostgreSQL has none)',
      { query_text: 'q', filters: { date_from: '0000-01-01' } },
      'filters.date_from: years start at 0001',
    ],
    [
      'a UTC offset past 15:59 (PostgreSQL refuses it)',
      { query_text: 'q', filters: { date_to: '2020-01-01T00:00:00+23:59' } },
      'filters.date_to: UTC offsets are at most 15:59 hours',
    ],
    [
      'a filter nested 1,000 deep',
      { query_text: 'q', filters: { metadata: nested(1000) } },
      'filters.metadata.andAll.0.andAll',
    ],
    [
      'a filter nested 12 deep (under the JSON depth cap)',
      { query_text: 'q', filters: { metadata: nested(12) } },
      'filters.metadata: metadata filters are at most 5 levels deep, comparisons included (andAll / orAll nest at most 4 levels)',
    ],
    [
      'a filter of 101 operators',
      { query_text: 'q', filters: { metadata: { orAll: [19, 19, 19, 19, 19].map(group) } } },
      'filters.metadata: metadata filters hold at most 100 operators',
    ],
  ])('refuses %s with a 422 naming the field', (_case, body, message) => {
    for (const schema of [searchRequestSchema, answerRequestSchema]) {
      const err = thrownBy(() => parseOrThrow(schema, body));

      expect(err).toBeInstanceOf(ValidationError);
      expect((err as Error).message).toContain(message);
    }
  });

  it('accepts a filter of exactly 100 operators, and years from 0001', () => {
    const body = {
      query_text: 'q',
      filters: {
        date_from: '0001-01-01',
        metadata: { orAll: [19, 19, 19, 19, 18].map(group) },
      },
    };
    expect(parseOrThrow(searchRequestSchema, body).filters.metadata).toEqual(body.filters.metadata);
  });

  it('refuses a body over MAX_BODY_BYTES with a 413, plain or base64, and takes one at it', () => {
    const over = JSON.stringify({ query_text: 'x'.repeat(MAX_BODY_BYTES) });
    const at = JSON.stringify({ q: 'x'.repeat(MAX_BODY_BYTES - 8) });

    expect(thrownBy(() => parseJsonBody({ body: over }))).toMatchObject({
      status: 413,
      code: 'payload_too_large',
    });
    expect(
      thrownBy(() =>
        parseJsonBody({ body: Buffer.from(over).toString('base64'), isBase64Encoded: true }),
      ),
    ).toMatchObject({ status: 413 });
    expect(Buffer.byteLength(at)).toBe(MAX_BODY_BYTES);
    expect(parseJsonBody({ body: at })).toEqual({ q: 'x'.repeat(MAX_BODY_BYTES - 8) });
  });
});

describe('parseEnv', () => {
  it('names each bad variable in English', () => {
    const err = thrownBy(() => parseEnv(lambdaEnvSchema, { AWS_REGION: 'eu-west-1' }));

    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toBe(
      'Invalid environment: DB_SECRET_ARN: Invalid input: expected string, received undefined',
    );
  });
});
