/**
 * `readReplicas`: Aurora Serverless v2 reader instances and RDS Proxy's read-only endpoint, whose
 * address reaches the functions that search (and no other), with the proxy and without it; none of
 * it by default. Synthesized without bundling (the code assets do not matter here).
 */
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { SERVICES } from '../../lib/metrics';
import { nagFindings, resourcesOfType, synthGroundwork, type SynthesizedApp } from './support';

/** The functions whose search statements may read from the readers. */
const READERS = [SERVICES.search, SERVICES.answer, SERVICES.answerStream];
/** Functions that write, or read what they just wrote: the writer only. */
const WRITERS = [SERVICES.ingest, SERVICES.documents, SERVICES.admin, SERVICES.migrate];

/** Each function's environment, by its service name. */
function environments(template: Template): Map<string, Record<string, unknown>> {
  const out = new Map<string, Record<string, unknown>>();
  for (const fn of Object.values(resourcesOfType(template, 'AWS::Lambda::Function'))) {
    const vars = (fn.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)
      ?.Variables;
    const service = vars?.POWERTOOLS_SERVICE_NAME;
    if (typeof service === 'string' && vars) out.set(service, vars);
  }
  return out;
}

const instances = (app: SynthesizedApp) =>
  Object.values(resourcesOfType(app.dataTemplate, 'AWS::RDS::DBInstance'));

describe('read replicas', () => {
  let withReaders: SynthesizedApp;
  let withoutProxy: SynthesizedApp;
  let byDefault: SynthesizedApp;
  beforeAll(() => {
    withReaders = synthGroundwork({ stage: 'test', readReplicas: 2 }, { bundle: false });
    withoutProxy = synthGroundwork(
      { stage: 'test', readReplicas: 1, rdsProxy: false },
      { bundle: false },
    );
    byDefault = synthGroundwork({ stage: 'test' }, { bundle: false });
  });

  it('adds two serverless v2 readers that scale and pause on their own', () => {
    const all = instances(withReaders);
    expect(all).toHaveLength(3);
    const readers = all.filter((i) => i.Properties?.PromotionTier === 2);
    expect(readers).toHaveLength(2);
    for (const r of readers) {
      expect(r.Properties).toMatchObject({
        DBInstanceClass: 'db.serverless',
        PubliclyAccessible: false,
      });
    }
  });

  it('adds a read-only proxy endpoint in the proxy subnets and security group', () => {
    const t = withReaders.dataTemplate;
    t.resourceCountIs('AWS::RDS::DBProxyEndpoint', 1);
    const proxy = Object.values(resourcesOfType(t, 'AWS::RDS::DBProxy'))[0]!;
    t.hasResourceProperties('AWS::RDS::DBProxyEndpoint', {
      TargetRole: 'READ_ONLY',
      VpcSecurityGroupIds: proxy.Properties?.VpcSecurityGroupIds,
      VpcSubnetIds: proxy.Properties?.VpcSubnetIds,
    });
  });

  it('gives the read endpoint to the functions that search, and to no other', () => {
    const env = environments(withReaders.apiTemplate);
    for (const service of READERS) {
      const vars = env.get(service);
      expect(vars?.DB_READ_HOST).toBeDefined();
      expect(vars?.DB_READ_HOST).not.toEqual(vars?.DB_HOST);
      expect(vars?.DB_HOST).toBeDefined();
    }
    for (const service of WRITERS) expect(env.get(service)?.DB_READ_HOST).toBeUndefined();
  });

  it("uses the cluster's reader endpoint without the proxy", () => {
    expect(instances(withoutProxy)).toHaveLength(2);
    withoutProxy.dataTemplate.resourceCountIs('AWS::RDS::DBProxyEndpoint', 0);
    const env = environments(withoutProxy.apiTemplate);
    for (const service of READERS) {
      const read = JSON.stringify(env.get(service)?.DB_READ_HOST);
      expect(read).toContain('ReadEndpointAddress');
    }
  });

  it('alarms when a reader lags behind the writer for 15 minutes, only with readers', () => {
    // The metric is written as a MetricStat (it carries a label).
    interface Stat {
      MetricStat?: {
        Metric?: { Namespace?: string; MetricName?: string };
        Stat?: string;
        Period?: number;
      };
    }
    const lagAlarms = (app: SynthesizedApp) =>
      Object.values(resourcesOfType(app.apiTemplate, 'AWS::CloudWatch::Alarm')).filter((a) =>
        ((a.Properties?.Metrics ?? []) as Stat[]).some(
          (m) => m.MetricStat?.Metric?.MetricName === 'AuroraReplicaLagMaximum',
        ),
      );
    expect(lagAlarms(withReaders)).toHaveLength(1);
    const lag = lagAlarms(withReaders)[0]!.Properties!;
    expect(lag).toMatchObject({
      EvaluationPeriods: 3,
      Threshold: 10_000,
      ComparisonOperator: 'GreaterThanThreshold',
    });
    expect((lag.Metrics as Stat[])[0]!.MetricStat).toMatchObject({
      Metric: { Namespace: 'AWS/RDS', MetricName: 'AuroraReplicaLagMaximum' },
      Stat: 'Maximum',
      Period: 300,
    });
    expect(lagAlarms(withoutProxy)).toHaveLength(1);
    expect(lagAlarms(byDefault)).toHaveLength(0);
  });

  it('has no reader, no read-only endpoint and no read host by default', () => {
    expect(instances(byDefault)).toHaveLength(1);
    byDefault.dataTemplate.resourceCountIs('AWS::RDS::DBProxyEndpoint', 0);
    const env = environments(byDefault.apiTemplate);
    expect(env.size).toBeGreaterThanOrEqual(READERS.length + WRITERS.length);
    for (const vars of env.values()) expect(vars.DB_READ_HOST).toBeUndefined();
    byDefault.apiTemplate.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ POWERTOOLS_SERVICE_NAME: SERVICES.search }) },
    });
  });

  it('reports no unacknowledged cdk-nag finding with readers', () => {
    expect(nagFindings(withReaders.app)).toEqual([]);
    expect(nagFindings(withoutProxy.app)).toEqual([]);
  });
});
