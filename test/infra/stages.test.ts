/**
 * Two stages in one account and region (docs/deploy.md): each stage's alarms and dashboard read
 * only that stage's metrics. The REST API's name is the `ApiName` dimension of its AWS/ApiGateway
 * metrics, and the custom metrics' namespace is the one the stage's functions publish to
 * (POWERTOOLS_METRICS_NAMESPACE), so neither may be shared between stages.
 */
import { synthGroundwork, resourcesOfType, type SynthesizedApp } from './support';

type Properties = Record<string, unknown>;
type MetricStat = {
  Metric: { Namespace: string; Dimensions?: { Name: string; Value: unknown }[] };
};

/** A CloudFormation value with its tokens replaced by "TOKEN" (Fn::Join flattened). */
function flatten(value: unknown): string {
  if (typeof value === 'string') return value;
  const join = (value as { 'Fn::Join'?: [string, unknown[]] })?.['Fn::Join'];
  if (join) return join[1].map(flatten).join(join[0]);
  return 'TOKEN';
}

/** What one synthesized stage names and reads. */
interface StageReading {
  /** POWERTOOLS_METRICS_NAMESPACE of every function that has a Powertools service. */
  readonly functionNamespaces: string[];
  /** The name of every REST API. */
  readonly apiNames: unknown[];
  /** The namespace of every metric of every alarm, by alarm id. */
  readonly alarmNamespaces: Record<string, string[]>;
  /** `ApiName` of every AWS/ApiGateway metric the alarms read. */
  readonly alarmApiNames: unknown[];
  /** The namespace of every metric row of every dashboard widget. */
  readonly widgetNamespaces: string[];
  /** `ApiName` of every AWS/ApiGateway metric row of the dashboard. */
  readonly widgetApiNames: string[];
}

function read(built: SynthesizedApp): StageReading {
  const t = built.apiTemplate;
  const functionNamespaces = Object.values(resourcesOfType(t, 'AWS::Lambda::Function'))
    .map((f) => (f.Properties?.Environment as { Variables?: Properties } | undefined)?.Variables)
    .filter((vars) => vars?.POWERTOOLS_SERVICE_NAME !== undefined)
    .map((vars) => String(vars?.POWERTOOLS_METRICS_NAMESPACE));
  const apiNames = Object.values(resourcesOfType(t, 'AWS::ApiGateway::RestApi')).map(
    (r) => r.Properties?.Name,
  );

  const alarmNamespaces: Record<string, string[]> = {};
  const alarmApiNames: unknown[] = [];
  for (const [id, alarm] of Object.entries(resourcesOfType(t, 'AWS::CloudWatch::Alarm'))) {
    const p = alarm.Properties ?? {};
    const stats: MetricStat[] = [
      ...(typeof p.Namespace === 'string'
        ? [{ Metric: { Namespace: p.Namespace, Dimensions: p.Dimensions as never } }]
        : []),
      ...((p.Metrics as { MetricStat?: MetricStat }[] | undefined) ?? []).flatMap((q) =>
        q.MetricStat ? [q.MetricStat] : [],
      ),
    ];
    alarmNamespaces[id] = stats.map((s) => s.Metric.Namespace);
    for (const s of stats.filter((x) => x.Metric.Namespace === 'AWS/ApiGateway'))
      alarmApiNames.push(s.Metric.Dimensions?.find((d) => d.Name === 'ApiName')?.Value);
  }

  const widgetNamespaces: string[] = [];
  const widgetApiNames: string[] = [];
  for (const dashboard of Object.values(resourcesOfType(t, 'AWS::CloudWatch::Dashboard'))) {
    const body = JSON.parse(flatten(dashboard.Properties?.DashboardBody)) as {
      widgets: { properties?: { metrics?: unknown[][] } }[];
    };
    for (const widget of body.widgets) {
      for (const row of widget.properties?.metrics ?? []) {
        // A metric row: [namespace, name, dimension, value, ..., options]; an expression row
        // holds only its options.
        if (typeof row[0] !== 'string') continue;
        widgetNamespaces.push(row[0]);
        const at = row.indexOf('ApiName');
        if (row[0] === 'AWS/ApiGateway') widgetApiNames.push(String(row[at + 1]));
      }
    }
  }
  return {
    functionNamespaces,
    apiNames,
    alarmNamespaces,
    alarmApiNames,
    widgetNamespaces,
    widgetApiNames,
  };
}

const custom = (namespace: string) => !namespace.startsWith('AWS/');

let dev: StageReading;
let prod: StageReading;
beforeAll(() => {
  dev = read(synthGroundwork({ stage: 'dev' }, { bundle: false }));
  prod = read(synthGroundwork({ stage: 'prod' }, { bundle: false }));
});

describe('two stages in one account and region', () => {
  it('name their REST APIs apart: groundwork-<stage>', () => {
    expect(dev.apiNames).toEqual(['groundwork-dev']);
    expect(prod.apiNames).toEqual(['groundwork-prod']);
  });

  it("read API Gateway's metrics of their own REST API only, in alarms and on the dashboard", () => {
    for (const [stage, name] of [
      [dev, 'groundwork-dev'],
      [prod, 'groundwork-prod'],
    ] as const) {
      expect(stage.alarmApiNames.length).toBeGreaterThan(0);
      expect(new Set(stage.alarmApiNames)).toEqual(new Set([name]));
      expect(stage.widgetApiNames.length).toBeGreaterThan(0);
      expect(new Set(stage.widgetApiNames)).toEqual(new Set([name]));
    }
  });

  it('give their functions a namespace each: Groundwork/<stage>', () => {
    expect(dev.functionNamespaces).toHaveLength(8);
    expect(new Set(dev.functionNamespaces)).toEqual(new Set(['Groundwork/dev']));
    expect(prod.functionNamespaces).toHaveLength(8);
    expect(new Set(prod.functionNamespaces)).toEqual(new Set(['Groundwork/prod']));
  });

  it("read custom metrics, in every alarm and dashboard widget, from their own functions' namespace only", () => {
    expect(dev.functionNamespaces[0]).not.toBe(prod.functionNamespaces[0]);
    for (const stage of [dev, prod]) {
      const [namespace] = stage.functionNamespaces;
      const alarmCustom = Object.entries(stage.alarmNamespaces).flatMap(([id, namespaces]) =>
        namespaces.filter(custom).map((ns) => `${id} ${ns}`),
      );
      // The cost, latency, limiter and ingestion alarms, at least.
      for (const id of ['DailySpendNearCap', 'CostCapReached', 'SearchLatencyP95', 'DeadLetters'])
        expect(alarmCustom.some((entry) => entry.includes(id))).toBe(true);
      expect(alarmCustom.some((entry) => entry.includes('LimiterStoreErrors'))).toBe(true);
      expect(alarmCustom.filter((entry) => !entry.endsWith(` ${String(namespace)}`))).toEqual([]);

      const widgetCustom = stage.widgetNamespaces.filter(custom);
      expect(widgetCustom.length).toBeGreaterThan(50);
      expect(widgetCustom.filter((ns) => ns !== namespace)).toEqual([]);
    }
  });
});
