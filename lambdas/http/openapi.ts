/**
 * The OpenAPI 3.1 document, generated from the route table and the zod schemas the handlers
 * validate with (OpenAPI 3.1 schemas are JSON Schema 2020-12, which zod emits). Committed as
 * docs/openapi.json (`npm run openapi`); a test fails when the two differ.
 */
import * as z from '../core/zod';
import { promptSchema } from '../admin/schema';
import {
  MAX_FILTER_CONDITIONS,
  MAX_FILTER_DEPTH,
  metadataFilterNodeSchema,
} from '../core/retrieval/filters';
import { documentDetailSchema } from '../documents/schema';
import { API_ROUTES, type ApiRoute } from './api-routes';
import { MAX_BODY_BYTES, MAX_JSON_DEPTH } from './request-limits';

type Json = Record<string, unknown>;

const errorSchema = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    retryable: z.boolean(),
    details: z.optional(z.unknown()),
  }),
});

/** A copy of `value` without the given top-level keys (JSON Schema's `$schema`, `$id`). */
const withoutKeys = (value: Json, keys: readonly string[]): Json =>
  Object.fromEntries(Object.entries(value).filter(([k]) => !keys.includes(k)));

/** Component names: `POST /api/documents` -> `PostDocumentsRequest`. */
function componentName(route: ApiRoute, part: 'Request' | 'Query' | 'Response'): string {
  const words = route.path
    .split('/')
    .filter((s) => s && !s.startsWith('{'))
    .flatMap((s) => s.split(/[-_]/));
  const pascal = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
  const byId = route.path.includes('{') ? 'ById' : '';
  return [pascal(route.method.toLowerCase()), ...words.map(pascal), byId, part].join('');
}

/** `GET /api/documents/{id}/passage` -> `getDocumentsPassageById`. */
function operationId(route: ApiRoute): string {
  const name = componentName(route, 'Request').slice(0, -'Request'.length);
  return name.charAt(0).toLowerCase() + name.slice(1);
}

/**
 * Query schemas are objects of strings, some read as numbers; each property becomes a parameter,
 * described by the value it is read as (`output`: an integer with its bounds and default), and
 * required as a client writes it (`input`: a parameter with a default may be left out).
 */
function queryParameters(schema: Json, input: Json): Json[] {
  const properties = (schema.properties ?? {}) as Record<string, Json>;
  const required = new Set((input.required as string[] | undefined) ?? []);
  return Object.entries(properties).map(([name, property]) => ({
    name,
    in: 'query',
    required: required.has(name),
    schema: property,
  }));
}

