/**
 * A property-based fuzz of every route in the route table (lambdas/http/api-routes.ts), through
 * the real local HTTP server and handlers, on PGlite and on PostgreSQL: requests built from each
 * route's OpenAPI description (so a new route is fuzzed without a line here), salted with hostile
 * values (wrong types, NUL and lone surrogates, huge and negative numbers, filters nested 1,000
 * deep or 20,000 wide, invalid JSON, wrong content types, oversized bodies, odd path parameters
 * and query strings, missing or foreign tokens). Every response must be below 500, and every
 * error must be the error model `{ "error": { "code", "message", "retryable" } }`.
 *
 * `FUZZ_RUNS` requests per route and engine (default 20);
 * `npm run fuzz` sets 10,000. `FUZZ_ENGINES=postgres` (or `pglite`) runs one engine only, and
 * `FUZZ_REPORT=<file>` writes the requests and status codes per route as JSON.
 */
import { writeFileSync } from 'node:fs';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import fc from 'fast-check';
import type { Database } from '../../lambdas/adapters/postgres/database';
import { parseLimitsConfig } from '../../lambdas/core/limits/config';
import { API_ROUTES, type ApiRoute } from '../../lambdas/http/api-routes';
import { buildOpenApi } from '../../lambdas/http/openapi';
import { MAX_BODY_BYTES } from '../../lambdas/http/request-limits';
import { startLocalApi, type LocalApi } from '../../local/api';
import { startLocalStack, type LocalStack } from '../../local/stack';
import { ENGINES, openTestDatabase, type EngineName } from '../support/databases';
import { createHashEmbedder } from '../support/hash-embedder';

process.env.POWERTOOLS_METRICS_DISABLED = 'true';

const RUNS = Number(process.env.FUZZ_RUNS ?? 20);
const FUZZ_ENGINES = ENGINES.filter(
  (e) => !process.env.FUZZ_ENGINES || process.env.FUZZ_ENGINES.split(',').includes(e),
);
/** Generous: a search or an answer costs a few milliseconds; some requests carry 1 MiB. */
const TIMEOUT_MS = 120_000 + RUNS * 200;

type Json = Record<string, unknown>;
type Schema = Json;

// ---------------------------------------------------------------------------------------------
// Hostile values, for any position in a request.

const NASTY_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\uD800',
  'x\uDFFF',
  '\uDBFF\uDBFF',
  '\uDC00\uD800',
  '\u{1F600}',
  '\uFEFF',
  '\u202E',
  "'; DROP TABLE documents; --",
  '%',
  '_',
  '\\',
  '%_\\',
  '../../etc/passwd',
  '<script>alert(1)</script>',
  '{"equals":1}',
  '0000-01-01',
  '0000-01-01T00:00:00Z',
  '9999-12-31T23:59:59+23:59',
  '2024-02-30',
  '-infinity',
  'NaN',
  '1e999',
  '00000000-0000-0000-0000-000000000000',
  'ffffffff-ffff-ffff-ffff-ffffffffffff',
  '__proto__',
  'constructor',
];

const KNOWN_WORDS = [
  'notes.md',
  'report.txt',
  'page.html',
  'text/plain',
  'text/markdown',
  'text/html',
  'application/pdf',
  'general',
  'warranty',
  'doc',
  'faq',
  'en',
  'tenant',
  'team',
];

const NASTY_NUMBERS = [
  0,
  -0,
  -1,
  0.5,
  -0.5,
  1e308,
  -1e308,
  5e-324,
  2 ** 31,
  2 ** 31 - 1,
  -(2 ** 31),
  2 ** 63,
  Number.MAX_SAFE_INTEGER,
  Number.MAX_SAFE_INTEGER + 2,
  -Number.MAX_SAFE_INTEGER,
];

/** `depth` levels of `op` around one comparison, as JSON (1,000 deep overflowed zod's stack). */
const nestedFilter = (depth: number, op: 'andAll' | 'orAll' = 'andAll'): string =>
  `{"${op}":[`.repeat(depth - 1) + '{"equals":{"key":"team","value":"a"}}' + ']}'.repeat(depth - 1);
