/**
 * ApiStack: everything stateless, redeployed with each code change: the functions, the schema
 * migration, the REST API in front of every route, the dashboard and the alarms. It uses the
 * resources of DataStack through the grant helpers in lib/grants.ts.
 */
import { CfnOutput, Duration, Stack, type StackProps } from 'aws-cdk-lib';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { LAMBDA_ENTRIES, SIDE_LOADED_BY } from './bundling';
import type { GroundworkConfig } from './config';
import { DatabaseMigration } from './constructs/database-migration';
import { INGEST_FUNCTION_TIMEOUT } from './constructs/document-source';
import {
  GroundworkFunction,
  type FunctionNetwork,
  type GroundworkFunctionProps,
} from './constructs/groundwork-function';
import { GroundworkMonitoring } from './constructs/groundwork-monitoring';
import { IngestRecovery } from './constructs/ingest-recovery';
import { BUFFERED_INTEGRATION_TIMEOUT, GroundworkRestApi } from './constructs/groundwork-rest-api';
import type { DataStack } from './data-stack';
import { API_ROUTES, type ApiFunction } from '../lambdas/http/api-routes';
import {
  grantModels,
  grantDatabase,
  grantDocumentsRead,
  grantDocumentsWrite,
  grantLimitsTable,
} from './grants';
import { metricsNamespace, SERVICES } from './metrics';
import { bedrockModelIds } from './models';

/**
 * The deadline of one LLM call on the answer function's routes, which are buffered: well inside
 * BUFFERED_INTEGRATION_TIMEOUT (29 s), so that when the model is too slow the handler's own
 * fallback (an answer of the retrieved sources, recorded like any other) reaches the client
 * before API Gateway gives up; about 9 seconds are left for retrieval and the rest of the request
 * (docs/decisions/0156-llm-deadline-inside-the-gateway-timeout.md).
 */
const BUFFERED_GENERATION_TIMEOUT = Duration.seconds(20);

/**
 * The streamed routes' integration timeout, and the streaming function's: room for the Bedrock
 * adapter's own 60-second deadline and the retrieval before it.
 */
const STREAM_TIMEOUT = Duration.minutes(2);

export interface ApiStackProps extends StackProps {
  readonly config: GroundworkConfig;
  /** The stateful resources. */
  readonly data: DataStack;
}

export class ApiStack extends Stack {
  readonly functions: Readonly<
    Record<
      'ingest' | 'search' | 'answer' | 'answerStream' | 'usage' | 'documents' | 'admin',
      GroundworkFunction
    >
  >;
  readonly api: GroundworkRestApi;
  readonly migration: DatabaseMigration;
  readonly monitoring: GroundworkMonitoring;