export function buildOpenApi(routes: readonly ApiRoute[] = API_ROUTES): Json {
  const registry = z.registry<{ id: string }>();
  // Schemas used in several places get a name of their own (the recursive filter must).
  const named: [z.ZodMiniType, string][] = [
    [errorSchema, 'Error'],
    [metadataFilterNodeSchema, 'MetadataFilter'],
    [documentDetailSchema, 'Document'],
    [promptSchema, 'PromptConfig'],
  ];
  for (const [schema, id] of named) registry.add(schema, { id });
  const seen = new Set<z.ZodMiniType>(named.map(([schema]) => schema));
  const register = (schema: z.ZodMiniType | undefined, id: string) => {
    if (!schema || seen.has(schema)) return;
    seen.add(schema);
    registry.add(schema, { id });
  };
  for (const route of routes) {
    register(route.body, componentName(route, 'Request'));
    register(route.response.schema, componentName(route, 'Response'));
  }
  // Requests are described as a client writes them (defaults optional), responses as sent.
  const convert = (io: 'input' | 'output') =>
    z.toJSONSchema(registry, {
      target: 'draft-2020-12',
      io,
      unrepresentable: 'any',
      uri: (id) => `#/components/schemas/${id}`,
    }).schemas as Record<string, Json>;
  const inputs = convert('input');
  const outputs = convert('output');
  const requestIds = new Set(routes.flatMap((r) => (r.body ? [registry.get(r.body)?.id] : [])));
  const schemas: Record<string, Json> = {};
  for (const [id, schema] of Object.entries({ ...outputs, ...inputs })) {
    const chosen = requestIds.has(id) ? inputs[id] : (outputs[id] ?? schema);
    schemas[id] = withoutKeys(chosen as Json, ['$schema', '$id']);
  }
  schemas.MetadataFilter = {
    description: `One operator per object. A filter is at most ${MAX_FILTER_DEPTH} levels deep, its comparisons included (\`andAll\` and \`orAll\` nest at most ${MAX_FILTER_DEPTH - 1} levels around a comparison), and a filter holds at most ${MAX_FILTER_CONDITIONS} operators in all (422 otherwise).`,
    ...schemas.MetadataFilter,
  };

  const paths: Record<string, Json> = {};
  const rateLimitHeaders = {
    'X-RateLimit-Limit': { $ref: '#/components/headers/X-RateLimit-Limit' },
    'X-RateLimit-Remaining': { $ref: '#/components/headers/X-RateLimit-Remaining' },
    'X-RateLimit-Reset': { $ref: '#/components/headers/X-RateLimit-Reset' },
  };
  const rateLimitHeaderDefinitions = {
    'X-RateLimit-Limit': {
      description: 'Requests allowed per window',
      schema: { type: 'integer' },
    },
    'X-RateLimit-Remaining': {
      description: 'Requests left in the window',
      schema: { type: 'integer' },
    },
    'X-RateLimit-Reset': {
      description: 'When the window resets (Unix seconds)',
      schema: { type: 'integer' },
    },
  };
  const errorResponse = (description: string, headers?: Json) => ({
    description,
    ...(headers ? { headers } : {}),
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
  });
  for (const route of routes) {
    const parameters: Json[] = [];
    for (const match of route.path.matchAll(/\{([^}]+)\}/g)) {
      parameters.push({ name: match[1], in: 'path', required: true, schema: { type: 'string' } });
    }
    if (route.query) {
      const query = (io: 'input' | 'output') =>
        withoutKeys(
          z.toJSONSchema(route.query!, { target: 'draft-2020-12', io, unrepresentable: 'any' }),
          ['$schema'],
        );
      parameters.push(...queryParameters(query('output'), query('input')));
    }
    const responseSchemaId = route.response.schema
      ? registry.get(route.response.schema)?.id
      : undefined;
    const content: Json = route.events
      ? { 'text/event-stream': { schema: { type: 'string', description: route.events } } }
      : {
          'application/json': {
            schema: responseSchemaId ? { $ref: `#/components/schemas/${responseSchemaId}` } : {},
          },
        };
    if (route.streams && !route.events) {
      content['text/event-stream'] = {
        schema: {
          type: 'string',
          description:
            '`delta` events with answer text, then one `done` event with the full answer',
        },
      };
    }
    const bodyId = route.body ? registry.get(route.body)?.id : undefined;
    const quotaIs429 = route.statuses?.quotaExceeded === 429;
    const validation = String(route.statuses?.validation ?? 422);
    const unavailable = String(route.statuses?.unavailable ?? 503);
    const operation: Json = {
      operationId: operationId(route),
      tags: [route.tag],
      summary: route.summary,
      ...(route.auth ? {} : { security: [] }),
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(bodyId
        ? {
            requestBody: {
              required: true,
              content: {
                'application/json': { schema: { $ref: `#/components/schemas/${bodyId}` } },
              },
            },
          }
        : {}),
      ...(route.upload
        ? {
            requestBody: {
              required: true,
              content: {
                'multipart/form-data': {
                  schema: {
                    type: 'object',
                    required: [route.upload.field],
                    properties: {
                      [route.upload.field]: {
                        type: 'string',
                        contentMediaType: 'application/octet-stream',
                      },
                      title: { type: 'string', minLength: 1, maxLength: 500 },
                      visibility: { type: 'string', enum: ['tenant', 'user'], default: 'tenant' },
                    },
                  },
                },
              },
            },
          }
        : {}),
      responses: {
        [String(route.response.status)]: {
          description: route.response.description,
          ...(route.auth ? { headers: rateLimitHeaders } : {}),
          content,
        },
        ...(route.auth
          ? {
              '401': errorResponse('No valid bearer token'),
              '403': errorResponse(
                route.admin
                  ? 'Not in the admin group, or no tenant'
                  : quotaIs429
                    ? 'No tenant'
                    : 'No tenant, or quota used up',
              ),
              '404': errorResponse('Not found, or not yours'),
              [validation]: errorResponse(
                'The request does not match its schema, or holds text that cannot be stored',
              ),
              '429': errorResponse(
                quotaIs429
                  ? 'Rate limit exceeded (see Retry-After), or the monthly quota used up'
                  : 'Rate limit exceeded (see Retry-After)',
                rateLimitHeaders,
              ),
            }
          : {}),
        [unavailable]: errorResponse(
          'A dependency (database, embedding model, limits store) is down; `retryable` is true',
        ),
        ...(bodyId
          ? { '413': errorResponse(`The body is larger than ${MAX_BODY_BYTES} bytes`) }
          : {}),
        ...(route.upload
          ? { '413': errorResponse(`The body is larger than ${route.upload.maxBytes} bytes`) }
          : {}),
        ...Object.fromEntries(
          Object.entries(route.errors ?? {}).map(([status, text]) => [status, errorResponse(text)]),
        ),
      },
    };
    const path = (paths[route.path] ??= {});
    path[route.method.toLowerCase()] = operation;
  }

  return {
    openapi: '3.1.0',
    info: {
      title: 'Groundwork API',
      version: '0.1.0',
      description:
        'Cited, confidence-gated answers over your documents. Every route but /api/health needs a ' +
        "Cognito JWT (locally: a token from the embedded default's issuer). Errors are " +
        '`{ "error": { "code", "message", "retryable" } }`. Every request: a body of at most ' +
        `${MAX_BODY_BYTES} bytes, JSON nested at most ${MAX_JSON_DEPTH} levels, and no NUL or ` +
        'unpaired UTF-16 surrogate in any string, key, query or path parameter (422 naming the ' +
        'field; 400 on the routes of seed 001). `retryable` is true only when a dependency is ' +
        'down (503; 500 on the routes of seed 001).',
    },
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    security: [{ bearer: [] }],
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      headers: rateLimitHeaderDefinitions,
      schemas,
    },
  };
}