/** `groups` orAll groups of `per` comparisons (20,000 leaves overflowed the protocol). */
const wideFilter = (groups: number, per: number): string =>
  JSON.stringify({
    orAll: Array.from({ length: groups }, (_, g) => ({
      andAll: Array.from({ length: per }, (_, i) => ({ equals: { key: `k${i}`, value: g } })),
    })),
  });

/** Values too deep or too large to build as objects, spliced into a request body as JSON text. */
const BOMBS: readonly string[] = [
  nestedFilter(1000),
  nestedFilter(6, 'orAll'),
  nestedFilter(5),
  wideFilter(1000, 20),
  wideFilter(20, 20),
  wideFilter(5, 19),
  JSON.stringify({ in: { key: 'k', value: Array.from({ length: 100_000 }, (_, i) => i) } }),
  '['.repeat(10_000) + ']'.repeat(10_000),
  '['.repeat(40) + ']'.repeat(40),
  JSON.stringify(Array.from({ length: 50_000 }, () => 'x')),
  JSON.stringify('x'.repeat(200_000)),
  JSON.stringify(Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, i]))),
];
/** The string that stands for BOMBS[i] until the body is serialised. */
const bombMark = (i: number) => `\u0001bomb${i}\u0001`;
/** JSON text of a generated value, its bomb marks replaced by the bombs. */
const serialise = (value: unknown): string =>
  JSON.stringify(value).replace(/"\\u0001bomb(\d+)\\u0001"/g, (_, i: string) => BOMBS[Number(i)]!);

/** Hostile values small enough for a query string (a URL over 16 KiB is Node's 431). */
const hostileSmall: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: fc.constantFrom(...NASTY_STRINGS), weight: 6 },
  { arbitrary: fc.constantFrom(...NASTY_NUMBERS), weight: 3 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 40 }), weight: 3 },
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }), weight: 1 },
  { arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }), weight: 1 },
  { arbitrary: fc.integer(), weight: 1 },
  { arbitrary: fc.constantFrom(null, true, false, [], {}, [null], { a: 1 }), weight: 3 },
  { arbitrary: fc.jsonValue({ maxDepth: 3 }), weight: 1 },
);

const hostile: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: hostileSmall, weight: 18 },
  { arbitrary: fc.integer({ min: 0, max: BOMBS.length - 1 }).map(bombMark), weight: 1 },
);

// ---------------------------------------------------------------------------------------------
// Requests from a route's OpenAPI description.

interface Components {
  readonly schemas: Record<string, Schema>;
}

/** Values the route's JSON Schema describes, a hostile value in any position now and then. */
function fromSchema(
  schema: Schema,
  components: Components,
  depth = 0,
  salted = true,
): fc.Arbitrary<unknown> {
  const valid = conforming(schema, components, depth, salted);
  return salted
    ? fc.oneof({ arbitrary: valid, weight: 8 }, { arbitrary: hostile, weight: 1 })
    : valid;
}

