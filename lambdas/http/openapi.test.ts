import { readFileSync } from 'node:fs';
import path from 'node:path';
import { API_ROUTES } from './api-routes';
import { buildOpenApi } from './openapi';

const COMMITTED = path.join(__dirname, '..', '..', 'docs', 'openapi.json');

type Json = Record<string, unknown>;

function refs(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) for (const v of value) refs(v, out);
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value as Json)) {
      if (k === '$ref' && typeof v === 'string') out.push(v);
      else refs(v, out);
    }
  }
  return out;
}

describe('the OpenAPI document', () => {
  const doc = buildOpenApi();

  it('is committed as generated (run `npm run openapi` after changing a schema or route)', () => {
    expect(JSON.parse(readFileSync(COMMITTED, 'utf8'))).toEqual(doc);
  });

  it('describes every route, with its path parameters, and only resolvable references', () => {
    const paths = doc.paths as Record<string, Record<string, Json>>;
    for (const route of API_ROUTES) {
      const operation = paths[route.path]?.[route.method.toLowerCase()];
      expect(operation).toBeDefined();
      const declared = ((operation?.parameters as Json[] | undefined) ?? [])
        .filter((p) => p.in === 'path')
        .map((p) => p.name);
      const inPath = [...route.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
      expect(declared).toEqual(inPath);
      if (!route.auth) expect(operation?.security).toEqual([]);
      // The statuses the route's contract names for invalid input and a dependency outage.
      const responses = operation?.responses as Record<string, unknown>;
      if (route.auth) expect(responses).toHaveProperty(String(route.statuses?.validation ?? 422));
      expect(responses).toHaveProperty(String(route.statuses?.unavailable ?? 503));
    }
    const components = doc.components as Record<string, Record<string, unknown>>;
    for (const ref of refs(doc)) {
      const [, , kind, name] = ref.split('/');
      expect(ref).toMatch(/^#\/components\/(schemas|headers)\//);
      expect(components[kind!]).toHaveProperty([name!]);
    }
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    const { Validator } = await import('@seriousme/openapi-schema-validator');
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('takes request bodies from the schemas the handlers validate with', () => {
    const schemas = (doc.components as { schemas: Record<string, Json> }).schemas;
    const upload = schemas.PostApiDocumentsRequest!;
    expect(upload.required).toEqual(['filename', 'content_type', 'size_bytes']);
    expect(upload.additionalProperties).toBe(false);
    const query = (doc.paths as Record<string, Record<string, Json>>)['/api/admin/feedback']!.get!;
    expect((query.parameters as Json[]).map((p) => p.name)).toEqual(['rating', 'limit', 'cursor']);
  });
});
