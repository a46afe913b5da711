/**
 * The configuration switches, synthesized without bundling (the code assets do not matter
 * here): no RDS Proxy, no deletion protection, an existing user pool, a cross-region inference
 * profile, CORS, an alarm e-mail, no global cost cap, 1024-dimension embeddings, two publishing
 * tenants, an hourly lease sweep, two filter indexes. cdk-nag must
 * stay clean in every case.
 */
import { Match } from 'aws-cdk-lib/assertions';
import { nagFindings, resourcesOfType, synthGroundwork, type SynthesizedApp } from './support';

let built: SynthesizedApp;
beforeAll(() => {
  built = synthGroundwork(
    {
      stage: 'test',
      rdsProxy: false,
      deletionProtection: false,
      userPoolId: 'us-east-1_AbCdEf123',
      generationModelId: 'us.anthropic.claude-3-5-haiku-20241022-v1:0',
      corsOrigins: ['https://app.example.com'],
      alarmEmail: 'ops@example.com',
      auroraMinCapacity: 0.5,
      limits: { costCaps: { globalUsdPerDay: null } },
      optionalVpcEndpoints: false,
      hostedLoginDomainPrefix: 'groundwork-test',
      hostedLoginCallbackUrls: ['https://app.example.com/'],
      embeddingDimension: 1024,
      publishingTenants: ['help', 'docs'],
      leaseSweepMinutes: 60,
      filterIndexes: [
        { key: 'category', value: 'manual' },
        { key: 'archived', value: false },
      ],
      exactScanIndex: true,
    },
    { bundle: false },
  );
});

