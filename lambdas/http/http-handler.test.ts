import { parseEnv, lambdaEnvSchema } from '../adapters/aws/lambda-env';
import { ConfigError, ValidationError } from '../core/errors';
import { answerRequestSchema } from '../rag-answer/schema';
import { searchRequestSchema } from '../rag-search/schema';
import { parseOrThrow } from './http-handler';

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

  it('returns the parsed body with its defaults', () => {
    expect(parseOrThrow(searchRequestSchema, { query_text: '  q  ' })).toEqual({
      query_text: 'q',
      top_k: 8,
      mode: 'hybrid',
      filters: {},
    });
  });
});

describe('the metadata filter depth of /search and /answer', () => {
  /** A metadata filter of `depth` levels: andAll nested around one equals. */
  const nested = (depth: number): unknown =>
    depth === 1 ? { equals: { key: 'team', value: 'a' } } : { andAll: [nested(depth - 1)] };

  it.each([
    ['/search', searchRequestSchema],
    ['/answer', answerRequestSchema],
  ] as const)('%s takes 5 levels and refuses 6 with a 422 at filters.metadata', (_r, schema) => {
    const body = (depth: number) => ({ query_text: 'q', filters: { metadata: nested(depth) } });

    expect(parseOrThrow(schema, body(5)).filters.metadata).toEqual(nested(5));
    expect(thrownBy(() => parseOrThrow(schema, body(6)))).toMatchObject({
      status: 422,
      message: 'filters.metadata: metadata filters nest at most 5 levels deep',
    });
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
