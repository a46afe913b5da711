/**
 * The two stacks as synthesized from cdk.json's defaults, with the real bundling: the resources
 * that matter (Aurora, network, API auth, queues, IAM scope, alarms), cdk-nag, and a snapshot of
 * the stateful resources' logical ids and types.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { App, Stack, Validations } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import * as rds from 'aws-cdk-lib/aws-rds';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import {
  LIMITS_TTL_ATTRIBUTE,
  limitsTableDefinition,
} from '../../lambdas/adapters/dynamodb/limit-store';
import { migrationsHash, routinesHash } from '../../lib/constructs/database-migration';
import { DASHBOARD_METRICS, METRICS_NAMESPACE } from '../../lib/metrics';
import { nagFindings, resourcesOfType, synthGroundwork, type SynthesizedApp } from './support';

type Resource = { Type?: string; Properties?: Record<string, unknown>; [k: string]: unknown };
type Statement = { Effect: string; Action: string | string[]; Resource: unknown };

let built: SynthesizedApp;
beforeAll(() => {
  built = synthGroundwork();
});

const actionsOf = (s: Statement) => (Array.isArray(s.Action) ? s.Action : [s.Action]);
const resourcesOf = (s: Statement) => (Array.isArray(s.Resource) ? s.Resource : [s.Resource]);

/** Every IAM policy statement of both stacks (inline and customer managed policies). */
function allStatements(): Statement[] {
  return [built.dataTemplate, built.apiTemplate].flatMap((t) =>
    [
      ...Object.values(resourcesOfType(t, 'AWS::IAM::Policy')),
      ...Object.values(resourcesOfType(t, 'AWS::IAM::ManagedPolicy')),
    ].flatMap((p) => (p.Properties?.PolicyDocument as { Statement: Statement[] }).Statement ?? []),
  );
}

/** The Groundwork functions (the seven entries), by logical id. */
function groundworkFunctions(): Record<string, Resource> {
  return Object.fromEntries(
    Object.entries(resourcesOfType(built.apiTemplate, 'AWS::Lambda::Function')).filter(
      ([, r]) =>
        (r.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)
          ?.Variables?.POWERTOOLS_SERVICE_NAME !== undefined,
    ),
  );
}

function functionByService(service: string): [string, Resource] {
  const found = Object.entries(groundworkFunctions()).find(
    ([, r]) =>
      (r.Properties?.Environment as { Variables: Record<string, unknown> }).Variables
        .POWERTOOLS_SERVICE_NAME === service,
  );
  if (!found) throw new Error(`no function for service ${service}`);
  return found;
}

/** The asset folder of a function's code in the cloud assembly. */
function assetDir(fn: Resource): string {
  const key = (fn.Properties?.Code as { S3Key: string }).S3Key;
  return path.join(built.outdir, `asset.${key.replace(/\.zip$/, '')}`);
}

