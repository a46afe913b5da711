/**
 * What a first `cdk deploy` on a fresh account needs, and the locked-down edge and egress, as
 * targeted assertions on the synthesized templates (no bundling: the code assets do not matter).
 */
import { Match } from 'aws-cdk-lib/assertions';
import { resourcesOfType, synthGroundwork, type SynthesizedApp } from './support';

type Resource = { Type?: string; Properties?: Record<string, unknown>; [k: string]: unknown };

let built: SynthesizedApp;
beforeAll(() => {
  built = synthGroundwork({}, { bundle: false });
});

const env = (fn: Resource) =>
  (fn.Properties?.Environment as { Variables: Record<string, unknown> }).Variables;

function functionByService(service: string): [string, Resource] {
  const found = Object.entries(resourcesOfType(built.apiTemplate, 'AWS::Lambda::Function')).find(
    ([, r]) => env(r)?.POWERTOOLS_SERVICE_NAME === service,
  );
  if (!found) throw new Error(`no function for service ${service}`);
  return found;
}

/** Every egress rule of both stacks, inline and separate, with the group that owns it. */
function egressRules(): { group: unknown; rule: Record<string, unknown> }[] {
  return [built.dataTemplate, built.apiTemplate].flatMap((t) => [
    ...Object.entries(resourcesOfType(t, 'AWS::EC2::SecurityGroup')).flatMap(([id, g]) =>
      ((g.Properties?.SecurityGroupEgress as Record<string, unknown>[] | undefined) ?? []).map(
        (rule) => ({ group: id, rule }),
      ),
    ),
    ...Object.values(resourcesOfType(t, 'AWS::EC2::SecurityGroupEgress')).map((r) => ({
      group: r.Properties?.GroupId,
      rule: r.Properties ?? {},
    })),
  ]);
}

describe('a first deploy on a fresh account', () => {
  it('creates the API Gateway CloudWatch Logs role before the stage that writes access logs', () => {
    const accounts = resourcesOfType(built.apiTemplate, 'AWS::ApiGateway::Account');
    const [accountId, account] = Object.entries(accounts)[0] ?? [];
    expect(account?.Properties?.CloudWatchRoleArn).toBeDefined();
    // Kept on stack deletion: other APIs of the account may rely on the setting.
    expect(account?.DeletionPolicy).toBe('Retain');
    const stages = resourcesOfType(built.apiTemplate, 'AWS::ApiGateway::Stage');
    const stage = Object.values(stages)[0];
    expect(stage?.Properties?.AccessLogSetting).toBeDefined();
    expect(stage?.DependsOn).toContain(accountId);
  });

  it('leaves the account setting alone when apiGatewayCloudWatchRole is false', () => {
    const other = synthGroundwork({ apiGatewayCloudWatchRole: false }, { bundle: false });
    other.apiTemplate.resourceCountIs('AWS::ApiGateway::Account', 0);
  });

  it('reserves no Lambda concurrency by default; the event source caps ingestion instead', () => {
    for (const fn of Object.values(resourcesOfType(built.apiTemplate, 'AWS::Lambda::Function')))
      expect(fn.Properties?.ReservedConcurrentExecutions).toBeUndefined();
    const [ingestId] = functionByService('ingest');
    built.apiTemplate.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: ingestId },
      ScalingConfig: { MaximumConcurrency: 5 },
    });
  });

  it('reserves ingest concurrency only when asked to', () => {
    const other = synthGroundwork({ ingestReservedConcurrency: 8 }, { bundle: false });
    const ingest = Object.values(resourcesOfType(other.apiTemplate, 'AWS::Lambda::Function')).find(
      (f) => env(f)?.POWERTOOLS_SERVICE_NAME === 'ingest',
    );
    expect(ingest?.Properties?.ReservedConcurrentExecutions).toBe(8);
  });

  it('migrates through the cluster endpoint, not RDS Proxy, and waits for the database within a 10-minute timeout', () => {
    const [, migrate] = functionByService('migrate');
    const host = JSON.stringify(env(migrate).DB_HOST);
    expect(host).toMatch(/Endpoint\.?Address/);
    expect(host).not.toMatch(/Proxy/);
    expect(env(migrate).NODE_EXTRA_CA_CERTS).toBe('/var/runtime/ca-cert.pem');
    expect(migrate.Properties?.Timeout).toBe(600);
    // The request-serving functions still go through the proxy.
    const [, search] = functionByService('rag-search');
    expect(JSON.stringify(env(search).DB_HOST)).toMatch(/Proxy/);
    // The cluster accepts the migration's own group.
    built.dataTemplate.hasResourceProperties('AWS::EC2::SecurityGroupIngress', {
      Description: 'Schema migration to the cluster',
      FromPort: 5432,
    });
  });

  it('lets CloudFormation name the documents bucket unless a name is configured', () => {
    const buckets = Object.values(resourcesOfType(built.dataTemplate, 'AWS::S3::Bucket'));
    expect(buckets.every((b) => b.Properties?.BucketName === undefined)).toBe(true);
    const named = synthGroundwork({ documentsBucketName: 'my-docs-bucket' }, { bundle: false });
    named.dataTemplate.hasResourceProperties('AWS::S3::Bucket', { BucketName: 'my-docs-bucket' });
  });

  it('creates no interface endpoint the code does not call by default', () => {
    const services = Object.values(
      resourcesOfType(built.dataTemplate, 'AWS::EC2::VPCEndpoint'),
    ).map((e) => JSON.stringify(e.Properties?.ServiceName));
    expect(services.filter((s) => /\.(sqs|logs|monitoring)"/.test(s))).toEqual([]);
  });
});

