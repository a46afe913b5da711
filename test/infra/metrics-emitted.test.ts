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
 *
 * The AWS metrics of the synthesized alarms and dashboard are checked against aws-cdk-lib's
 * canned metrics (generated from AWS's metric catalogue) and lib/metrics.ts
 * AWS_DOCUMENTED_METRICS: an alarm on a metric no AWS service publishes would never fire.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import {
  createLogger,
  createMetrics,
  METRICS_NAMESPACE as FALLBACK_NAMESPACE,
} from '../../lambdas/adapters/observability/powertools';
import { REPO_ROOT } from '../../lib/config';
import {
  API_ROUTES,
  AWS_DOCUMENTED_METRICS,
  DASHBOARD_METRICS,
  metricsNamespace,
} from '../../lib/metrics';
import { resourcesOfType, synthGroundwork } from './support';

const METRIC_CALLS = new Set(['addMetric', 'count', 'timing']);
const ROUTE_CALLS = new Set([
  'createHttpHandler',
  'runRequest',
  'runStreamedRequest',
  'addDimensions',
]);

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

  it('are published to the namespace the function is given (POWERTOOLS_METRICS_NAMESPACE)', () => {
    /** The namespace of a metric emitted with POWERTOOLS_METRICS_NAMESPACE set to `given`. */
    const publishedTo = (given: string | undefined): string | undefined => {
      const before = process.env.POWERTOOLS_METRICS_NAMESPACE;
      if (given === undefined) delete process.env.POWERTOOLS_METRICS_NAMESPACE;
      else process.env.POWERTOOLS_METRICS_NAMESPACE = given;
      try {
        const metrics = createMetrics('rag-search', createLogger({ serviceName: 'rag-search' }));
        metrics.addMetric('Requests', MetricUnit.Count, 1);
        return metrics.serializeMetrics()._aws.CloudWatchMetrics[0]?.Namespace;
      } finally {
        if (before === undefined) delete process.env.POWERTOOLS_METRICS_NAMESPACE;
        else process.env.POWERTOOLS_METRICS_NAMESPACE = before;
      }
    };
    expect(publishedTo(metricsNamespace('prod'))).toBe('Groundwork/prod');
    // Without the variable (the embedded default), the handlers' own namespace, which no stage uses.
    expect(publishedTo(undefined)).toBe(FALLBACK_NAMESPACE);
    expect(metricsNamespace('dev')).not.toBe(FALLBACK_NAMESPACE);
  });
});

/** Every `namespace:"...",metricName:"..."` pair of aws-cdk-lib's generated canned metrics. */
function cannedMetrics(): Set<string> {
  const root = path.dirname(require.resolve('aws-cdk-lib/package.json'));
  const pairs = new Set<string>();
  for (const dir of readdirSync(root, { withFileTypes: true })) {
    if (!dir.isDirectory()) continue;
    const lib = path.join(root, dir.name, 'lib');
    let files: string[];
    try {
      files = readdirSync(lib).filter((f) => f.endsWith('canned-metrics.generated.js'));
    } catch {
      continue;
    }
    for (const file of files) {
      const text = readFileSync(path.join(lib, file), 'utf8');
      for (const m of text.matchAll(/namespace:"([^"]+)",metricName:"([^"]+)"/g))
        pairs.add(`${m[1]} ${m[2]}`);
    }
  }
  return pairs;
}

/** A CloudFormation value with its tokens replaced by "TOKEN" (Fn::Join flattened). */
function flatten(value: unknown): string {
  if (typeof value === 'string') return value;
  const join = (value as { 'Fn::Join'?: [string, unknown[]] })?.['Fn::Join'];
  if (join) return join[1].map(flatten).join(join[0]);
  return 'TOKEN';
}

/** The `namespace metricName` pairs the alarms and dashboards of a template read. */
function metricsRead(template: { toJSON(): Record<string, unknown> }): Set<string> {
  const pairs = new Set<string>();
  const resources = (template.toJSON().Resources ?? {}) as Record<
    string,
    { Type: string; Properties?: Record<string, unknown> }
  >;
  for (const r of Object.values(resources)) {
    if (r.Type === 'AWS::CloudWatch::Alarm') {
      const p = r.Properties ?? {};
      if (typeof p.MetricName === 'string') pairs.add(`${String(p.Namespace)} ${p.MetricName}`);
      for (const q of (p.Metrics as { MetricStat?: { Metric: Record<string, unknown> } }[]) ?? []) {
        const metric = q.MetricStat?.Metric;
        if (metric) pairs.add(`${String(metric.Namespace)} ${String(metric.MetricName)}`);
      }
    }
    if (r.Type === 'AWS::CloudWatch::Dashboard') {
      const body = flatten(r.Properties?.DashboardBody);
      for (const m of body.matchAll(/\["((?:AWS\/)?[A-Za-z0-9/]+)","([A-Za-z0-9_]+)"/g))
        pairs.add(`${m[1]} ${m[2]}`);
    }
  }
  return pairs;
}

describe('metrics of the synthesized alarms and dashboard', () => {
  let read: Set<string>;
  let alarmCount: number;
  let namespace: string;
  beforeAll(() => {
    const built = synthGroundwork({}, { bundle: false });
    namespace = metricsNamespace(built.config.stage);
    read = new Set([...metricsRead(built.apiTemplate), ...metricsRead(built.dataTemplate)]);
    alarmCount = Object.keys(resourcesOfType(built.apiTemplate, 'AWS::CloudWatch::Alarm')).length;
  });

  it('reads the metrics of alarms and widgets alike', () => {
    expect(alarmCount).toBeGreaterThan(10);
    for (const expected of [
      'AWS/Lambda Errors',
      'AWS/Lambda Throttles',
      'AWS/SQS ApproximateAgeOfOldestMessage',
      'AWS/ApiGateway 5XXError',
      'AWS/RDS ServerlessDatabaseCapacity',
      'AWS/RDS ClientConnectionsSetupFailedAuth',
      'AWS/Bedrock InvocationThrottles',
      `${namespace} Requests`,
    ])
      expect(read).toContain(expected);
  });

  it('reads only AWS metrics that an AWS service publishes', () => {
    const canned = cannedMetrics();
    const documented = new Set(
      Object.entries(AWS_DOCUMENTED_METRICS).flatMap(([ns, { metrics }]) =>
        metrics.map((m) => `${ns} ${m}`),
      ),
    );
    const unknown = [...read].filter(
      (pair) => pair.startsWith('AWS/') && !canned.has(pair) && !documented.has(pair),
    );
    expect(unknown).toEqual([]);
    // The catalogue check is live: a misspelt metric is caught.
    expect(canned.has('AWS/Lambda Errors')).toBe(true);
    expect(canned.has('AWS/Lambda Error')).toBe(false);
  });

  it('reads only custom metrics a handler emits', () => {
    const custom = [...read]
      .filter((pair) => pair.startsWith(`${namespace} `))
      .map((pair) => pair.slice(namespace.length + 1));
    expect(custom.length).toBeGreaterThan(0);
    expect(custom.filter((name) => !emitted.metrics.has(name))).toEqual([]);
  });
});
