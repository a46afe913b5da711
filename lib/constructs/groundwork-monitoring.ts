/**
 * GroundworkMonitoring: the operations dashboard and the alarms, which notify an SNS topic
 * (KMS-encrypted, e-mail subscription from configuration).
 *
 * Custom metrics come from lib/metrics.ts, whose names are checked against what the handlers
 * emit. Cost: the limiter emits `AnswerCostMicroUsd` (the estimated cost of each answer's LLM
 * call) and `CostCapReached` (a daily cap crossed); the spend alarm sums the first over a rolling
 * 24 hours, which approximates the limiter's UTC day, and warns before the global cap.
 *
 * Dead letters: the ingest function consumes the dead-letter queue itself, marking each document
 * failed within seconds, so the queue's depth says little; the alarm counts `DocumentsDeadLettered`
 * (recovery.ts), and a second one fires on a dead letter that function cannot process (it stays
 * in the queue, visible or in flight, for 15 minutes).
 *
 * AWS metrics (lib/metrics.ts AWS_DOCUMENTED_METRICS and aws-cdk-lib's canned metrics, both
 * checked by test/infra/metrics-emitted.test.ts): per function Lambda `Errors` (a crash or
 * timeout: the handlers turn their own errors into responses) and `Throttles`; the ingest queue's
 * `ApproximateAgeOfOldestMessage` and the dead-letter queue's depth; the REST API's `5XXError`
 * (integration failures the function never sees); Aurora's `ServerlessDatabaseCapacity` at its
 * maximum; RDS Proxy's `ClientConnectionsSetupFailedAuth` (the functions' login fails, e.g. after
 * a broken rotation) and `DatabaseConnectionsBorrowLatency` (the pool is exhausted); Bedrock's
 * `InvocationThrottles` per model.
 */
import { Duration, Stack } from 'aws-cdk-lib';
import type * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import {
  ANSWER_ROUTES,
  API_ROUTES,
  CustomMetrics,
  type DashboardMetricName,
  type RouteMetrics,
} from '../metrics';

/** When the alarms fire. */
interface AlarmThresholds {
  /** API Gateway 5xx responses as a share of requests, percent (5-minute windows, 10+ requests). @default 5 */
  readonly serverErrorRatePercent: number;
  /** p95 of POST /api/rag/search, milliseconds. @default 3000 */
  readonly searchP95Ms: number;
  /** p95 of the buffered POST /api/rag/answer, milliseconds. @default 20000 */
  readonly answerP95Ms: number;
  /** Failed or errored documents as a share of documents processed, percent (15 minutes, 5+ documents). @default 20 */
  readonly ingestionFailureRatePercent: number;
  /** Share of the global daily cost cap at which the spend alarm fires, percent. @default 80 */
  readonly costCapWarningPercent: number;
  /** Lambda invocation errors (crashes, timeouts) of one function in 5 minutes. @default 1 */
  readonly functionErrors: number;
  /** Age of the oldest message in the ingest queue, minutes. @default 60 */
  readonly queueAgeMinutes: number;
  /** Bedrock throttled invocations of one model in 5 minutes (after the SDK's retries). @default 5 */
  readonly bedrockThrottles: number;
  /** RDS Proxy: time to borrow a database connection, milliseconds (maximum over 5 minutes). @default 5000 */
  readonly proxyBorrowMs: number;
  /** Aurora readers: the largest lag behind the writer, milliseconds (for 15 minutes). @default 10000 */
  readonly readerLagMs: number;
  /** LLM calls that failed after retries (answers degraded to their sources), summed over the answer routes, in 5 minutes. @default 5 */
  readonly llmFailures: number;
  /** Minutes a dead letter stays in the dead-letter queue, unprocessed, before the alarm. @default 15 */
  readonly deadLetterStuckMinutes: number;
}