describe('Aurora', () => {
  it('runs the newest Aurora PostgreSQL 17 minor that aws-cdk-lib knows, upgraded in place by AWS', () => {
    const minors = Object.keys(rds.AuroraPostgresEngineVersion)
      .map((k) => /^VER_17_(\d+)$/.exec(k)?.[1])
      .filter((m): m is string => m !== undefined)
      .map(Number);
    expect(minors.length).toBeGreaterThan(0);
    built.dataTemplate.hasResourceProperties('AWS::RDS::DBCluster', {
      EngineVersion: `17.${Math.max(...minors)}`,
    });
    built.dataTemplate.hasResourceProperties('AWS::RDS::DBInstance', {
      AutoMinorVersionUpgrade: true,
    });
  });

  it('is Aurora PostgreSQL 17 Serverless v2, encrypted, scaling to zero, with deletion protection', () => {
    built.dataTemplate.hasResourceProperties('AWS::RDS::DBCluster', {
      Engine: 'aurora-postgresql',
      EngineVersion: Match.stringLikeRegexp('^17\\.'),
      StorageEncrypted: true,
      DeletionProtection: true,
      ServerlessV2ScalingConfiguration: {
        MinCapacity: 0,
        MaxCapacity: 4,
        SecondsUntilAutoPause: 600,
      },
      EnableCloudwatchLogsExports: ['postgresql'],
    });
    built.dataTemplate.hasResourceProperties('AWS::RDS::DBInstance', {
      DBInstanceClass: 'db.serverless',
      PubliclyAccessible: false,
    });
  });

  it('keeps the owner and the application credentials in Secrets Manager, rotated every 30 days', () => {
    built.dataTemplate.resourceCountIs('AWS::SecretsManager::Secret', 2);
    const schedules = Object.values(
      resourcesOfType(built.dataTemplate, 'AWS::SecretsManager::RotationSchedule'),
    );
    expect(schedules).toHaveLength(2);
    for (const schedule of schedules)
      expect(schedule.Properties?.RotationRules).toEqual({ ScheduleExpression: 'rate(30 days)' });
    // Both rotate as a single user, so the usernames RDS Proxy matches never change (an
    // alternating-users secret would swap them); the application's secret does not name the
    // owner's, and is not rotated at deploy time, before the migration function created its login.
    const appSecret = Object.entries(
      resourcesOfType(built.dataTemplate, 'AWS::SecretsManager::Secret'),
    ).find(([, r]) => JSON.stringify(r.Properties).includes('groundwork_app\\"'));
    expect(appSecret).toBeDefined();
    expect(JSON.stringify(appSecret![1].Properties)).not.toContain('masterarn');
    // The rotation functions' applications (Serverless Application Repository ids, per partition).
    const applications = JSON.stringify(
      (built.dataTemplate.toJSON() as { Mappings?: unknown }).Mappings,
    );
    expect(applications).toContain('applications/SecretsManagerRDSPostgreSQLRotationSingleUser');
    expect(applications).not.toContain('MultiUser');
    built.dataTemplate.resourceCountIs('AWS::Serverless::Application', 2);
    expect(schedules.filter((s) => s.Properties?.RotateImmediatelyOnUpdate === false)).toHaveLength(
      1,
    );
  });

  it('lets the request-serving functions log in as the application, and only the migration function as the owner', () => {
    const secretOf = (fn: Resource) =>
      JSON.stringify(
        (fn.Properties?.Environment as { Variables: Record<string, unknown> }).Variables
          .DB_SECRET_ARN,
      );
    const [, migrate] = functionByService('migrate');
    const ownerSecret = secretOf(migrate);
    expect(ownerSecret).toMatch(/ClusterSecret/);
    const appSecret = JSON.stringify(
      (migrate.Properties?.Environment as { Variables: Record<string, unknown> }).Variables
        .APP_DB_SECRET_ARN,
    );
    expect(appSecret).toMatch(/AppSecret/);
    const databaseUsers = Object.values(groundworkFunctions()).filter(
      (fn) => fn !== migrate && secretOf(fn) !== undefined && secretOf(fn) !== 'undefined',
    );
    expect(databaseUsers.length).toBeGreaterThanOrEqual(5);
    for (const fn of databaseUsers) expect(secretOf(fn)).toBe(appSecret);
    // IAM: of the API stack's roles, only the migration function's reads the owner's secret
    // (in the data stack, RDS Proxy's role reads both, to log either user in).
    const ownerOutput = /PublishOutputRefDatabaseClusterSecretAttachment\w+/.exec(ownerSecret)?.[0];
    expect(ownerOutput).toBeDefined();
    const readers = Object.values(resourcesOfType(built.apiTemplate, 'AWS::IAM::Policy')).filter(
      (p) =>
        (p.Properties?.PolicyDocument as { Statement: Statement[] }).Statement.some(
          (s) =>
            actionsOf(s).includes('secretsmanager:GetSecretValue') &&
            JSON.stringify(s.Resource).includes(ownerOutput!),
        ),
    );
    expect(readers).toHaveLength(1);
    expect(JSON.stringify(readers[0]!.Properties?.Roles)).toMatch(/Migrate/);
  });

  it('is reached through RDS Proxy with TLS required', () => {
    built.dataTemplate.hasResourceProperties('AWS::RDS::DBProxy', {
      EngineFamily: 'POSTGRESQL',
      RequireTLS: true,
    });
    const [, search] = functionByService('rag-search');
    const vars = (search.Properties?.Environment as { Variables: Record<string, unknown> })
      .Variables;
    expect(JSON.stringify(vars.DB_HOST)).toMatch(/Proxy/);
  });

  it('applies the migrations and routines through a custom resource that changes with their hashes', () => {
    built.apiTemplate.hasResourceProperties('Custom::GroundworkSchema', {
      MigrationsHash: migrationsHash(),
      RoutinesHash: routinesHash(),
      EmbeddingModel: 'amazon.titan-embed-text-v2:0/512',
      Database: Match.anyValue(),
    });
    const [, migrate] = functionByService('migrate');
    expect(existsSync(path.join(assetDir(migrate), 'migrations', '0001_init.sql'))).toBe(true);
  });
});