/** Values of `schema`; with `salted`, its parts may be hostile, and objects may gain or lose keys. */
function conforming(
  schema: Schema,
  components: Components,
  depth: number,
  salted = true,
): fc.Arbitrary<unknown> {
  if (typeof schema.$ref === 'string') {
    const name = schema.$ref.split('/').pop()!;
    // Recursive schemas (the metadata filter) end in a leaf; the bombs above go deeper.
    if (depth > 6) return fc.constant({ equals: { key: 'team', value: 'a' } });
    return fromSchema(components.schemas[name] ?? {}, components, depth + 1, salted);
  }
  const options = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (options) return fc.oneof(...options.map((o) => fromSchema(o, components, depth + 1, salted)));
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  if ('const' in schema) return fc.constant(schema.const);
  switch (schema.type) {
    case 'string':
      return stringFor(schema, salted);
    case 'integer':
      return fc.integer({
        min: typeof schema.minimum === 'number' ? schema.minimum : -1000,
        max: typeof schema.maximum === 'number' ? schema.maximum : 1_000_000,
      });
    case 'number':
      return fc.double({
        min: typeof schema.minimum === 'number' ? schema.minimum : -1e6,
        max: typeof schema.maximum === 'number' ? schema.maximum : 1e6,
        noNaN: true,
      });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      const min = typeof schema.minItems === 'number' ? schema.minItems : 0;
      const max = Math.min(typeof schema.maxItems === 'number' ? schema.maxItems : 5, min + 4);
      return fc.array(fromSchema((schema.items as Schema) ?? {}, components, depth + 1, salted), {
        minLength: min,
        maxLength: max,
      });
    }
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, Schema>;
      const required = new Set((schema.required ?? []) as string[]);
      const model: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [name, property] of Object.entries(properties))
        model[name] = fromSchema(property, components, depth + 1, salted);
      const known = fc.record(model, {
        requiredKeys: Object.keys(model).filter((k) => required.has(k)),
      });
      if (!salted) return known;
      // Now and then a key the schema does not know, or one of its keys missing.
      return fc.oneof(
        { arbitrary: known, weight: 6 },
        {
          arbitrary: fc
            .tuple(known, fc.constantFrom(...NASTY_STRINGS, 'extra'), hostile)
            .map(([value, key, extra]) => ({ ...value, [key]: extra })),
          weight: 1,
        },
        { arbitrary: fc.record(model, { requiredKeys: [] }), weight: 1 },
      );
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

function stringFor(schema: Schema, salted: boolean): fc.Arbitrary<string> {
  const minLength = typeof schema.minLength === 'number' ? schema.minLength : 0;
  const maxLength = Math.min(typeof schema.maxLength === 'number' ? schema.maxLength : 60, 200);
  if (schema.format === 'uuid') return fc.uuid();
  if (schema.format === 'date' || schema.format === 'date-time') {
    // Year 0000 included: PostgreSQL has no year 0.
    const date = fc.date({
      min: new Date('0000-01-01T00:00:00Z'),
      max: new Date('9999-12-31T23:59:59Z'),
      noInvalidDate: true,
    });
    return schema.format === 'date'
      ? date.map((d) => d.toISOString().slice(0, 10))
      : date.map((d) => d.toISOString());
  }
  if (typeof schema.pattern === 'string') {
    try {
      return fc.stringMatching(new RegExp(schema.pattern)).filter((s) => s.length <= maxLength);
    } catch {
      // a pattern fast-check cannot invert: any string will do
    }
  }
  return fc.oneof(
    fc.string({ minLength, maxLength }),
    fc.string({ minLength, maxLength, unit: salted ? 'binary' : 'grapheme' }),
    // Words the API knows, so that free-form fields (a file's name and type, a profile) get past
    // the handlers' own checks now and then.
    fc.constantFrom(...KNOWN_WORDS).filter((w) => w.length >= minLength && w.length <= maxLength),
  );
}

/** A URI component for any string: lone surrogates as the bytes a careless client would send. */
function encodeComponent(value: string): string {
  let out = '';
  for (const ch of value) {
    const code = ch.codePointAt(0)!;
    if (code >= 0xd800 && code <= 0xdfff) {
      // CESU-8 bytes of the lone surrogate: not UTF-8, so not decodable.
      out += [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)]
        .map((byte) => `%${byte.toString(16).toUpperCase()}`)
        .join('');
    } else out += encodeURIComponent(ch);
  }
  return out;
}

interface FuzzRequest {
  readonly method: string;
  readonly path: string;
  readonly query: string;
  readonly headers: Record<string, string>;
  readonly body?: string;
}

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/json; charset=latin1',
  '\u00e9/\u00e9',
];