describe('egress', () => {
  it('opens no security group to the internet', () => {
    const open = egressRules().filter(
      ({ rule }) => rule.CidrIp === '0.0.0.0/0' || rule.CidrIpv6 === '::/0',
    );
    expect(open).toEqual([]);
  });

  it('lets the functions reach only the interface endpoints and the S3 and DynamoDB prefix lists on 443', () => {
    const functions = Object.entries(
      resourcesOfType(built.dataTemplate, 'AWS::EC2::SecurityGroup'),
    ).find(([, g]) => String(g.Properties?.GroupDescription).startsWith('Groundwork functions'));
    expect(functions).toBeDefined();
    const rules = egressRules()
      .filter(({ group }) => JSON.stringify(group).includes(functions?.[0] as string))
      .map(({ rule }) => rule);
    expect(rules).toHaveLength(3);
    for (const rule of rules) {
      expect(rule.FromPort).toBe(443);
      expect(rule.CidrIp).toBeUndefined();
    }
    expect(rules.filter((r) => r.DestinationPrefixListId !== undefined)).toHaveLength(2);
    expect(rules.filter((r) => r.DestinationSecurityGroupId !== undefined)).toHaveLength(1);
  });

  it('gives every VPC endpoint a policy confined to this account', () => {
    const endpoints = Object.values(resourcesOfType(built.dataTemplate, 'AWS::EC2::VPCEndpoint'));
    expect(endpoints.length).toBeGreaterThanOrEqual(4);
    for (const endpoint of endpoints) {
      const statements = (
        endpoint.Properties?.PolicyDocument as { Statement: Record<string, unknown>[] } | undefined
      )?.Statement;
      expect(statements?.length).toBeGreaterThan(0);
      for (const statement of statements ?? [])
        expect(statement.Condition).toEqual({
          StringEquals: expect.objectContaining({
            'aws:PrincipalAccount': { Ref: 'AWS::AccountId' },
          }),
        });
    }
  });

  it('lets through the gateway endpoints only the documents bucket and the limits table', () => {
    const gateways = Object.values(
      resourcesOfType(built.dataTemplate, 'AWS::EC2::VPCEndpoint'),
    ).filter((e) => e.Properties?.VpcEndpointType === 'Gateway');
    expect(gateways).toHaveLength(2);
    for (const gateway of gateways) {
      const statements = (
        gateway.Properties?.PolicyDocument as { Statement: { Resource: unknown }[] }
      ).Statement;
      for (const statement of statements) {
        const resources = JSON.stringify(statement.Resource);
        expect(resources).not.toBe('"*"');
        expect(resources).toMatch(/"Documents[0-9A-F]{8}"|"Limits[0-9A-F]{8}"/);
      }
    }
  });
});