describe('network', () => {
  it('has no NAT gateway, no internet gateway and only isolated subnets', () => {
    built.dataTemplate.resourceCountIs('AWS::EC2::NatGateway', 0);
    built.dataTemplate.resourceCountIs('AWS::EC2::InternetGateway', 0);
    for (const subnet of Object.values(resourcesOfType(built.dataTemplate, 'AWS::EC2::Subnet'))) {
      expect(subnet.Properties?.MapPublicIpOnLaunch).toBe(false);
    }
  });

  it('has gateway endpoints for S3 and DynamoDB and interface endpoints for the services the functions call', () => {
    const endpoints = Object.values(resourcesOfType(built.dataTemplate, 'AWS::EC2::VPCEndpoint'));
    const services = endpoints.map((e) => JSON.stringify(e.Properties?.ServiceName));
    for (const service of ['.s3', '.dynamodb', 'secretsmanager', 'bedrock-runtime']) {
      expect(services.some((s) => s.includes(service))).toBe(true);
    }
    // SQS, CloudWatch Logs and monitoring endpoints only with optionalVpcEndpoints.
    expect(endpoints).toHaveLength(4);
    const gateways = endpoints.filter((e) => e.Properties?.VpcEndpointType === 'Gateway');
    expect(gateways).toHaveLength(2);
  });

  it('runs every function in the VPC', () => {
    for (const [id, fn] of Object.entries(groundworkFunctions())) {
      expect([id, fn.Properties?.VpcConfig]).toEqual([
        id,
        expect.objectContaining({ SubnetIds: expect.any(Array) }),
      ]);
    }
  });
});