const RAW_BODIES = [
  '{',
  '{"a":',
  'nul',
  '{"query_text":"q",}',
  "{'a':1}",
  '{"a":1e999}',
  '{"a":-1e999}',
  '{"query_text":"a\\u0000b"}',
  '{"query_text":"\\ud800"}',
  '{"\\u0000":1}',
  '{"__proto__":{"admin":true},"query_text":"q"}',
  '{"constructor":{"prototype":{"x":1}}}',
  '\uFEFF{"query_text":"q"}',
  'null',
  '[]',
  '"a string"',
  '42',
  'true',
  '\u0000',
  '['.repeat(100_000),
  '{"a":'.repeat(50_000),
  `{"query_text":"${'\\u0000'.repeat(1000)}"}`,
];

function requestFor(
  route: ApiRoute,
  operation: Json,
  components: Components,
  ids: readonly string[],
  tokens: { readonly own: string; readonly other: string },
): fc.Arbitrary<FuzzRequest> {
  const parameters = (operation.parameters ?? []) as {
    name: string;
    in: string;
    schema: Schema;
  }[];
  const pathParams = parameters.filter((p) => p.in === 'path');
  const queryParams = parameters.filter((p) => p.in === 'query');

  const segment = fc.oneof(
    { arbitrary: fc.constantFrom(...ids).map(encodeURIComponent), weight: 4 },
    { arbitrary: fc.uuid().map(encodeURIComponent), weight: 2 },
    {
      arbitrary: fc.constantFrom(
        '%00',
        'a%00b',
        '%ED%A0%80',
        '%FF',
        '%C0%AF',
        '%',
        '%zz',
        '..',
        '%2F',
        '%2E%2E',
        'a'.repeat(5000),
        '-1',
        '1e999',
        'null',
      ),
      weight: 3,
    },
    {
      arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }).map(encodeComponent),
      weight: 2,
    },
  );
  const path = fc
    .tuple(...(pathParams.length > 0 ? pathParams.map(() => segment) : [fc.constant('')]))
    .map((values) => {
      let p = route.path;
      pathParams.forEach((param, i) => (p = p.replace(`{${param.name}}`, values[i]!)));
      return p;
    });

  const queryValue = (schema: Schema) =>
    fc.oneof(
      { arbitrary: conforming(schema, components, 0).map(String), weight: 4 },
      {
        arbitrary: hostileSmall.map((v) => (typeof v === 'string' ? v : (JSON.stringify(v) ?? ''))),
        weight: 2,
      },
    );
  const pair = fc.oneof(
    ...(queryParams.length > 0
      ? [
          {
            arbitrary: fc
              .constantFrom(...queryParams)
              .chain((p) => queryValue(p.schema).map((v) => [p.name, v] as const)),
            weight: 6,
          },
        ]
      : []),
    {
      arbitrary: fc.tuple(
        fc.constantFrom('x', 'cursor', 'limit', 'prefix', 'status', '\u0000', '%00', ''),
        fc.constantFrom(...NASTY_STRINGS),
      ),
      weight: 1,
    },
  );
  const query = fc.oneof(
    {
      arbitrary: fc
        .array(pair, { maxLength: 5 })
        .map((pairs) =>
          pairs.map(([k, v]) => `${encodeComponent(k)}=${encodeComponent(v)}`).join('&'),
        ),
      weight: 8,
    },
    {
      arbitrary: fc.constantFrom(
        '%00=1',
        'a=%ED%A0%80',
        '=',
        '&&&',
        'a=%',
        'a'.repeat(8000) + '=1',
        'limit=1&limit=2',
      ),
      weight: 1,
    },
  );

  const bodySchema = (
    (operation.requestBody as Json | undefined)?.content as
      Record<string, { schema: Schema }> | undefined
  )?.['application/json']?.schema;
  const body: fc.Arbitrary<string | undefined> =
    route.method === 'GET'
      ? fc.constant(undefined)
      : fc.oneof(
          {
            arbitrary: (bodySchema ? fromSchema(bodySchema, components) : hostile).map(serialise),
            weight: 12,
          },
          // Bodies the schema accepts, as far as JSON Schema can say: the deeper code paths.
          ...(bodySchema
            ? [
                {
                  arbitrary: fromSchema(bodySchema, components, 0, false).map(serialise),
                  weight: 6,
                },
              ]
            : []),
          { arbitrary: fc.constantFrom(...RAW_BODIES), weight: 2 },
          { arbitrary: fc.string({ unit: 'binary', maxLength: 100 }), weight: 1 },
          // Just over the limit, and a body that is large but allowed.
          {
            arbitrary: fc.constantFrom(
              JSON.stringify({ query_text: 'x'.repeat(MAX_BODY_BYTES) }),
              JSON.stringify({ query_text: 'q', pad: ' '.repeat(MAX_BODY_BYTES - 40) }),
            ),
            weight: 1,
          },
          { arbitrary: fc.constant(undefined), weight: 1 },
        );

  const authorization = fc.oneof(
    { arbitrary: fc.constant(`Bearer ${tokens.own}`), weight: 12 },
    { arbitrary: fc.constant(`Bearer ${tokens.other}`), weight: 1 },
    {
      arbitrary: fc.constantFrom(
        '',
        'Bearer',
        'Bearer x.y.z',
        'Basic YTpi',
        `Bearer ${tokens.own}x`,
      ),
      weight: 1,
    },
  );
  const contentType = fc.oneof(
    { arbitrary: fc.constant('application/json'), weight: 8 },
    { arbitrary: fc.constantFrom(...CONTENT_TYPES, ''), weight: 2 },
  );

  return fc.record({ path, query, body, authorization, contentType }).map((r) => ({
    method: route.method,
    path: r.path,
    query: r.query,
    headers: {
      ...(r.authorization ? { authorization: r.authorization } : {}),
      ...(r.body !== undefined && r.contentType ? { 'content-type': r.contentType } : {}),
    },
    ...(r.body !== undefined ? { body: r.body } : {}),
  }));
}