const DEFAULT_THRESHOLDS: AlarmThresholds = {
  serverErrorRatePercent: 5,
  searchP95Ms: 3000,
  answerP95Ms: 20000,
  ingestionFailureRatePercent: 20,
  costCapWarningPercent: 80,
  functionErrors: 1,
  queueAgeMinutes: 60,
  bedrockThrottles: 5,
  proxyBorrowMs: 5000,
  readerLagMs: 10_000,
  llmFailures: 5,
  deadLetterStuckMinutes: 15,
};

export interface GroundworkMonitoringProps {
  /** The dashboard's name (unique per account and region). */
  readonly dashboardName: string;
  /** The REST API every route is on (its AWS/ApiGateway metrics are read by its name). */
  readonly api: apigateway.RestApi;
  /**
   * The namespace the stage's functions publish their custom metrics to (lib/metrics.ts
   * metricsNamespace): the only one the dashboard and alarms read.
   */
  readonly metricsNamespace: string;
  readonly queues: { readonly ingest: sqs.IQueue; readonly deadLetter: sqs.IQueue };
  readonly database: {
    readonly clusterIdentifier: string;
    readonly proxyName?: string;
    /** The cluster's maximum capacity: capacity held there means it cannot scale further. */
    readonly maxCapacityAcu: number;
    /** Reader instances serving search (docs/decisions/0147-reads-on-aurora-readers.md). @default 0 */
    readonly readers?: number;
  };
  /** The functions whose errors and throttles raise alarms, by name. @default - none */
  readonly functions?: Readonly<Record<string, lambda.IFunction>>;
  /** The Bedrock model ids the functions invoke. @default - none */
  readonly bedrockModelIds?: readonly string[];
  /** Subscribed to the alarm topic. @default - no subscription */
  readonly alarmEmail?: string;
  /** The deployment's daily cost cap in USD (limits `costCaps.globalUsdPerDay`). @default - no spend alarm */
  readonly dailyCostCapUsd?: number | null;
  /** @default DEFAULT_THRESHOLDS */
  readonly thresholds?: Partial<AlarmThresholds>;
}

const FIVE_MINUTES = Duration.minutes(5);
const WIDTH = 8;

export class GroundworkMonitoring extends Construct {
  readonly dashboard: cloudwatch.Dashboard;
  readonly topic: sns.Topic;
  readonly alarms: cloudwatch.Alarm[] = [];