  constructor(scope: Construct, id: string, props: ApiStackProps) {
    super(scope, id, props);
    const { config, data } = props;
    // The stage's custom metrics: what its functions publish to and its dashboard and alarms read.
    const namespace = metricsNamespace(config.stage);
    const logRetention = config.logRetentionDays as logs.RetentionDays;
    const network: FunctionNetwork = {
      vpc: data.network.vpc,
      securityGroups: [data.network.functionSecurityGroup],
    };
    // Only the overrides the configuration sets: the functions resolve the rest from the
    // embedding model's calibration (lambdas/core/answer/calibrations.ts).
    const confidence = Object.fromEntries(
      Object.entries({
        RAG_CONFIDENCE_HIGH_THRESHOLD: config.confidenceHigh,
        RAG_CONFIDENCE_MEDIUM_THRESHOLD: config.confidenceMedium,
        CONFIDENCE_COSINE_WEIGHT: config.confidenceCosineWeight,
        CONFIDENCE_EVIDENCE_FLOOR: config.confidenceEvidenceFloor,
      }).flatMap(([name, value]) => (value === undefined ? [] : [[name, String(value)]])),
    );
    const fn = (
      fnId: string,
      fnProps: Omit<GroundworkFunctionProps, 'network' | 'logRetention' | 'metricsNamespace'>,
    ) =>
      new GroundworkFunction(this, fnId, {
        network,
        logRetention,
        metricsNamespace: namespace,
        awsSdk: config.awsSdk,
        ...fnProps,
      });

    this.migration = new DatabaseMigration(this, 'Migration', {
      network,
      metricsNamespace: namespace,
      database: data.database,
      models: config,
      filterIndexes: config.filterIndexes,
      exactScanIndex: config.exactScanIndex,
      logRetention,
      awsSdk: config.awsSdk,
    });

    const ingest = fn('Ingest', {
      entry: LAMBDA_ENTRIES.ingest,
      serviceName: SERVICES.ingest,
      // The event source's maximum concurrency caps the database connections (2 per instance);
      // reserving concurrency too is optional (a new account's quota of 10 cannot afford it).
      sizing: {
        memorySize: 1024,
        timeout: INGEST_FUNCTION_TIMEOUT,
        ...(config.ingestReservedConcurrency !== undefined
          ? { reservedConcurrency: config.ingestReservedConcurrency }
          : {}),
      },
      assets: { sideLoadedModules: SIDE_LOADED_BY.ingest ?? [] },
    });
    grantDatabase(ingest, data.database);
    grantModels(ingest, config);
    grantDocumentsRead(ingest, data.documents.bucket);
    ingest.function.addEventSource(
      new SqsEventSource(data.documents.queue, {
        batchSize: 10,
        maxBatchingWindow: Duration.seconds(5),
        reportBatchItemFailures: true,
        // Lambda invokes no more instances than this for the queue, so batches are not throttled
        // (a throttled batch counts as a receive and pushes healthy messages toward the DLQ).
        maxConcurrency: config.ingestConcurrency,
      }),
    );
    new IngestRecovery(this, 'IngestRecovery', {
      ingestFunction: ingest.function,
      deadLetterQueue: data.documents.deadLetterQueue,
      sweepInterval: Duration.minutes(config.leaseSweepMinutes),
    });

    const search = fn('Search', {
      entry: LAMBDA_ENTRIES.search,
      serviceName: SERVICES.search,
      sizing: { memorySize: 1024 },
    });
    grantDatabase(search, data.database, { reads: true });
    grantModels(search, config, { rerank: true });
    grantLimitsTable(search, data.limitsTable);
    search.addEnvironment('LIMITS_CONFIG', config.limitsJson);

    const answer = fn('Answer', {
      entry: LAMBDA_ENTRIES.answer,
      serviceName: SERVICES.answer,
      // A second past API Gateway's wait, so that Lambda never stops a request the gateway still
      // waits for. Longer answers belong on the stream.
      sizing: { memorySize: 1024, timeout: BUFFERED_INTEGRATION_TIMEOUT.plus(Duration.seconds(1)) },
      environment: {
        ...confidence,
        GENERATION_TIMEOUT_MS: String(BUFFERED_GENERATION_TIMEOUT.toMilliseconds()),
      },
      assets: { sideLoadedModules: SIDE_LOADED_BY.answer ?? [] },
    });
    grantDatabase(answer, data.database, { reads: true });
    grantModels(answer, config, { rerank: true, generate: true });
    grantLimitsTable(answer, data.limitsTable);
    answer.addEnvironment('LIMITS_CONFIG', config.limitsJson);
    answer.addEnvironment('LEXYBRAIN_RAG_ENABLED', String(config.lexybrainRagEnabled));

    const answerStream = fn('AnswerStream', {
      entry: LAMBDA_ENTRIES.answerStream,
      serviceName: SERVICES.answerStream,
      sizing: { memorySize: 1024, timeout: STREAM_TIMEOUT },
      assets: { sideLoadedModules: SIDE_LOADED_BY.answerStream ?? [] },
      environment: confidence,
    });
    grantDatabase(answerStream, data.database, { reads: true });
    grantModels(answerStream, config, { rerank: true, generate: true });
    grantLimitsTable(answerStream, data.limitsTable);
    answerStream.addEnvironment('LIMITS_CONFIG', config.limitsJson);

    const usage = fn('Usage', {
      entry: LAMBDA_ENTRIES.usage,
      serviceName: SERVICES.usage,
      sizing: { memorySize: 256 },
    });
    grantLimitsTable(usage, data.limitsTable);
    usage.addEnvironment('LIMITS_CONFIG', config.limitsJson);

    const documents = fn('Documents', {
      entry: LAMBDA_ENTRIES.documents,
      serviceName: SERVICES.documents,
    });
    grantDatabase(documents, data.database);
    grantLimitsTable(documents, data.limitsTable);
    documents.addEnvironment('LIMITS_CONFIG', config.limitsJson);
    grantDocumentsWrite(documents, data.documents.bucket);

    const admin = fn('Admin', {
      entry: LAMBDA_ENTRIES.admin,
      serviceName: SERVICES.admin,
    });
    grantDatabase(admin, data.database);
    grantLimitsTable(admin, data.limitsTable, { tenantUsage: true });
    admin.addEnvironment('LIMITS_CONFIG', config.limitsJson);

    // New code reaches the database only after the schema it expects (migrations are forward-only).
    for (const dependent of [ingest, search, answer, answerStream, documents, admin])
      dependent.node.addDependency(this.migration.resource);
    // Every function that ingests, lists or retrieves documents reads the same publishing tenants.
    for (const reader of [ingest, search, answer, answerStream, documents])
      reader.addEnvironment('PUBLISHING_TENANTS', config.publishingTenants.join(','));

    this.api = new GroundworkRestApi(this, 'Api', {
      // Per stage: the name is what the AWS/ApiGateway metrics of the stage's alarms filter by.
      name: `groundwork-${config.stage}`,
      userPool: data.users.userPool,
      clients: [data.users.client],
      corsOrigins: config.corsOrigins,
      throttle: { rateLimit: config.apiRateLimit, burstLimit: config.apiBurstLimit },
      logRetention,
      cloudWatchRole: config.apiGatewayCloudWatchRole,
      ...(config.waf ? { firewall: { ratePer5Minutes: config.wafRateLimitPer5Minutes } } : {}),
    });
    // Every route of the API table (lambdas/http/api-routes.ts), on the function it names; a
    // streamed route on the response-streaming function, which also answers it buffered.
    const byFunction: Record<ApiFunction, GroundworkFunction> = {
      'rag-search': search,
      'rag-answer': answer,
      usage,
      documents,
      admin,
    };
    for (const route of API_ROUTES) {
      this.api.addRoute(
        route.method,
        route.path,
        route.streams ? answerStream : byFunction[route.function],
        {
          public: !route.auth,
          ...(route.streams ? { stream: { timeout: STREAM_TIMEOUT } } : {}),
        },
      );
    }

    this.monitoring = new GroundworkMonitoring(this, 'Monitoring', {
      dashboardName: `Groundwork-${config.stage}`,
      api: this.api.api,
      metricsNamespace: namespace,
      queues: { ingest: data.documents.queue, deadLetter: data.documents.deadLetterQueue },
      database: {
        clusterIdentifier: data.database.cluster.clusterIdentifier,
        ...(data.database.proxy ? { proxyName: data.database.proxy.dbProxyName } : {}),
        maxCapacityAcu: config.auroraMaxCapacity,
        readers: config.readReplicas,
      },
      functions: Object.fromEntries(
        Object.entries({ ingest, search, answer, answerStream, usage, documents, admin }).map(
          ([name, f]) => [name, f.function],
        ),
      ),
      bedrockModelIds: [
        ...new Set(Object.values(bedrockModelIds(config)).filter((id) => id !== null)),
      ],
      ...(config.alarmEmail ? { alarmEmail: config.alarmEmail } : {}),
      dailyCostCapUsd: config.limitsConfig.costCaps.globalUsdPerDay,
    });

    this.functions = { ingest, search, answer, answerStream, usage, documents, admin };

    new CfnOutput(this, 'ApiUrl', {
      value: this.api.url,
      description:
        'The REST API base URL (every route; POST /api/rag/answer streams with "stream": true)',
    });
    new CfnOutput(this, 'UserPoolId', { value: data.users.userPool.userPoolId });
    new CfnOutput(this, 'UserPoolClientId', { value: data.users.client.userPoolClientId });
    new CfnOutput(this, 'DocumentsBucket', { value: data.documents.bucket.bucketName });
    new CfnOutput(this, 'DeadLetterQueueUrl', { value: data.documents.deadLetterQueue.queueUrl });
    new CfnOutput(this, 'Dashboard', { value: `Groundwork-${config.stage}` });
    const hostedLogin = data.users.hostedLoginDomain;
    if (hostedLogin) {
      // Save as playground/config.json next to the playground's files (local/playground).
      new CfnOutput(this, 'PlaygroundConfig', {
        description: 'playground/config.json for the web playground on a static host',
        value: Stack.of(this).toJsonString({
          apiUrl: this.api.url,
          auth: {
            mode: 'cognito',
            domain: hostedLogin.baseUrl(),
            clientId: data.users.client.userPoolClientId,
            redirectUri: config.hostedLoginCallbackUrls[0],
          },
        }),
      });
    }
  }
}