describe('API', () => {
  const PROTECTED = [
    'POST /api/rag/search',
    'POST /api/rag/answer',
    'POST /api/chat/conversations/{conversationId}/messages',
    'POST /api/lexybrain/rag',
    'GET /api/threads',
    'GET /api/threads/{id}',
    'DELETE /api/threads/{id}',
    'POST /api/messages/{id}/feedback',
    'GET /api/usage',
    'POST /api/documents',
    'GET /api/documents',
    'GET /api/documents/{id}',
    'DELETE /api/documents/{id}',
    'POST /api/documents/{id}/retry',
    'GET /api/documents/{id}/passage',
    'GET /api/admin/stats',
    'GET /api/admin/feedback',
    'GET /api/admin/prompts',
    'POST /api/admin/prompts',
    'POST /api/admin/prompts/{id}/activate',
    'POST /api/admin/prompts/{id}/deactivate',
    'GET /api/admin/lexybrain/rag/stats',
    'GET /api/admin/lexybrain/rag/feedback',
    'GET /api/admin/lexybrain/configs',
    'POST /api/admin/lexybrain/configs',
    'POST /api/admin/lexybrain/configs/{id}/activate',
    'POST /api/admin/lexybrain/configs/{id}/deactivate',
    'GET /api/search',
    'POST /api/upload',
    'GET /api/admin/source-policy',
    'POST /api/admin/source-policy',
    'POST /api/admin/harness',
  ];

  it("integrates seed 004's routes with the functions that hold their use cases", () => {
    const routes = resourcesOfType(built.apiTemplate, 'AWS::ApiGatewayV2::Route');
    const integrations = resourcesOfType(built.apiTemplate, 'AWS::ApiGatewayV2::Integration');
    const target = (routeKey: string) => {
      const route = Object.values(routes).find((r) => r.Properties?.RouteKey === routeKey);
      const ref = JSON.stringify(route?.Properties?.Target);
      const id = Object.keys(integrations).find((key) => ref.includes(key));
      return JSON.stringify(integrations[id ?? '']?.Properties?.IntegrationUri);
    };
    expect(target('GET /api/search')).toContain(functionByService('rag-answer')[0]);
    expect(target('POST /api/upload')).toContain(functionByService('documents')[0]);
  });

  it('serves POST /api/lexybrain/rag from the rag-answer function, beside POST /api/rag/answer', () => {
    const routes = Object.values(
      resourcesOfType(built.apiTemplate, 'AWS::ApiGatewayV2::Route'),
    ).map((r) => r.Properties ?? {});
    const target = (key: string) => routes.find((r) => r.RouteKey === key)?.Target;
    expect(target('POST /api/lexybrain/rag')).toBeDefined();
    expect(target('POST /api/lexybrain/rag')).toEqual(target('POST /api/rag/answer'));
    expect(target('POST /api/lexybrain/rag')).not.toEqual(target('POST /api/rag/search'));
    built.apiTemplate.hasResourceProperties('AWS::Lambda::Function', {
      Environment: {
        Variables: Match.objectLike({
          POWERTOOLS_SERVICE_NAME: 'rag-answer',
          LEXYBRAIN_RAG_ENABLED: 'true',
        }),
      },
    });
  });

  it('requires the Cognito JWT authorizer on every route but GET /api/health', () => {
    const routes = Object.values(
      resourcesOfType(built.apiTemplate, 'AWS::ApiGatewayV2::Route'),
    ).map((r) => r.Properties ?? {});
    expect(routes.map((r) => r.RouteKey).sort()).toEqual([...PROTECTED, 'GET /api/health'].sort());
    for (const route of routes) {
      if (route.RouteKey === 'GET /api/health') {
        expect(route.AuthorizationType).toBe('NONE');
        expect(route.AuthorizerId).toBeUndefined();
      } else {
        expect([route.RouteKey, route.AuthorizationType]).toEqual([route.RouteKey, 'JWT']);
        expect(route.AuthorizerId).toBeDefined();
      }
    }
    built.apiTemplate.hasResourceProperties('AWS::ApiGatewayV2::Authorizer', {
      AuthorizerType: 'JWT',
      IdentitySource: ['$request.header.Authorization'],
      JwtConfiguration: { Audience: [Match.anyValue()], Issuer: Match.anyValue() },
    });
  });

  it('throttles the stage and writes JSON access logs', () => {
    built.apiTemplate.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      DefaultRouteSettings: {
        ThrottlingRateLimit: 50,
        ThrottlingBurstLimit: 100,
        DetailedMetricsEnabled: true,
      },
      AccessLogSettings: {
        DestinationArn: Match.anyValue(),
        Format: Match.stringLikeRegexp('"requestId":"\\$context.requestId"'),
      },
    });
  });

  it('streams POST /api/rag/answer through a REST API whose Lambda integration streams, behind the Cognito authorizer', () => {
    built.apiTemplate.resourceCountIs('AWS::Lambda::Url', 0);
    const [streamId] = functionByService('rag-answer-stream');
    built.apiTemplate.hasResourceProperties('AWS::ApiGateway::Method', {
      HttpMethod: 'POST',
      AuthorizationType: 'COGNITO_USER_POOLS',
      AuthorizerId: Match.anyValue(),
      Integration: Match.objectLike({
        Type: 'AWS_PROXY',
        ResponseTransferMode: 'STREAM',
        // InvokeWithResponseStream, not Invoke.
        Uri: Match.objectLike({
          'Fn::Join': Match.arrayWith([
            Match.arrayWith([Match.stringLikeRegexp('response-streaming-invocations')]),
          ]),
        }),
      }),
    });
    built.apiTemplate.hasResourceProperties('AWS::ApiGateway::Authorizer', {
      Type: 'COGNITO_USER_POOLS',
      IdentitySource: 'method.request.header.Authorization',
    });
    built.apiTemplate.hasResourceProperties('AWS::ApiGateway::Stage', {
      TracingEnabled: true,
      AccessLogSetting: Match.objectLike({ DestinationArn: Match.anyValue() }),
      MethodSettings: Match.arrayWith([
        Match.objectLike({ ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 }),
      ]),
    });
    expect(streamId).toBeDefined();
  });

  it("streams every streaming route of the table on that REST API: POST /api/rag/answer and seed 003's chat route", () => {
    const posts = Object.values(resourcesOfType(built.apiTemplate, 'AWS::ApiGateway::Method'))
      .map((m) => m.Properties ?? {})
      .filter((m) => m.HttpMethod === 'POST');
    expect(posts).toHaveLength(2);
    for (const method of posts) {
      expect(method.AuthorizationType).toBe('COGNITO_USER_POOLS');
      expect(method.Integration).toMatchObject({ ResponseTransferMode: 'STREAM' });
    }
    const parts = Object.values(resourcesOfType(built.apiTemplate, 'AWS::ApiGateway::Resource'))
      .map((r) => r.Properties?.PathPart as string)
      .sort();
    expect(parts).toEqual(
      ['api', 'rag', 'answer', 'chat', 'conversations', '{conversationId}', 'messages'].sort(),
    );
  });
});