  constructor(scope: Construct, id: string, props: GroundworkMonitoringProps) {
    super(scope, id);
    const t: AlarmThresholds = { ...DEFAULT_THRESHOLDS, ...props.thresholds };
    const custom = new CustomMetrics(props.metricsNamespace);

    // CloudWatch must be allowed to use the key to publish alarms to an encrypted topic.
    const key = new kms.Key(this, 'TopicKey', {
      enableKeyRotation: true,
      description: 'Groundwork alarm topic',
    });
    key.addToResourcePolicy(
      new iam.PolicyStatement({
        principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
        conditions: { StringEquals: { 'aws:SourceAccount': Stack.of(this).account } },
      }),
    );
    this.topic = new sns.Topic(this, 'Alarms', {
      masterKey: key,
      enforceSSL: true,
      displayName: 'Groundwork alarms',
    });
    if (props.alarmEmail)
      this.topic.addSubscription(new subscriptions.EmailSubscription(props.alarmEmail));

    const byRoute = (
      name: DashboardMetricName,
      statistic = 'Sum',
      routes: readonly RouteMetrics[] = API_ROUTES,
    ) => routes.map((r) => custom.route(name, r, { statistic }));
    const answers = (name: DashboardMetricName, label: string = name) =>
      custom.sumOverRoutes(name, ANSWER_ROUTES, { label });
    const graph = (
      title: string,
      left: cloudwatch.IMetric[],
      extra: Partial<cloudwatch.GraphWidgetProps> = {},
    ) => new cloudwatch.GraphWidget({ title, left, width: WIDTH, height: 6, ...extra });

    const documentsProcessed = [
      'DocumentsIndexed',
      'DocumentsUnchanged',
      'DocumentsFailed',
      'IngestionErrors',
    ] as const;
    const ingestionFailureRate = new cloudwatch.MathExpression({
      expression: 'IF(processed >= 5, 100 * (FILL(failed, 0) + FILL(errors, 0)) / processed, 0)',
      usingMetrics: {
        processed: new cloudwatch.MathExpression({
          expression: documentsProcessed.map((_, i) => `FILL(d${i}, 0)`).join(' + '),
          usingMetrics: Object.fromEntries(
            documentsProcessed.map((n, i) => [
              `d${i}`,
              custom.ingest(n, { period: Duration.minutes(15) }),
            ]),
          ),
          period: Duration.minutes(15),
        }),
        failed: custom.ingest('DocumentsFailed', { period: Duration.minutes(15) }),
        errors: custom.ingest('IngestionErrors', { period: Duration.minutes(15) }),
      },
      period: Duration.minutes(15),
      label: 'Failed documents (%)',
    });
    const apiServerErrorRate = new cloudwatch.MathExpression({
      expression: 'IF(requests >= 10, 100 * errors / requests, 0)',
      usingMetrics: {
        requests: props.api.metricCount({ period: FIVE_MINUTES, statistic: 'Sum' }),
        errors: props.api.metricServerError({ period: FIVE_MINUTES, statistic: 'Sum' }),
      },
      period: FIVE_MINUTES,
      label: 'API 5xx (%)',
    });
    const stream = ANSWER_ROUTES.find((r) => r.route === 'answer-stream') as RouteMetrics;
    const streamServerErrorRate = new cloudwatch.MathExpression({
      expression: 'IF(FILL(requests, 0) >= 10, 100 * FILL(errors, 0) / requests, 0)',
      usingMetrics: {
        requests: custom.route('Requests', stream),
        errors: custom.route('Errors5xx', stream),
      },
      period: FIVE_MINUTES,
      label: 'Streaming 5xx (%)',
    });
    // Every minute, the dead letters in the queue, waiting or held by the ingest function: one
    // that function processes is gone within seconds; one it cannot stays (and is retried).
    const deadLettersInQueue = new cloudwatch.MathExpression({
      expression: 'FILL(waiting, 0) + FILL(held, 0)',
      usingMetrics: {
        waiting: props.queues.deadLetter.metricApproximateNumberOfMessagesVisible({
          statistic: 'Maximum',
          period: Duration.minutes(1),
        }),
        held: props.queues.deadLetter.metricApproximateNumberOfMessagesNotVisible({
          statistic: 'Maximum',
          period: Duration.minutes(1),
        }),
      },
      period: Duration.minutes(1),
      label: 'dead letters in the queue',
    });
    const dailySpend = custom.sumOverRoutes('AnswerCostMicroUsd', ANSWER_ROUTES, {
      period: Duration.days(1),
      label: 'Answer cost, rolling 24 h (micro-USD)',
      idPrefix: 'daily',
    });
    const rds = (metricName: string, statistic: string, dimensionsMap: Record<string, string>) =>
      new cloudwatch.Metric({
        namespace: 'AWS/RDS',
        metricName,
        dimensionsMap,
        statistic,
        period: FIVE_MINUTES,
        label: metricName,
      });
    const cluster = { DBClusterIdentifier: props.database.clusterIdentifier };

    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      dashboardName: props.dashboardName,
      defaultInterval: Duration.hours(24),
      widgets: [
        [
          graph('Requests per route', byRoute('Requests')),
          graph('4xx per route', byRoute('Errors4xx')),
          graph('5xx per route', byRoute('Errors5xx')),
        ],
        [
          graph('Latency p50 per route (ms)', byRoute('Latency', 'p50')),
          graph('Latency p95 per route (ms)', byRoute('Latency', 'p95')),
          graph('Latency p99 per route (ms)', byRoute('Latency', 'p99')),
        ],
        [
          graph(
            'Answer confidence',
            [
              answers('Confidence_high', 'high'),
              answers('Confidence_medium', 'medium'),
              answers('Confidence_low', 'low'),
            ],
            {
              stacked: true,
            },
          ),
          graph('Insufficient context and fallbacks (% of answers)', [
            new cloudwatch.MathExpression({
              expression: 'IF(total > 0, 100 * insufficient / total, 0)',
              usingMetrics: {
                total: answers('Answers'),
                insufficient: answers('InsufficientContext'),
              },
              label: 'insufficient context',
              period: FIVE_MINUTES,
            }),
            new cloudwatch.MathExpression({
              expression: 'IF(total > 0, 100 * fallback / total, 0)',
              usingMetrics: { total: answers('Answers'), fallback: answers('FallbackAnswers') },
              label: 'LLM down, sources returned',
              period: FIVE_MINUTES,
            }),
          ]),
          graph(
            'Answers, LLM failures, retrieval latency',
            [answers('Answers'), answers('LlmFailures')],
            {
              right: byRoute(
                'RetrievalLatency',
                'p95',
                API_ROUTES.filter(
                  (r) =>
                    r.route === 'search' || r.route === 'answer' || r.route === 'answer-stream',
                ),
              ),
              rightYAxis: { label: 'retrieval p95 (ms)', showUnits: false },
            },
          ),
        ],
        [
          graph('LLM tokens', [
            answers('InputTokens', 'input tokens'),
            answers('OutputTokens', 'output tokens'),
          ]),
          graph('Estimated LLM cost (USD)', [
            new cloudwatch.MathExpression({
              expression: 'cost / 1000000',
              usingMetrics: { cost: answers('AnswerCostMicroUsd') },
              label: 'per 5 minutes',
              period: FIVE_MINUTES,
            }),
            new cloudwatch.MathExpression({
              expression: 'spend / 1000000',
              usingMetrics: { spend: dailySpend },
              label: 'rolling 24 h',
              period: Duration.days(1),
            }),
          ]),
          graph('Limits', [
            custom.sumOverRoutes('RateLimited', API_ROUTES, { label: 'rate limited' }),
            custom.sumOverRoutes('QuotaExceeded', API_ROUTES, { label: 'quota exceeded' }),
            answers('CostCapRejected', 'cost cap rejected'),
            custom.sumOverRoutes('LimiterStoreErrors', API_ROUTES, {
              label: 'limits store errors',
            }),
          ]),
        ],
        [
          graph(
            'Ingestion: documents',
            documentsProcessed
              .map((n) => custom.ingest(n))
              .concat(
                custom.ingest('DocumentsDeleted'),
                custom.ingest('DocumentsDeadLettered'),
                custom.ingest('DocumentsReindexed'),
              ),
            {
              right: [custom.ingest('ChunksIndexed')],
              rightYAxis: { label: 'chunks', showUnits: false },
            },
          ),
          graph('Ingestion: failure rate (%)', [ingestionFailureRate]),
          graph(
            'Ingest queue and dead letters',
            [
              deadLettersInQueue,
              props.queues.ingest.metricApproximateNumberOfMessagesVisible({
                statistic: 'Maximum',
                period: FIVE_MINUTES,
                label: 'queued',
              }),
            ],
            {
              right: [
                props.queues.ingest.metricApproximateAgeOfOldestMessage({
                  statistic: 'Maximum',
                  period: FIVE_MINUTES,
                  label: 'oldest (s)',
                }),
              ],
            },
          ),
        ],
        [
          graph(
            'Aurora capacity (ACU)',
            [
              rds('ServerlessDatabaseCapacity', 'Average', cluster),
              rds('ServerlessDatabaseCapacity', 'Maximum', cluster),
            ],
            {
              right: [rds('ACUUtilization', 'Maximum', cluster)],
              rightYAxis: { label: 'ACU utilisation (%)', showUnits: false },
            },
          ),
          graph(
            'Database connections',
            [rds('DatabaseConnections', 'Maximum', cluster)].concat(
              props.database.proxyName
                ? [
                    rds('ClientConnections', 'Maximum', { ProxyName: props.database.proxyName }),
                    rds('DatabaseConnections', 'Maximum', { ProxyName: props.database.proxyName }),
                  ]
                : [],
            ),
          ),
          graph(
            'API Gateway',
            [props.api.metricCount({ period: FIVE_MINUTES, label: 'requests' })],
            {
              right: [apiServerErrorRate],
              rightYAxis: { label: '5xx (%)', showUnits: false },
            },
          ),
        ],
      ],
    });

    // Failures that degrade an answer without failing the request, and quota bookkeeping.
    const retrievalRoutes = API_ROUTES.filter(
      (r) => r.route === 'search' || r.route === 'answer' || r.route === 'answer-stream',
    );
    const limitedRoutes = API_ROUTES.filter((r) => r.route !== 'health');
    const functions = Object.entries(props.functions ?? {});
    const lambdaMetric = (fn: lambda.IFunction, name: 'Errors' | 'Throttles', label: string) => {
      const options = { period: FIVE_MINUTES, statistic: 'Sum', label };
      return name === 'Errors' ? fn.metricErrors(options) : fn.metricThrottles(options);
    };
    const bedrock = (modelId: string, metricName: string) =>
      new cloudwatch.Metric({
        namespace: 'AWS/Bedrock',
        metricName,
        dimensionsMap: { ModelId: modelId },
        statistic: 'Sum',
        period: FIVE_MINUTES,
        label: `${modelId} ${metricName}`,
      });
    const proxy = props.database.proxyName ? { ProxyName: props.database.proxyName } : undefined;
    this.dashboard.addWidgets(
      graph('Degraded answers, quota refunds', [
        custom.sumOverRoutes('RetrievalErrors', retrievalRoutes, { label: 'retrieval errors' }),
        answers('RetrievalFailures', 'retrieval failures (answers)'),
        answers('PersistErrors', 'answers not saved'),
        answers('AnswerCostUnknown', 'answer cost unknown'),
        custom.sumOverRoutes('QuotaRefunds', limitedRoutes, { label: 'quota refunds' }),
        custom.sumOverRoutes('EmbeddingErrors', retrievalRoutes, { label: 'embedding errors' }),
      ]),
      graph(
        'Lambda errors and throttles',
        functions.map(([name, fn]) => lambdaMetric(fn, 'Errors', `${name} errors`)),
        {
          right: functions.map(([name, fn]) => lambdaMetric(fn, 'Throttles', `${name} throttles`)),
          rightYAxis: { label: 'throttles', showUnits: false },
        },
      ),
      graph(
        'Bedrock throttles, RDS Proxy',
        (props.bedrockModelIds ?? []).map((id) => bedrock(id, 'InvocationThrottles')),
        {
          right: [
            ...(proxy
              ? [
                  rds('ClientConnectionsSetupFailedAuth', 'Sum', proxy),
                  rds('DatabaseConnectionsBorrowLatency', 'Maximum', proxy),
                ]
              : []),
          ],
        },
      ),
    );

    const action = new actions.SnsAction(this.topic);
    const alarm = (id: string, options: cloudwatch.AlarmProps) => {
      const created = new cloudwatch.Alarm(this, id, {
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        ...options,
      });
      created.addAlarmAction(action);
      created.addOkAction(action);
      this.alarms.push(created);
      return created;
    };

    alarm('ApiServerErrors', {
      metric: apiServerErrorRate,
      alarmDescription: `More than ${t.serverErrorRatePercent}% of API requests got a 5xx from API Gateway in 5 minutes (including integration failures no function saw).`,
      threshold: t.serverErrorRatePercent,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
    });
    alarm('StreamServerErrors', {
      metric: streamServerErrorRate,
      alarmDescription: `More than ${t.serverErrorRatePercent}% of streamed answers failed with a 5xx in 5 minutes.`,
      threshold: t.serverErrorRatePercent,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
    });
    const search = API_ROUTES.find((r) => r.route === 'search') as RouteMetrics;
    const answer = API_ROUTES.find((r) => r.route === 'answer') as RouteMetrics;
    alarm('SearchLatencyP95', {
      metric: custom.route('Latency', search, { statistic: 'p95' }),
      alarmDescription: `POST /api/rag/search p95 above ${t.searchP95Ms} ms for 15 minutes.`,
      threshold: t.searchP95Ms,
      evaluationPeriods: 3,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
    });
    alarm('AnswerLatencyP95', {
      metric: custom.route('Latency', answer, { statistic: 'p95' }),
      alarmDescription: `POST /api/rag/answer p95 above ${t.answerP95Ms} ms for 15 minutes.`,
      threshold: t.answerP95Ms,
      evaluationPeriods: 3,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
    });
    alarm('LlmFailures', {
      metric: custom.sumOverRoutes('LlmFailures', ANSWER_ROUTES),
      alarmDescription: `${t.llmFailures}+ LLM calls failed after retries in 5 minutes: answers carry their sources instead of generated text (Bedrock model access, quota or outage; see the answer functions' logs).`,
      threshold: t.llmFailures,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    });
    alarm('DeadLetters', {
      metric: custom.ingest('DocumentsDeadLettered'),
      alarmDescription:
        'Ingestion gave up on a document after every retry and marked it failed with the reason (GET /api/documents?status=failed); fix the cause, then POST /api/documents/{id}/retry.',
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    });
    alarm('DeadLettersStuck', {
      metric: deadLettersInQueue,
      alarmDescription: `A dead letter stayed ${t.deadLetterStuckMinutes} minutes in the dead-letter queue: the ingest function cannot mark its document failed (see its log; it retries every visibility timeout, and the queue keeps the message 14 days).`,
      threshold: 1,
      evaluationPeriods: t.deadLetterStuckMinutes,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    });
    alarm('IngestionFailureRate', {
      metric: ingestionFailureRate,
      alarmDescription: `More than ${t.ingestionFailureRatePercent}% of documents failed or errored in 15 minutes (see GET /api/documents?status=failed).`,
      threshold: t.ingestionFailureRatePercent,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
    });
    alarm('CostCapReached', {
      metric: custom.sumOverRoutes('CostCapReached', ANSWER_ROUTES),
      alarmDescription:
        "A daily cost cap (global or a tenant's) was reached: answers are refused with 503 until 00:00 UTC.",
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    });
    // One alarm per function (per 10 of its routes: an alarm's math may use at most 10
    // metrics), since the function that cannot reach the limits table is what an operator
    // needs to know.
    const MAX_ALARM_METRICS = 10;
    for (const service of [...new Set(limitedRoutes.map((r) => r.service))]) {
      const routes = limitedRoutes.filter((r) => r.service === service);
      for (let i = 0; i < routes.length; i += MAX_ALARM_METRICS) {
        const part = i / MAX_ALARM_METRICS;
        alarm(`LimiterStoreErrors-${service}${part === 0 ? '' : `-${part + 1}`}`, {
          metric: custom.sumOverRoutes(
            'LimiterStoreErrors',
            routes.slice(i, i + MAX_ALARM_METRICS),
          ),
          alarmDescription: `${service}: the limits table could not be reached; limits are not enforced (or requests refused) meanwhile.`,
          threshold: 5,
          evaluationPeriods: 1,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        });
      }
    }
    for (const [name, fn] of functions) {
      alarm(`FunctionErrors-${name}`, {
        metric: lambdaMetric(fn, 'Errors', `${name} errors`),
        alarmDescription: `${name}: ${t.functionErrors}+ invocations crashed or timed out in 5 minutes (the handlers answer their own errors; see the function's log).`,
        threshold: t.functionErrors,
        evaluationPeriods: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      });
      alarm(`FunctionThrottles-${name}`, {
        metric: lambdaMetric(fn, 'Throttles', `${name} throttles`),
        alarmDescription: `${name}: invocations were throttled (the account's or the function's concurrency is exhausted).`,
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      });
    }
    alarm('IngestQueueAge', {
      metric: props.queues.ingest.metricApproximateAgeOfOldestMessage({
        statistic: 'Maximum',
        period: FIVE_MINUTES,
      }),
      alarmDescription: `A document has waited more than ${t.queueAgeMinutes} minutes in the ingest queue (ingestion is failing or too slow; a message that keeps failing is retried until it reaches the dead-letter queue).`,
      threshold: t.queueAgeMinutes * 60,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
    });
    alarm('AuroraAtMaxCapacity', {
      metric: rds('ServerlessDatabaseCapacity', 'Minimum', cluster),
      alarmDescription: `Aurora stayed at its maximum of ${props.database.maxCapacityAcu} ACUs for 15 minutes: queries queue up; raise auroraMaxCapacity.`,
      threshold: props.database.maxCapacityAcu,
      evaluationPeriods: 3,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    });
    if ((props.database.readers ?? 0) > 0) {
      alarm('ReaderLag', {
        metric: rds('AuroraReplicaLagMaximum', 'Maximum', cluster),
        alarmDescription: `An Aurora reader stayed more than ${t.readerLagMs} ms behind the writer for 15 minutes: searches miss documents indexed meanwhile.`,
        threshold: t.readerLagMs,
        evaluationPeriods: 3,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      });
    }
    if (proxy) {
      // Each rotation makes every warm function's next login fail once, by design (it then reads
      // the new secret): only refusals that go on for 15 minutes mean a broken secret.
      alarm('ProxyLoginFailures', {
        metric: rds('ClientConnectionsSetupFailedAuth', 'Sum', proxy),
        alarmDescription:
          "RDS Proxy refused the functions' login in each 5 minutes for 15 minutes (a secret out of step with the database, e.g. after a failed rotation).",
        threshold: 1,
        evaluationPeriods: 3,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      });
      alarm('ProxyBorrowLatency', {
        metric: rds('DatabaseConnectionsBorrowLatency', 'Maximum', proxy),
        alarmDescription: `RDS Proxy took more than ${t.proxyBorrowMs} ms to lend a database connection (its pool is exhausted or the database is resuming) for 10 minutes.`,
        // The metric is in microseconds.
        threshold: t.proxyBorrowMs * 1000,
        evaluationPeriods: 2,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      });
    }
    for (const modelId of props.bedrockModelIds ?? []) {
      alarm(`BedrockThrottles-${modelId.replace(/[^A-Za-z0-9]/g, '')}`, {
        metric: bedrock(modelId, 'InvocationThrottles'),
        alarmDescription: `Bedrock throttled ${t.bedrockThrottles}+ invocations of ${modelId} in 5 minutes after the SDK's retries (raise the model's quota or lower the API rate limits).`,
        threshold: t.bedrockThrottles,
        evaluationPeriods: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      });
    }
    if (props.dailyCostCapUsd) {
      const warnAt = (t.costCapWarningPercent / 100) * props.dailyCostCapUsd;
      alarm('DailySpendNearCap', {
        metric: dailySpend,
        alarmDescription: `Estimated LLM spend over 24 hours passed ${t.costCapWarningPercent}% of the USD ${props.dailyCostCapUsd} daily cap.`,
        threshold: Math.round(warnAt * 1_000_000),
        evaluationPeriods: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      });
    }
  }
}