/** The environment of the `migrate` function. */
const migrateEnvironment = (): Record<string, unknown> => {
  const variables = (f: { Properties?: Record<string, unknown> }) =>
    (f.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables;
  const migrate = Object.values(resourcesOfType(built.apiTemplate, 'AWS::Lambda::Function')).find(
    (f) => variables(f)?.POWERTOOLS_SERVICE_NAME === 'migrate',
  );
  return (migrate && variables(migrate)) ?? {};
};

type Statement = { Action: string | string[]; Resource: unknown };
const statements = () =>
  Object.values(resourcesOfType(built.apiTemplate, 'AWS::IAM::Policy')).flatMap(
    (p) => (p.Properties?.PolicyDocument as { Statement: Statement[] }).Statement,
  );

describe('configuration variants', () => {
  it('connects to the cluster directly when the proxy is off, trusting the RDS CA', () => {
    built.dataTemplate.resourceCountIs('AWS::RDS::DBProxy', 0);
    built.apiTemplate.hasResourceProperties('AWS::Lambda::Function', {
      Environment: {
        Variables: Match.objectLike({
          POWERTOOLS_SERVICE_NAME: 'rag-search',
          NODE_EXTRA_CA_CERTS: '/var/runtime/ca-cert.pem',
        }),
      },
    });
  });

  it('creates only the interface endpoints the code calls when the optional ones are off', () => {
    const endpoints = Object.values(resourcesOfType(built.dataTemplate, 'AWS::EC2::VPCEndpoint'));
    const names = endpoints.map((e) => JSON.stringify(e.Properties?.ServiceName));
    expect(endpoints.filter((e) => e.Properties?.VpcEndpointType === 'Interface')).toHaveLength(2);
    expect(names.some((n) => n.includes('secretsmanager'))).toBe(true);
    expect(names.some((n) => n.includes('bedrock-runtime'))).toBe(true);
  });

  it('keeps a 0.5 ACU minimum without auto-pause, and no deletion protection', () => {
    built.dataTemplate.hasResourceProperties('AWS::RDS::DBCluster', {
      DeletionProtection: false,
      ServerlessV2ScalingConfiguration: {
        MinCapacity: 0.5,
        MaxCapacity: 4,
        SecondsUntilAutoPause: Match.absent(),
      },
    });
  });

  it('adds groups and a client to an existing user pool instead of creating one', () => {
    built.dataTemplate.resourceCountIs('AWS::Cognito::UserPool', 0);
    built.dataTemplate.hasResourceProperties('AWS::Cognito::UserPoolGroup', {
      UserPoolId: 'us-east-1_AbCdEf123',
      GroupName: 'admin',
    });
    built.dataTemplate.hasResourceProperties('AWS::Cognito::UserPoolClient', {
      UserPoolId: 'us-east-1_AbCdEf123',
    });
  });

  it('offers Cognito hosted sign-in with the code flow only, for the playground', () => {
    built.dataTemplate.hasResourceProperties('AWS::Cognito::UserPoolDomain', {
      Domain: 'groundwork-test',
    });
    built.dataTemplate.hasResourceProperties('AWS::Cognito::UserPoolClient', {
      AllowedOAuthFlows: ['code'],
      AllowedOAuthFlowsUserPoolClient: true,
      CallbackURLs: ['https://app.example.com/'],
      GenerateSecret: false,
    });
    const outputs = built.apiTemplate.findOutputs('PlaygroundConfig');
    expect(JSON.stringify(outputs)).toContain('cognito');
  });

  it('grants an inference profile and its foundation model in the regions it routes to', () => {
    const generation = statements().filter((s) =>
      ([] as string[]).concat(s.Action).includes('bedrock:InvokeModelWithResponseStream'),
    );
    expect(generation).toHaveLength(2);
    for (const statement of generation) {
      const text = JSON.stringify(statement.Resource);
      expect(text).toContain('inference-profile/us.anthropic.claude-3-5-haiku-20241022-v1:0');
      expect(text).toContain(
        ':bedrock:*::foundation-model/anthropic.claude-3-5-haiku-20241022-v1:0',
      );
    }
  });

  it('allows the configured origins on the API, its functions, its gateway responses and browser uploads', () => {
    built.dataTemplate.hasResourceProperties('AWS::S3::Bucket', {
      CorsConfiguration: {
        CorsRules: [
          Match.objectLike({
            AllowedOrigins: ['https://app.example.com'],
            AllowedMethods: ['PUT'],
            AllowedHeaders: ['content-type'],
          }),
        ],
      },
    });
    built.apiTemplate.hasResourceProperties('AWS::Lambda::Function', {
      Environment: {
        Variables: Match.objectLike({ CORS_ORIGINS: '["https://app.example.com"]' }),
      },
    });
    // The REST API answers every route's preflight.
    built.apiTemplate.hasResourceProperties('AWS::ApiGateway::Method', {
      HttpMethod: 'OPTIONS',
      Integration: Match.objectLike({
        IntegrationResponses: Match.arrayWith([
          Match.objectLike({
            ResponseParameters: Match.objectLike({
              'method.response.header.Access-Control-Allow-Origin': "'https://app.example.com'",
            }),
          }),
        ]),
      }),
    });
  });

  it('e-mails alarms, and has no spend alarm without a global cap', () => {
    built.apiTemplate.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'ops@example.com',
    });
    const alarms = Object.keys(resourcesOfType(built.apiTemplate, 'AWS::CloudWatch::Alarm'));
    expect(alarms.some((id) => id.includes('DailySpendNearCap'))).toBe(false);
    expect(alarms.some((id) => id.includes('CostCapReached'))).toBe(true);
  });

  it('has the migration make the declared filter indexes, running again when they change', () => {
    const declared = JSON.stringify([
      { key: 'category', value: 'manual' },
      { key: 'archived', value: false },
    ]);
    built.apiTemplate.hasResourceProperties('Custom::GroundworkSchema', {
      FilterIndexes: declared,
    });
    expect(migrateEnvironment().FILTER_INDEXES).toBe(declared);
  });

  it('has the migration build the exact-scan index when asked, running again when that changes', () => {
    built.apiTemplate.hasResourceProperties('Custom::GroundworkSchema', { ExactScanIndex: 'on' });
    expect(migrateEnvironment().EXACT_SCAN_INDEX).toBe('on');
  });

  it('asks Titan for 1024 dimensions and has the migration fit the index to them', () => {
    built.apiTemplate.hasResourceProperties('Custom::GroundworkSchema', {
      EmbeddingModel: 'amazon.titan-embed-text-v2:0/1024',
    });
    const dimensions = Object.values(
      resourcesOfType(built.apiTemplate, 'AWS::Lambda::Function'),
    ).flatMap((f) => {
      const vars = (f.Properties?.Environment as { Variables?: Record<string, unknown> })
        ?.Variables;
      return vars?.EMBEDDING_DIMENSION === undefined ? [] : [vars.EMBEDDING_DIMENSION];
    });
    expect(dimensions.length).toBeGreaterThanOrEqual(4);
    expect(new Set(dimensions)).toEqual(new Set(['1024']));
  });

  it('gives every function that ingests, lists or retrieves documents the same publishing tenants', () => {
    const byService = Object.fromEntries(
      Object.values(resourcesOfType(built.apiTemplate, 'AWS::Lambda::Function')).flatMap((f) => {
        const vars = (f.Properties?.Environment as { Variables?: Record<string, unknown> })
          ?.Variables;
        return vars?.POWERTOOLS_SERVICE_NAME === undefined
          ? []
          : [[vars.POWERTOOLS_SERVICE_NAME, vars.PUBLISHING_TENANTS]];
      }),
    );
    for (const service of ['ingest', 'rag-search', 'rag-answer', 'rag-answer-stream', 'documents'])
      expect([service, byService[service]]).toEqual([service, 'help,docs']);
  });

  it('sweeps leases at the configured interval, dropping a sweep event not run before the next', () => {
    built.apiTemplate.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(1 hour)',
    });
    built.apiTemplate.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      MaximumRetryAttempts: 0,
      MaximumEventAgeInSeconds: 3600,
    });
  });

  it('reports no unacknowledged cdk-nag finding', () => {
    expect(nagFindings(built.app)).toEqual([]);
  });
});