// ---------------------------------------------------------------------------------------------

/** What one route's run saw: requests sent, responses by status, and those that broke the rules. */
interface RouteReport {
  requests: number;
  statuses: Record<number, number>;
  failures: number;
}

interface Outcome {
  readonly status: number;
  readonly problem: string | null;
  readonly text: string;
}

/** Sends one request; `problem` says what is wrong with the answer, if anything. */
async function send(base: string, req: FuzzRequest): Promise<Outcome> {
  const url = `${base}${req.path}${req.query ? `?${req.query}` : ''}`;
  const res = await fetch(url, {
    method: req.method,
    headers: req.headers,
    ...(req.body !== undefined ? { body: req.body } : {}),
  });
  const text = await res.text();
  if (res.status >= 500) return { status: res.status, problem: 'a 5xx', text };
  if (res.status < 400) return { status: res.status, problem: null, text };
  let body: { error?: { code?: unknown; message?: unknown; retryable?: unknown } };
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    return { status: res.status, problem: 'an error that is not JSON', text };
  }
  const e = body.error;
  const wellFormed =
    typeof e === 'object' &&
    e !== null &&
    typeof e.code === 'string' &&
    e.code !== '' &&
    typeof e.message === 'string' &&
    typeof e.retryable === 'boolean';
  return {
    status: res.status,
    problem: wellFormed ? null : 'an error not in the error model',
    text,
  };
}

const preview = (s: string | undefined) =>
  s === undefined ? undefined : s.length > 300 ? `${s.slice(0, 300)}... (${s.length} chars)` : s;