describe('ingestion', () => {
  it('sends created and removed objects to the ingest queue, which redrives to a dead-letter queue', () => {
    const queues = resourcesOfType(built.dataTemplate, 'AWS::SQS::Queue');
    const [dlqId] =
      Object.entries(queues).find(([, q]) => q.Properties?.RedrivePolicy === undefined) ?? [];
    built.dataTemplate.hasResourceProperties('AWS::SQS::Queue', {
      RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [dlqId, 'Arn'] }, maxReceiveCount: 3 },
      VisibilityTimeout: 360,
    });
    built.dataTemplate.hasResourceProperties('Custom::S3BucketNotifications', {
      NotificationConfiguration: {
        QueueConfigurations: Match.arrayWith([
          Match.objectLike({ Events: ['s3:ObjectCreated:*'] }),
          Match.objectLike({ Events: ['s3:ObjectRemoved:*'] }),
        ]),
      },
    });
  });

  it('moves a document that kills every worker to the dead-letter queue within 20 minutes', () => {
    const [, queue] =
      Object.entries(resourcesOfType(built.dataTemplate, 'AWS::SQS::Queue')).find(
        ([, q]) => q.Properties?.RedrivePolicy !== undefined,
      ) ?? [];
    const visibility = queue?.Properties?.VisibilityTimeout as number;
    const receives = (queue?.Properties?.RedrivePolicy as { maxReceiveCount: number })
      .maxReceiveCount;
    const [, ingest] = functionByService('ingest');
    // A message stays hidden while a worker may still hold it, and no longer than needed.
    expect(visibility).toBeGreaterThanOrEqual(ingest.Properties?.Timeout as number);
    expect(visibility * receives).toBeLessThanOrEqual(20 * 60);
  });

  it('consumes the queue in batches of 10 with partial batch responses, at most 5 instances at once', () => {
    const [ingestId] = functionByService('ingest');
    built.apiTemplate.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: ingestId },
      BatchSize: 10,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      ScalingConfig: { MaximumConcurrency: 5 },
    });
  });

  it('consumes the dead-letter queue and runs the lease sweep every 5 minutes (nothing stranded)', () => {
    const [ingestId, ingest] = functionByService('ingest');
    const variables = (ingest.Properties?.Environment as { Variables: Record<string, unknown> })
      .Variables;
    expect(variables.DEAD_LETTER_QUEUE_ARN).toBeDefined();
    // The event source reads the queue the variable names, so the handler recognises its records.
    built.apiTemplate.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: ingestId },
      EventSourceArn: variables.DEAD_LETTER_QUEUE_ARN,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    built.apiTemplate.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(5 minutes)',
      Targets: Match.arrayWith([
        Match.objectLike({
          Arn: { 'Fn::GetAtt': [ingestId, 'Arn'] },
          Input: JSON.stringify({ groundwork: 'lease-sweep' }),
        }),
      ]),
    });
  });

  it.each([
    [
      'ingest',
      'unpdf',
      `import('unpdf').then((m) => m.getResolvedPDFJS()).then((m) => console.log(typeof m.getDocument))`,
      'function',
    ],
    [
      'ingest',
      'mammoth',
      `import('mammoth').then((m) => console.log(typeof m.convertToHtml, typeof m.images.imgElement))`,
      'function function',
    ],
    [
      'ingest',
      'node-html-parser',
      `import('node-html-parser').then((m) => console.log(m.parse('<p>a <b>b</b></p>').text, m.NodeType.TEXT_NODE))`,
      'a b 3',
    ],
    [
      'ingest',
      'gpt-tokenizer',
      `console.log(require('gpt-tokenizer/encoding/cl100k_base').countTokens('hello world'))`,
      '2',
    ],
    [
      'rag-answer',
      'gpt-tokenizer',
      `console.log(require('gpt-tokenizer/encoding/cl100k_base').countTokens('hello world'))`,
      '2',
    ],
    [
      'rag-answer-stream',
      'gpt-tokenizer',
      `console.log(require('gpt-tokenizer/encoding/cl100k_base').countTokens('hello world'))`,
      '2',
    ],
  ])(
    '%s loads %s from beside its bundle, not from inside it',
    (service, module, script, expected) => {
      const [, fn] = functionByService(service);
      const dir = assetDir(fn);
      // esbuild leaves a bare specifier only for an external module: it is not in the bundle ...
      expect(readFileSync(path.join(dir, 'index.js'), 'utf8')).toMatch(
        new RegExp(`(require|import)\\("${module}[/"]`),
      );
      // ... and the shipped files are enough to load it from the bundle folder alone.
      // cwd is the bundle folder (under the OS temp dir): nothing resolves from the repository.
      const result = spawnSync(process.execPath, ['-e', script], {
        cwd: dir,
        encoding: 'utf8',
        env: { PATH: process.env.PATH ?? '' },
      });
      expect([result.stderr, result.stdout.trim()]).toEqual(['', expected]);
    },
  );

  it('stores documents privately: versioned, encrypted, TLS only, access-logged', () => {
    built.dataTemplate.hasResourceProperties('AWS::S3::Bucket', {
      VersioningConfiguration: { Status: 'Enabled' },
      BucketEncryption: Match.anyValue(),
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
      LoggingConfiguration: Match.anyValue(),
    });
    built.dataTemplate.hasResourceProperties('AWS::S3::BucketPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Deny',
            Condition: { Bool: { 'aws:SecureTransport': 'false' } },
          }),
        ]),
      },
    });
  });
});

