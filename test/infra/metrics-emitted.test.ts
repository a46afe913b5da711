/**
 * Every metric the dashboard and the alarms read (lib/metrics.ts) is emitted by some handler,
 * and every route they read is a handler's route: a renamed metric or route fails here instead
 * of silently flattening a graph.
 *
 * lambdas/ is read with the TypeScript compiler: a metric is emitted where its name is the first
 * argument of `addMetric(...)`, `count(...)` or `timing(...)`, as a literal, either branch of a
 * conditional, or a template literal whose parts have literal types (`Confidence_${level}`
 * expands to each level). A route is the `route` property given to `createHttpHandler` or
 * `addDimensions`, resolved the same way (constants included).
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { METRICS_NAMESPACE as EMITTED_NAMESPACE } from '../../lambdas/adapters/observability/powertools';
import { REPO_ROOT } from '../../lib/config';
import { API_ROUTES, DASHBOARD_METRICS, METRICS_NAMESPACE } from '../../lib/metrics';

const METRIC_CALLS = new Set(['addMetric', 'count', 'timing']);
const ROUTE_CALLS = new Set(['createHttpHandler', 'addDimensions']);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') &&
      !entry.name.endsWith('.test.ts') &&
      !entry.name.endsWith('.d.ts')
      ? [full]
      : [];
  });
}

/** The string values an expression can have, when the source or its type says (else none). */
function stringValues(node: ts.Expression, checker: ts.TypeChecker): string[] {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return [node.text];
  if (ts.isParenthesizedExpression(node)) return stringValues(node.expression, checker);
  if (ts.isConditionalExpression(node))
    return [...stringValues(node.whenTrue, checker), ...stringValues(node.whenFalse, checker)];
  if (ts.isTemplateExpression(node)) {
    let results = [node.head.text];
    for (const span of node.templateSpans) {
      const parts = literalsOfType(checker.getTypeAtLocation(span.expression));
      if (parts.length === 0) return [];
      results = results.flatMap((prefix) =>
        parts.map((part) => `${prefix}${part}${span.literal.text}`),
      );
    }
    return results;
  }
  return literalsOfType(checker.getTypeAtLocation(node));
}

function literalsOfType(type: ts.Type): string[] {
  const members = type.isUnion() ? type.types : [type];
  if (!members.every((t) => t.isStringLiteral())) return [];
  return members.map((t) => t.value);
}

function calleeName(call: ts.CallExpression): string | undefined {
  const callee = call.expression;
  if (ts.isIdentifier(callee)) return callee.text;
  if (ts.isPropertyAccessExpression(callee)) return callee.name.text;
  return undefined;
}

/** Metric names and route names found in the handlers' source. */
function scanHandlers(): { metrics: Set<string>; routes: Set<string> } {
  const files = sourceFiles(path.join(REPO_ROOT, 'lambdas'));
  const program = ts.createProgram(files, {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.Node10,
    strict: true,
    esModuleInterop: true,
    resolveJsonModule: true,
    skipLibCheck: true,
    noEmit: true,
    types: ['node'],
  });
  const checker = program.getTypeChecker();
  const metrics = new Set<string>();
  const routes = new Set<string>();
  for (const file of files) {
    const source = program.getSourceFile(file);
    if (!source) throw new Error(`not in the program: ${file}`);
    const visit = (node: ts.Node): void => {
      if (ts.isCallExpression(node)) {
        const name = calleeName(node);
        const first = node.arguments[0];
        if (name && METRIC_CALLS.has(name) && first)
          for (const value of stringValues(first, checker)) metrics.add(value);
        if (name && ROUTE_CALLS.has(name)) {
          for (const arg of node.arguments.filter(ts.isObjectLiteralExpression)) {
            for (const prop of arg.properties) {
              if (
                ts.isPropertyAssignment(prop) &&
                ts.isIdentifier(prop.name) &&
                prop.name.text === 'route'
              ) {
                for (const value of stringValues(prop.initializer, checker)) routes.add(value);
              }
            }
          }
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return { metrics, routes };
}

let emitted: { metrics: Set<string>; routes: Set<string> };
beforeAll(() => {
  emitted = scanHandlers();
});

describe('dashboard metrics', () => {
  it('finds the metrics the handlers emit, templates expanded', () => {
    expect([...emitted.metrics]).toEqual(
      expect.arrayContaining([
        'Requests',
        'Errors5xx',
        'Confidence_high',
        'Confidence_low',
        'DocumentsIndexed',
      ]),
    );
    expect(emitted.metrics.has('NoSuchMetric')).toBe(false);
  });

  it.each(DASHBOARD_METRICS.map((name) => [name]))('%s is emitted by a handler', (name) => {
    expect(emitted.metrics.has(name)).toBe(true);
  });

  it.each(API_ROUTES.map((r) => [r.route, r.service]))(
    'route %s (service %s) is a handler route',
    (route) => {
      expect(emitted.routes.has(route)).toBe(true);
    },
  );

  it('uses the namespace the handlers publish to', () => {
    expect(METRICS_NAMESPACE).toBe(EMITTED_NAMESPACE);
  });
});