describe.each(FUZZ_ENGINES)('fuzzing every API route on %s', (engine: EngineName) => {
  let db: Database;
  let stack: LocalStack;
  let api: LocalApi;
  const ids: string[] = [];
  const tokens: Record<string, string> = {};
  const report: Record<string, RouteReport> = {};
  const openapi = buildOpenApi(API_ROUTES) as {
    paths: Record<string, Record<string, Json>>;
    components: Components;
  };

  beforeAll(async () => {
    db = await openTestDatabase(engine);
    stack = await startLocalStack({
      db,
      embedder: createHashEmbedder(),
      llm: null, // the offline extractive answerer
      logLevel: 'SILENT',
      limits: parseLimitsConfig({
        plans: {
          free: { answersPerMonth: null, searchesPerMonth: null, requestsPerMinute: 10_000_000 },
          admin: { requestsPerMinute: 10_000_000 },
        },
        costCaps: { globalUsdPerDay: null, tenantUsdPerDay: null },
      }),
    });
    api = await startLocalApi(stack);
    tokens.user = api.issuer.issueToken({ sub: 'fuzz-user', tenantId: 'acme' });
    tokens.admin = api.issuer.issueToken({ sub: 'fuzz-admin', tenantId: 'acme', admin: true });
    tokens.foreign = api.issuer.issueToken({ sub: 'fuzz-other', tenantId: 'globex' });

    // Something to find, and real ids for the path parameters.
    await stack.s3.client.send(
      new PutObjectCommand({
        Bucket: stack.s3.bucket,
        Key: 'tenants/acme/warranty.txt',
        Body: 'The warranty covers repairs for two years. Returns are accepted within 30 days.',
      }),
    );
    await stack.queue.idle();
    const call = async (method: string, path: string, token: string, body?: unknown) => {
      const res = await fetch(`${api.server.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return (await res.json()) as Json;
    };
    const docs = await call('GET', '/api/documents', tokens.user);
    ids.push(...((docs.documents as { id: string }[]) ?? []).map((d) => d.id));
    const answer = await call('POST', '/api/rag/answer', tokens.user, {
      query_text: 'How long is the warranty?',
    });
    for (const key of ['thread_id', 'message_id'])
      if (typeof answer[key] === 'string') ids.push(answer[key]);
    const prompts = await call('GET', '/api/admin/prompts', tokens.admin);
    ids.push(
      ...(JSON.stringify(prompts).match(
        /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g,
      ) ?? []),
    );
    expect(ids.length).toBeGreaterThanOrEqual(3);
  });
  afterAll(async () => {
    await api?.close();
    await stack?.stop();
    await db?.close();
  });
  /** Written after every route, so a long run that is stopped still says what it did. */
  const writeReport = () => {
    if (process.env.FUZZ_REPORT)
      writeFileSync(
        `${process.env.FUZZ_REPORT}.${engine}.json`,
        JSON.stringify({ engine, runs: RUNS, routes: report }, null, 2),
      );
  };

  it.each(API_ROUTES.map((route) => [`${route.method} ${route.path}`, route] as const))(
    '%s: never a 5xx, every error in the error model',
    async (key, route) => {
      const operation = openapi.paths[route.path]?.[route.method.toLowerCase()];
      expect(operation).toBeDefined();
      const own = route.admin ? tokens.admin! : tokens.user!;
      const arbitrary = requestFor(route, operation!, openapi.components, ids, {
        own,
        other: route.admin ? tokens.user! : tokens.foreign!,
      });
      const entry: RouteReport = { requests: 0, statuses: {}, failures: 0 };
      report[key] = entry;
      const failures: unknown[] = [];
      await fc.assert(
        fc.asyncProperty(arbitrary, async (req) => {
          const outcome = await send(api.server.url, req);
          entry.requests += 1;
          entry.statuses[outcome.status] = (entry.statuses[outcome.status] ?? 0) + 1;
          if (outcome.problem) {
            entry.failures += 1;
            if (failures.length < 5)
              failures.push({
                problem: outcome.problem,
                status: outcome.status,
                request: {
                  ...req,
                  body: preview(req.body),
                  path: preview(req.path),
                  query: preview(req.query),
                },
                response: preview(outcome.text),
              });
          }
        }),
        { numRuns: RUNS, endOnFailure: true },
      );
      writeReport();
      expect(failures).toEqual([]);
      expect(entry.requests).toBe(RUNS);
    },
    TIMEOUT_MS,
  );
});