describe('the edge', () => {
  it.each([
    ['UNAUTHORIZED', '401', 'authentication_required'],
    ['ACCESS_DENIED', '403', 'forbidden'],
    ['WAF_FILTERED', '403', 'forbidden'],
    ['MISSING_AUTHENTICATION_TOKEN', '404', 'not_found'],
    ['THROTTLED', '429', 'rate_limit_exceeded'],
  ])('answers API Gateway %s with %s and the error model', (type, status, code) => {
    built.apiTemplate.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
      ResponseType: type,
      StatusCode: status,
      ResponseTemplates: {
        'application/json': Match.serializedJson({
          error: { code, message: Match.anyValue(), retryable: Match.anyValue() },
        }),
      },
    });
  });

  it('carries the error model and the CORS origin on the authorizer and firewall rejections', () => {
    for (const type of ['UNAUTHORIZED', 'ACCESS_DENIED', 'WAF_FILTERED']) {
      built.apiTemplate.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
        ResponseType: type,
        ResponseParameters: Match.objectLike({
          'gatewayresponse.header.Content-Type': "'application/json; charset=utf-8'",
        }),
      });
    }
    const open = synthGroundwork({ corsOrigins: ['https://app.example.com'] }, { bundle: false });
    open.apiTemplate.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
      ResponseType: 'UNAUTHORIZED',
      ResponseParameters: Match.objectLike({
        'gatewayresponse.header.Access-Control-Allow-Origin': "'https://app.example.com'",
      }),
    });
  });

  it('has no WAF by default, and a web ACL with managed rules and a per-IP rate rule on the REST stage when switched on', () => {
    built.apiTemplate.resourceCountIs('AWS::WAFv2::WebACL', 0);
    const guarded = synthGroundwork({ waf: true, wafRateLimitPer5Minutes: 600 }, { bundle: false });
    guarded.apiTemplate.hasResourceProperties('AWS::WAFv2::WebACL', {
      Scope: 'REGIONAL',
      DefaultAction: { Allow: {} },
      Rules: Match.arrayWith([
        Match.objectLike({
          Action: { Block: {} },
          Statement: { RateBasedStatement: { Limit: 600, AggregateKeyType: 'IP' } },
        }),
        Match.objectLike({
          Statement: {
            ManagedRuleGroupStatement: Match.objectLike({
              VendorName: 'AWS',
              Name: 'AWSManagedRulesCommonRuleSet',
            }),
          },
        }),
      ]),
    });
    const association = Object.values(
      resourcesOfType(guarded.apiTemplate, 'AWS::WAFv2::WebACLAssociation'),
    )[0];
    // The one stage of the one REST API: the WAF covers every route.
    const [stageId] = Object.keys(resourcesOfType(guarded.apiTemplate, 'AWS::ApiGateway::Stage'));
    const [apiId] = Object.keys(resourcesOfType(guarded.apiTemplate, 'AWS::ApiGateway::RestApi'));
    const arn = JSON.stringify(association?.Properties?.ResourceArn);
    expect(arn).toContain('/stages/');
    expect(arn).toContain(`{"Ref":"${apiId}"}`);
    expect(arn).toContain(`{"Ref":"${stageId}"}`);
    guarded.apiTemplate.resourceCountIs('AWS::WAFv2::WebACLAssociation', 1);
  });
});