describe('limits table', () => {
  it('matches the limit store: pk/sk strings, on demand, TTL on expires_at, point-in-time recovery', () => {
    const definition = limitsTableDefinition('x');
    built.dataTemplate.hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: definition.KeySchema,
      AttributeDefinitions: definition.AttributeDefinitions,
      BillingMode: 'PAY_PER_REQUEST',
      TimeToLiveSpecification: { AttributeName: LIMITS_TTL_ATTRIBUTE, Enabled: true },
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      GlobalSecondaryIndexes: definition.GlobalSecondaryIndexes,
    });
  });
});

describe('Cognito', () => {
  it('has an immutable tenant attribute the app client cannot write, and the plan groups', () => {
    built.dataTemplate.hasResourceProperties('AWS::Cognito::UserPool', {
      Schema: Match.arrayWith([
        Match.objectLike({ Name: 'tenant_id', Mutable: false, AttributeDataType: 'String' }),
      ]),
      AdminCreateUserConfig: { AllowAdminCreateUserOnly: true },
    });
    const client =
      Object.values(resourcesOfType(built.dataTemplate, 'AWS::Cognito::UserPoolClient'))[0]
        ?.Properties ?? {};
    expect(client.ReadAttributes).toContain('custom:tenant_id');
    expect(client.WriteAttributes).not.toContain('custom:tenant_id');
    const groups = Object.values(
      resourcesOfType(built.dataTemplate, 'AWS::Cognito::UserPoolGroup'),
    ).map((g) => g.Properties?.GroupName);
    expect(groups.sort()).toEqual(['admin', 'basic', 'free', 'growth', 'pro']);
  });
});

