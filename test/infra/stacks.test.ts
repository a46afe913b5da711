/**
 * The two stacks as synthesized from cdk.json's defaults, with the real bundling: the resources
 * that matter (Aurora, network, API auth, queues, IAM scope, alarms), cdk-nag, and a snapshot of
 * the stateful resources' logical ids and types.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { App, Stack, Validations } from 'aws-cdk-lib';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import * as rds from 'aws-cdk-lib/aws-rds';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import {
  LIMITS_TTL_ATTRIBUTE,
  limitsTableDefinition,
} from '../../lambdas/adapters/dynamodb/limit-store';
import { migrationsHash, routinesHash } from '../../lib/constructs/database-migration';
import { ANSWER_ROUTES, DASHBOARD_METRICS, metricsNamespace } from '../../lib/metrics';
import { API_ROUTES, routeKey } from '../../lambdas/http/api-routes';
import {
  dataResourceOf,
  nagFindings,
  resourcesOfType,
  restRoutes,
  synthGroundwork,
  type SynthesizedApp,
} from './support';

type Resource = { Type?: string; Properties?: Record<string, unknown>; [k: string]: unknown };
type Statement = { Effect: string; Action: string | string[]; Resource: unknown };

let built: SynthesizedApp;
/** The custom metrics namespace of the synthesized stage. */
let namespace: string;
beforeAll(() => {
  built = synthGroundwork();
  namespace = metricsNamespace(built.config.stage);
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

  const routes = () =>
    restRoutes(built.apiTemplate).filter((r) => r.key.split(' ')[0] !== 'OPTIONS');
  /** The logical id of the function a route's integration invokes. */
  const target = (key: string): string => {
    const route = routes().find((r) => r.key === key);
    const uri = JSON.stringify((route?.properties.Integration as { Uri?: unknown })?.Uri);
    return Object.keys(groundworkFunctions()).find((id) => uri.includes(`"${id}"`)) ?? '';
  };

  it('serves every route of the table on one REST API, and no HTTP API', () => {
    const v2 = Object.values(
      built.apiTemplate.toJSON().Resources as Record<string, { Type: string }>,
    )
      .map((r) => r.Type)
      .filter((type) => type.startsWith('AWS::ApiGatewayV2::'));
    expect(v2).toEqual([]);
    built.apiTemplate.resourceCountIs('AWS::ApiGateway::RestApi', 1);
    built.apiTemplate.resourceCountIs('AWS::ApiGateway::Stage', 1);
    expect(
      routes()
        .map((r) => r.key)
        .sort(),
    ).toEqual(API_ROUTES.map(routeKey).sort());
  });

  it("integrates seed 004's routes with the functions that hold their use cases", () => {
    expect(target('GET /api/search')).toBe(functionByService('rag-answer')[0]);
    expect(target('POST /api/upload')).toBe(functionByService('documents')[0]);
  });

  it('passes the multipart upload to its function intact (a binary media type)', () => {
    built.apiTemplate.hasResourceProperties('AWS::ApiGateway::RestApi', {
      BinaryMediaTypes: ['multipart/form-data'],
    });
  });

  it('serves POST /api/lexybrain/rag from the rag-answer function, and the streamed routes from the streaming function', () => {
    expect(target('POST /api/lexybrain/rag')).toBe(functionByService('rag-answer')[0]);
    expect(target('POST /api/rag/search')).toBe(functionByService('rag-search')[0]);
    for (const route of API_ROUTES.filter((r) => r.streams))
      expect(target(routeKey(route))).toBe(functionByService('rag-answer-stream')[0]);
    built.apiTemplate.hasResourceProperties('AWS::Lambda::Function', {
      Environment: {
        Variables: Match.objectLike({
          POWERTOOLS_SERVICE_NAME: 'rag-answer',
          LEXYBRAIN_RAG_ENABLED: 'true',
        }),
      },
    });
  });

  it('requires the Cognito authorizer on every route but the public ones', () => {
    const [authorizerId] = Object.keys(
      resourcesOfType(built.apiTemplate, 'AWS::ApiGateway::Authorizer'),
    );
    expect(
      routes()
        .filter((r) => r.properties.AuthorizationType === 'NONE')
        .map((r) => r.key),
    ).toEqual(API_ROUTES.filter((r) => !r.auth).map(routeKey));
    for (const route of API_ROUTES.filter((r) => r.auth)) {
      const method = routes().find((r) => r.key === routeKey(route));
      expect([route.path, method?.properties.AuthorizationType]).toEqual([
        route.path,
        'COGNITO_USER_POOLS',
      ]);
      expect(method?.properties.AuthorizerId).toEqual({ Ref: authorizerId });
    }
    expect(PROTECTED.sort()).toEqual(
      API_ROUTES.filter((r) => r.auth)
        .map(routeKey)
        .sort(),
    );
    built.apiTemplate.hasResourceProperties('AWS::ApiGateway::Authorizer', {
      Type: 'COGNITO_USER_POOLS',
      IdentitySource: 'method.request.header.Authorization',
    });
  });

  it("gives every API function the app client to check the token's client against, and the CORS origins", () => {
    for (const service of [
      'rag-search',
      'rag-answer',
      'rag-answer-stream',
      'usage',
      'documents',
      'admin',
    ]) {
      const variables = functionByService(service)[1].Properties?.Environment as {
        Variables: Record<string, unknown>;
      };
      expect([service, JSON.stringify(variables.Variables.TOKEN_AUDIENCES)]).toEqual([
        service,
        expect.stringMatching(/UsersUserPoolApiClient/),
      ]);
      expect(variables.Variables.CORS_ORIGINS).toBe('[]');
    }
  });

  it('throttles the stage, traces it and writes JSON access logs', () => {
    built.apiTemplate.hasResourceProperties('AWS::ApiGateway::Stage', {
      TracingEnabled: true,
      AccessLogSetting: Match.objectLike({
        DestinationArn: Match.anyValue(),
        Format: Match.stringLikeRegexp('"requestId":"\\$context.requestId"'),
      }),
      MethodSettings: Match.arrayWith([
        Match.objectLike({ ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 }),
      ]),
    });
    // Why API Gateway refused a request: the authorizer's error, the WAF's code, and who asked.
    const [stage] = Object.values(resourcesOfType(built.apiTemplate, 'AWS::ApiGateway::Stage'));
    const setting = stage?.Properties?.AccessLogSetting as { Format: string };
    expect(JSON.parse(setting.Format)).toMatchObject({
      authorizerError: '$context.authorizer.error',
      wafResponseCode: '$context.wafResponseCode',
      userId: '$context.authorizer.claims.sub',
    });
  });

  it("ends an LLM call of the answer function's buffered routes well before API Gateway stops waiting for them", () => {
    // Within the deadline, a model too slow leaves time for the handler's own fallback (the
    // retrieved sources, the spend settled) to reach the client instead of a 504.
    const [answerId, answer] = functionByService('rag-answer');
    const variables = (answer.Properties?.Environment as { Variables: Record<string, unknown> })
      .Variables;
    const deadlineMs = Number(variables.GENERATION_TIMEOUT_MS);
    const functionMs = (answer.Properties?.Timeout as number) * 1000;
    const buffered = routes().filter((r) => target(r.key) === answerId);
    expect(buffered.map((r) => r.key)).toEqual(
      expect.arrayContaining(['POST /api/lexybrain/rag', 'GET /api/search']),
    );
    for (const route of buffered) {
      const integration = route.properties.Integration as {
        TimeoutInMillis?: number;
        ResponseTransferMode?: string;
      };
      expect([route.key, integration.ResponseTransferMode]).toEqual([route.key, undefined]);
      // Unset, a REST API integration waits 29 seconds.
      const gatewayMs = integration.TimeoutInMillis ?? 29_000;
      expect([route.key, deadlineMs <= gatewayMs - 5_000]).toEqual([route.key, true]);
      // The function is not stopped before the gateway stops waiting.
      expect([route.key, functionMs >= gatewayMs]).toEqual([route.key, true]);
    }
    // The handler reads it (a variable's name survives minification in its schema).
    expect(readFileSync(path.join(assetDir(answer), 'index.js'), 'utf8')).toContain(
      'GENERATION_TIMEOUT_MS',
    );
  });

  it('sets no integration option that has no effect (a synth warning)', () => {
    expect(
      Annotations.fromStack(built.api).findWarning('*', Match.stringLikeRegexp('allowTestInvoke')),
    ).toEqual([]);
  });

  it('streams the streamed routes of the table through Lambda integrations that stream', () => {
    built.apiTemplate.resourceCountIs('AWS::Lambda::Url', 0);
    const streamed = routes().filter(
      (r) =>
        (r.properties.Integration as { ResponseTransferMode?: string }).ResponseTransferMode ===
        'STREAM',
    );
    expect(streamed.map((r) => r.key).sort()).toEqual(
      API_ROUTES.filter((r) => r.streams)
        .map(routeKey)
        .sort(),
    );
    for (const route of streamed) {
      expect(route.properties.Integration).toMatchObject({
        Type: 'AWS_PROXY',
        TimeoutInMillis: 120000,
        // InvokeWithResponseStream, not Invoke.
        Uri: {
          'Fn::Join': [
            '',
            expect.arrayContaining([expect.stringMatching(/response-streaming-invocations/)]),
          ],
        },
      });
    }
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

  it('hides a received message at least as long as its consumer may run, on every queue a function consumes', () => {
    // Lambda refuses to create an event source whose queue's visibility timeout is shorter than
    // the function's timeout, and the stack's deployment fails with it.
    const queues = resourcesOfType(built.dataTemplate, 'AWS::SQS::Queue');
    const functions = resourcesOfType(built.apiTemplate, 'AWS::Lambda::Function');
    const mappings = Object.values(
      resourcesOfType(built.apiTemplate, 'AWS::Lambda::EventSourceMapping'),
    );
    expect(mappings).toHaveLength(2);
    for (const mapping of mappings) {
      const queueId = dataResourceOf(built, mapping.Properties?.EventSourceArn) ?? '';
      const functionId = (mapping.Properties?.FunctionName as { Ref?: string }).Ref ?? '';
      expect([queueId, queues[queueId]?.Type]).toEqual([queueId, 'AWS::SQS::Queue']);
      expect([functionId, functions[functionId]?.Type]).toEqual([
        functionId,
        'AWS::Lambda::Function',
      ]);
      // Unset, SQS hides a message 30 seconds and Lambda runs a function 3.
      const visibility = (queues[queueId]?.Properties?.VisibilityTimeout as number) ?? 30;
      const timeout = (functions[functionId]?.Properties?.Timeout as number) ?? 3;
      expect([queueId, visibility >= timeout]).toEqual([queueId, true]);
    }
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

  it('does not repeat a failed lease sweep: neither the rule nor Lambda retries it, and an event not run before the next sweep is dropped', () => {
    const [ingestId] = functionByService('ingest');
    built.apiTemplate.hasResourceProperties('AWS::Events::Rule', {
      Targets: [
        Match.objectLike({
          Arn: { 'Fn::GetAtt': [ingestId, 'Arn'] },
          RetryPolicy: { MaximumRetryAttempts: 0 },
        }),
      ],
    });
    // EventBridge invokes asynchronously: Lambda's own retries (2 by default) are set apart. The
    // setting covers asynchronous invocations only; the queues' event sources poll synchronously.
    const configs = Object.values(
      resourcesOfType(built.apiTemplate, 'AWS::Lambda::EventInvokeConfig'),
    ).map((c) => c.Properties);
    expect(configs).toEqual([
      {
        FunctionName: { Ref: ingestId },
        Qualifier: '$LATEST',
        MaximumRetryAttempts: 0,
        MaximumEventAgeInSeconds: 300,
      },
    ]);
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
          POWERTOOLS_METRICS_NAMESPACE: namespace,
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

  it('let the documents function list the bucket, so that a missing object reads as 404, not 403', () => {
    // The retry route re-announces an object with HeadObject, which S3 answers with 404 for a
    // missing key only to a caller that may list the bucket; without it, 403 (not object_missing).
    const [, documents] = functionByService('documents');
    const roleId = (documents.Properties?.Role as { 'Fn::GetAtt': [string, string] })[
      'Fn::GetAtt'
    ][0];
    const role = resourcesOfType(built.apiTemplate, 'AWS::IAM::Role')[roleId];
    const attached = (role?.Properties?.ManagedPolicyArns as unknown[]).map((arn) =>
      dataResourceOf(built, arn),
    );
    const policies = resourcesOfType(built.dataTemplate, 'AWS::IAM::ManagedPolicy');
    const statements = attached.flatMap(
      (id) =>
        (policies[id ?? '']?.Properties?.PolicyDocument as { Statement: Statement[] } | undefined)
          ?.Statement ?? [],
    );
    const lists = statements.filter((s) => actionsOf(s).includes('s3:ListBucket'));
    expect(lists).toEqual([
      {
        Action: 's3:ListBucket',
        Effect: 'Allow',
        Resource: { 'Fn::GetAtt': [expect.stringMatching(/^Documents[0-9A-F]{8}$/), 'Arn'] },
      },
    ]);
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
        'DeadLettersStuck',
        'IngestionFailureRate',
        'LlmFailures',
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

  type MetricStat = {
    Metric: {
      Namespace: string;
      MetricName: string;
      Dimensions?: { Name: string; Value: unknown }[];
    };
    Stat: string;
    Period: number;
  };
  /** An alarm's properties, by its id (`Monitoring<id><hash>`). */
  const alarmProperties = (id: string) =>
    Object.entries(resourcesOfType(built.apiTemplate, 'AWS::CloudWatch::Alarm')).find(([k]) =>
      new RegExp(`^Monitoring${id}[0-9A-F]{8}$`).test(k),
    )?.[1]?.Properties as Record<string, unknown>;
  /** The metrics an alarm's math reads (none for an alarm on one metric written inline). */
  const metricStats = (p: Record<string, unknown>) =>
    ((p.Metrics ?? []) as { MetricStat?: MetricStat }[]).flatMap((m) =>
      m.MetricStat ? [m.MetricStat] : [],
    );
  /** An alarm's threshold and its one metric, written inline or as a MetricStat. */
  const alarm = (id: string) => {
    const p = alarmProperties(id);
    const stat = metricStats(p)[0];
    return {
      threshold: p.Threshold,
      periods: p.EvaluationPeriods,
      comparison: p.ComparisonOperator,
      namespace: stat?.Metric?.Namespace ?? p.Namespace,
      name: stat?.Metric?.MetricName ?? p.MetricName,
      statistic: stat?.Stat ?? p.Statistic,
      dimensions: JSON.stringify(stat?.Metric?.Dimensions ?? p.Dimensions),
    };
  };

  it('alarms on the ingest queue age, Aurora at its maximum, RDS Proxy and Bedrock throttling with the AWS metrics', () => {
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

  it('does not page on the one refused login per warm function that each secret rotation causes', () => {
    // Every 5-minute period of 15 minutes must have refused logins, not one period.
    const p = alarmProperties('ProxyLoginFailures');
    expect(p.EvaluationPeriods).toBeGreaterThan(1);
    expect(p.DatapointsToAlarm ?? p.EvaluationPeriods).toBe(p.EvaluationPeriods);
    expect(alarm('ProxyLoginFailures')).toMatchObject({ periods: 3, threshold: 1 });
  });

  it('alarms on LLM failures summed over every answer route, by the name and dimensions the answers emit', () => {
    const p = alarmProperties('LlmFailures');
    const stats = metricStats(p);
    const dimension = (stat: MetricStat, name: string) =>
      String(stat.Metric.Dimensions?.find((d) => d.Name === name)?.Value);
    expect(stats.map((s) => `${s.Metric.Namespace} ${s.Metric.MetricName} ${s.Stat}`)).toEqual(
      ANSWER_ROUTES.map(() => `${namespace} LlmFailures Sum`),
    );
    expect(stats.map((s) => `${dimension(s, 'service')} ${dimension(s, 'route')}`).sort()).toEqual(
      ANSWER_ROUTES.map((r) => `${r.service} ${r.route}`).sort(),
    );
    expect(ANSWER_ROUTES.map((r) => r.route)).toEqual(
      expect.arrayContaining(['answer', 'answer-stream', 'lexybrain-rag', 'api-search']),
    );
    expect(p).toMatchObject({
      Threshold: 5,
      EvaluationPeriods: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
  });

  it('alarms on each document ingestion gave up on, which the dead-letter consumer counts as it marks it failed', () => {
    // The ingest function consumes the dead-letter queue within seconds, so the queue's depth
    // is not the signal: the count the consumer emits is.
    expect(alarm('DeadLetters')).toMatchObject({
      namespace,
      name: 'DocumentsDeadLettered',
      dimensions: JSON.stringify([{ Name: 'service', Value: 'ingest' }]),
      threshold: 1,
      comparison: 'GreaterThanOrEqualToThreshold',
    });
    expect(alarmProperties('DeadLetters').AlarmDescription).toMatch(
      /POST \/api\/documents\/\{id\}\/retry/,
    );
    expect(JSON.stringify(alarmProperties('DeadLetters'))).not.toMatch(/redrive|message-move/);
    // A dead letter the consumer cannot process stays in the queue, waiting or held: 15 minutes.
    const stuck = alarmProperties('DeadLettersStuck');
    const stats = metricStats(stuck);
    expect(stats.map((s) => `${s.Metric.Namespace} ${s.Metric.MetricName} ${s.Period}`)).toEqual([
      'AWS/SQS ApproximateNumberOfMessagesVisible 60',
      'AWS/SQS ApproximateNumberOfMessagesNotVisible 60',
    ]);
    const queues = resourcesOfType(built.dataTemplate, 'AWS::SQS::Queue');
    for (const stat of stats) {
      const queue = dataResourceOf(built, stat.Metric.Dimensions?.[0]?.Value) ?? '';
      expect(queues[queue]).toBeDefined();
      expect(queues[queue]?.Properties?.RedrivePolicy).toBeUndefined();
    }
    expect(stuck).toMatchObject({ Threshold: 1, EvaluationPeriods: 15 });
  });

  it('draws only custom metrics the handlers emit', () => {
    const dashboard = Object.values(
      resourcesOfType(built.apiTemplate, 'AWS::CloudWatch::Dashboard'),
    )[0];
    const body = JSON.stringify(dashboard?.Properties?.DashboardBody);
    const used = [
      ...body.matchAll(new RegExp(`\\\\"${namespace}\\\\",\\\\"([A-Za-z0-9_]+)\\\\"`, 'g')),
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