describe('functions', () => {
  it('run on ARM64 Node.js 22 with JSON logs, tracing and the Powertools environment', () => {
    const functions = Object.values(groundworkFunctions());
    expect(functions).toHaveLength(8);
    for (const fn of functions) {
      expect(fn.Properties).toEqual(
        expect.objectContaining({
          Architectures: ['arm64'],
          Runtime: 'nodejs22.x',
          TracingConfig: { Mode: 'Active' },
          LoggingConfig: expect.objectContaining({ LogFormat: 'JSON' }),
        }),
      );
      const vars = (fn.Properties?.Environment as { Variables: Record<string, unknown> }).Variables;
      expect(vars).toEqual(
        expect.objectContaining({
          POWERTOOLS_LOG_LEVEL: 'INFO',
          POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
        }),
      );
    }
  });

  it('carry the AWS SDK pinned in package-lock.json inside the bundle (awsSdk: bundled)', () => {
    for (const fn of Object.values(groundworkFunctions())) {
      const bundle = readFileSync(path.join(assetDir(fn), 'index.js'), 'utf8');
      // Not preceded by "[": the SDK's error messages quote `[require("@aws-sdk/...")]`.
      const loads = bundle.match(/(?<!\[)(require|import)\("@(aws-sdk|smithy)\/[^"]*"\)/g);
      expect(loads).toBeNull();
    }
  });

  it("take credentials from the environment only, without the SDK's SSO and profile providers", () => {
    for (const fn of Object.values(groundworkFunctions())) {
      const bundle = readFileSync(path.join(assetDir(fn), 'index.js'), 'utf8');
      expect(bundle).toContain('No AWS credentials in the environment');
      expect(bundle).not.toContain('sso_start_url');
    }
  });

  it('grant Bedrock, S3, DynamoDB and Secrets Manager on specific ARNs only', () => {
    const scoped = /^(bedrock|s3|dynamodb|secretsmanager):/;
    const statements = allStatements().filter(
      (s) => s.Effect === 'Allow' && actionsOf(s).some((a) => scoped.test(a)),
    );
    expect(statements.length).toBeGreaterThan(0);
    for (const statement of statements) {
      for (const resource of resourcesOf(statement)) {
        expect([actionsOf(statement), resource]).not.toEqual([actionsOf(statement), '*']);
      }
      for (const action of actionsOf(statement).filter((a) => scoped.test(a)))
        expect(action).not.toMatch(/\*/);
    }
    const bedrock = statements.filter((s) => actionsOf(s).some((a) => a.startsWith('bedrock:')));
    for (const statement of bedrock) {
      expect(JSON.stringify(statement.Resource)).toMatch(
        /foundation-model\/(amazon\.titan-embed-text-v2:0|amazon\.nova-lite-v1:0)/,
      );
    }
  });

  it('let the documents function write under tenants/ of the documents bucket only', () => {
    const writes = allStatements().filter((s) =>
      actionsOf(s).some((a) => ['s3:PutObject', 's3:DeleteObject'].includes(a)),
    );
    expect(writes).toHaveLength(1);
    expect(actionsOf(writes[0]!).sort()).toEqual([
      's3:DeleteObject',
      's3:GetObject',
      's3:PutObject',
    ]);
    expect(JSON.stringify(writes[0]!.Resource)).toMatch(
      /"Documents[0-9A-F]{8}","Arn".*\/tenants\/\*/,
    );
  });

  it('let only the admin function query the limits table, on the tenant-usage index only', () => {
    const queries = allStatements().filter((s) => actionsOf(s).includes('dynamodb:Query'));
    expect(queries).toHaveLength(1);
    expect(JSON.stringify(queries[0]!.Resource)).toContain('/index/tenant-usage');
  });

  it('grant response streaming from Bedrock on the generation model only', () => {
    const streaming = allStatements().filter((s) =>
      actionsOf(s).includes('bedrock:InvokeModelWithResponseStream'),
    );
    expect(streaming).toHaveLength(2);
    for (const statement of streaming)
      expect(JSON.stringify(statement.Resource)).toContain('amazon.nova-lite-v1:0');
  });
});

describe('observability', () => {
  it('raises the alarms, each notifying the alarm topic', () => {
    const alarms = resourcesOfType(built.apiTemplate, 'AWS::CloudWatch::Alarm');
    const names = Object.keys(alarms).map((id) =>
      id.replace(/^Monitoring/, '').replace(/[0-9A-F]{8}$/, ''),
    );
    expect(names.sort()).toEqual(
      [
        'AnswerLatencyP95',
        'ApiServerErrors',
        'CostCapReached',
        'DailySpendNearCap',
        'DeadLetters',
        'IngestionFailureRate',
        // One per function that checks limits.
        'LimiterStoreErrorsadmin',
        'LimiterStoreErrorsadmin2',
        'LimiterStoreErrorsdocuments',
        'LimiterStoreErrorsraganswer',
        'LimiterStoreErrorsraganswerstream',
        'LimiterStoreErrorsragsearch',
        'LimiterStoreErrorsusage',
        'SearchLatencyP95',
        'StreamServerErrors',
        // Crashes and throttles, one of each per function.
        ...['ingest', 'search', 'answer', 'answerStream', 'usage', 'documents', 'admin'].flatMap(
          (f) => [`FunctionErrors${f}`, `FunctionThrottles${f}`],
        ),
        'IngestQueueAge',
        'RestApiServerErrors',
        'AuroraAtMaxCapacity',
        'ProxyLoginFailures',
        'ProxyBorrowLatency',
        // One per Bedrock model.
        'BedrockThrottlesamazontitanembedtextv20',
        'BedrockThrottlesamazonnovalitev10',
      ].sort(),
    );
    const [topicId] = Object.keys(resourcesOfType(built.apiTemplate, 'AWS::SNS::Topic'));
    for (const alarm of Object.values(alarms))
      expect(alarm.Properties?.AlarmActions).toEqual([{ Ref: topicId }]);
  });

  it('alarms on the ingest queue age, Aurora at its maximum, RDS Proxy and Bedrock throttling with the AWS metrics', () => {
    /** An alarm's threshold and its one metric, written inline or as a MetricStat. */
    const alarm = (id: string) => {
      const p = Object.entries(resourcesOfType(built.apiTemplate, 'AWS::CloudWatch::Alarm')).find(
        ([k]) => k.startsWith(`Monitoring${id}`),
      )?.[1]?.Properties as Record<string, unknown>;
      const stat = (p.Metrics as { MetricStat: Record<string, Record<string, unknown>> }[])?.[0]
        ?.MetricStat;
      return {
        threshold: p.Threshold,
        periods: p.EvaluationPeriods,
        namespace: stat?.Metric?.Namespace ?? p.Namespace,
        name: stat?.Metric?.MetricName ?? p.MetricName,
        statistic: stat?.Stat ?? p.Statistic,
        dimensions: JSON.stringify(stat?.Metric?.Dimensions ?? p.Dimensions),
      };
    };
    expect(alarm('IngestQueueAge')).toMatchObject({
      namespace: 'AWS/SQS',
      name: 'ApproximateAgeOfOldestMessage',
      threshold: 3600,
    });
    expect(alarm('AuroraAtMaxCapacity')).toMatchObject({
      namespace: 'AWS/RDS',
      name: 'ServerlessDatabaseCapacity',
      statistic: 'Minimum',
      threshold: 4,
      periods: 3,
    });
    expect(alarm('ProxyLoginFailures')).toMatchObject({
      namespace: 'AWS/RDS',
      name: 'ClientConnectionsSetupFailedAuth',
      dimensions: expect.stringContaining('ProxyName'),
    });
    expect(alarm('BedrockThrottlesamazonnovalitev10')).toMatchObject({
      namespace: 'AWS/Bedrock',
      name: 'InvocationThrottles',
      dimensions: JSON.stringify([{ Name: 'ModelId', Value: 'amazon.nova-lite-v1:0' }]),
    });
    expect(alarm('FunctionThrottlesingest')).toMatchObject({
      namespace: 'AWS/Lambda',
      name: 'Throttles',
      threshold: 1,
    });
  });

  it('draws only custom metrics the handlers emit', () => {
    const dashboard = Object.values(
      resourcesOfType(built.apiTemplate, 'AWS::CloudWatch::Dashboard'),
    )[0];
    const body = JSON.stringify(dashboard?.Properties?.DashboardBody);
    const used = [
      ...body.matchAll(new RegExp(`\\\\"${METRICS_NAMESPACE}\\\\",\\\\"([A-Za-z0-9_]+)\\\\"`, 'g')),
    ].map((m) => m[1]);
    expect(used.length).toBeGreaterThan(20);
    expect(
      used.filter((name) => !(DASHBOARD_METRICS as readonly string[]).includes(name as string)),
    ).toEqual([]);
  });
});

describe('cdk-nag', () => {
  /** Every acknowledged rule in the app, with its reason. */
  function acknowledgements(root: IConstruct): { path: string; id: string; reason: unknown }[] {
    const found: { path: string; id: string; reason: unknown }[] = [];
    const visit = (node: IConstruct) => {
      for (const entry of node.node.metadata) {
        if (entry.type !== Validations.ACKNOWLEDGED_RULES_METADATA_KEY) continue;
        for (const [id, value] of Object.entries(entry.data as Record<string, unknown>)) {
          const reason =
            typeof value === 'string' ? value : (value as { reason?: unknown })?.reason;
          found.push({ path: node.node.path, id, reason });
        }
      }
      node.node.children.forEach(visit);
    };
    visit(root);
    return found;
  }

  it('reports no unacknowledged AwsSolutions finding, error or warning', () => {
    expect(nagFindings(built.app)).toEqual([]);
  });

  it('gives a written reason for every acknowledged finding', () => {
    // aws-cdk-lib records a few acknowledgements of its own (CloudFormation-Validate::...).
    const acks = acknowledgements(built.app).filter((a) => a.id.includes('AwsSolutions-'));
    expect(acks.length).toBeGreaterThan(10);
    for (const ack of acks) {
      expect([ack.path, ack.id, typeof ack.reason]).toEqual([ack.path, ack.id, 'string']);
      expect([ack.path, ack.id, String(ack.reason).trim().length >= 20]).toEqual([
        ack.path,
        ack.id,
        true,
      ]);
    }
  });

  it('does fail on a finding (the check is live)', () => {
    const app = new App();
    new s3.Bucket(new Stack(app, 'Careless'), 'Bucket');
    const report = new AwsSolutionsChecks().validateScope(app);
    expect(report.violations.map((v) => v.ruleName)).toEqual(
      expect.arrayContaining(['AwsSolutions-S1', 'AwsSolutions-S10']),
    );
  });
});

describe('snapshot', () => {
  /**
   * Resource types that hold data: a change of logical id or type replaces the resource, and the
   * data with it (or orphans a retained one). Everything else is covered by targeted assertions.
   */
  const STATEFUL_TYPES = [
    'AWS::RDS::DBCluster',
    'AWS::RDS::DBInstance',
    'AWS::S3::Bucket',
    'AWS::DynamoDB::Table',
    'AWS::Cognito::UserPool',
    'AWS::SQS::Queue',
    'AWS::SecretsManager::Secret',
    'AWS::Logs::LogGroup',
  ];

  function statefulResources(template: { toJSON(): Record<string, unknown> }): string[] {
    const resources = (template.toJSON().Resources ?? {}) as Record<string, Resource>;
    return Object.entries(resources)
      .filter(([, r]) => STATEFUL_TYPES.includes(r.Type ?? ''))
      .map(([id, r]) => `${id} ${r.Type}`)
      .sort();
  }

  it('keeps the logical ids and types of the stateful resources', () => {
    expect({
      data: statefulResources(built.dataTemplate),
      api: statefulResources(built.apiTemplate),
    }).toMatchSnapshot();
  });
});
