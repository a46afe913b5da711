/**
 * The custom metrics the dashboard and alarms read, by the names the handlers emit through
 * Powertools, in the stage's namespace (`Groundwork/<stage>`, {@link metricsNamespace}).
 * test/infra/metrics-emitted.test.ts checks that every name in DASHBOARD_METRICS is emitted
 * somewhere in lambdas/ and every route in API_ROUTES is a handler's route, so a renamed metric
 * fails a test instead of flattening a graph.
 *
 * Dimensions, as Powertools publishes them: `service` (the function's POWERTOOLS_SERVICE_NAME)
 * on everything; API handlers add `route` for the whole invocation, so the core's counters
 * (Answers, InputTokens, ...) emitted while serving a request carry `service` and `route` too.
 * The ingest handler adds no dimension: its metrics carry `service` only.
 */
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { API_ROUTES as ROUTE_TABLE, type ApiFunction } from '../lambdas/http/api-routes';

/**
 * The namespace of a stage's custom metrics, `Groundwork/<stage>`: the stage's functions publish
 * to it (POWERTOOLS_METRICS_NAMESPACE, set by GroundworkFunction) and its dashboard and alarms
 * read it, so that two stages in one account and region never count each other's traffic
 * (docs/decisions/0161-a-namespace-and-an-api-name-per-stage.md).
 */
export function metricsNamespace(stage: string): string {
  return `Groundwork/${stage}`;
}

/** Every custom metric name the dashboard or an alarm uses. */
export const DASHBOARD_METRICS = [
  // lambdas/http/http-handler.ts and lambdas/rag-answer/stream.ts, per route
  'Requests',
  'Success',
  'Errors4xx',
  'Errors5xx',
  'Latency',
  // lambdas/core/answer/answer.ts
  'Answers',
  'Confidence_high',
  'Confidence_medium',
  'Confidence_low',
  'InsufficientContext',
  'FallbackAnswers',
  'LlmFailures',
  'InputTokens',
  'OutputTokens',
  'RetrievalFailures',
  'PersistErrors',
  // lambdas/core/limits/limiter.ts
  'AnswerCostMicroUsd',
  'CostCapReached',
  'CostCapRejected',
  'RateLimited',
  'QuotaExceeded',
  'LimiterStoreErrors',
  'AnswerCostUnknown',
  'QuotaRefunds',
  // lambdas/core/retrieval/search.ts
  'RetrievalLatency',
  'EmbeddingErrors',
  'RetrievalErrors',
  // lambdas/core/ingestion/ingest.ts
  'DocumentsIndexed',
  'DocumentsUnchanged',
  'DocumentsDeleted',
  'DocumentsFailed',
  'ChunksIndexed',
  'IngestionErrors',
  // lambdas/core/ingestion/recovery.ts: a dead letter's document marked failed; a document an
  // older ingestion version indexed, indexed again by the sweep
  'DocumentsDeadLettered',
  'DocumentsReindexed',
] as const;
export type DashboardMetricName = (typeof DASHBOARD_METRICS)[number];

/** Powertools service names (the `service` dimension), one per function. */
export const SERVICES = {
  ingest: 'ingest',
  search: 'rag-search',
  answer: 'rag-answer',
  answerStream: 'rag-answer-stream',
  usage: 'usage',
  documents: 'documents',
  admin: 'admin',
  migrate: 'migrate',
} as const;

/** One API route as the metrics see it: the function's service and the handler's route name. */
export interface RouteMetrics {
  readonly service: string;
  /** The `route` given to createHttpHandler (or STREAM_ROUTE, HEALTH_ROUTE). */
  readonly route: string;
}

/** The service (POWERTOOLS_SERVICE_NAME) of each function behind the API. */
const SERVICE_OF: Readonly<Record<ApiFunction, string>> = {
  'rag-search': SERVICES.search,
  'rag-answer': SERVICES.answer,
  usage: SERVICES.usage,
  documents: SERVICES.documents,
  admin: SERVICES.admin,
};

/**
 * The service a route's handler runs in, in AWS: a streamed route of the table is served by the
 * streaming function (lib/api-stack.ts, lambdas/rag-answer/stream.ts), buffered or streamed.
 */
const serviceOf = (r: (typeof ROUTE_TABLE)[number]): string =>
  r.streams ? SERVICES.answerStream : SERVICE_OF[r.function];

/** POST /api/rag/answer streamed, under STREAM_ROUTE (`answer-stream`); buffered, under `answer`. */
const STREAMED_ANSWER: RouteMetrics = { service: SERVICES.answerStream, route: 'answer-stream' };

/** Every API route, from the route table, with the `route` name its handler emits. */
export const API_ROUTES: readonly RouteMetrics[] = [
  ...ROUTE_TABLE.map((r) => ({ service: serviceOf(r), route: r.name })),
  STREAMED_ANSWER,
];

/**
 * The routes that produce answers (those counted against the `answer` quota class, buffered and
 * streamed): where the answer counters live.
 */
export const ANSWER_ROUTES: readonly RouteMetrics[] = [
  ...ROUTE_TABLE.filter(
    (r) => (r.quota ?? r.name) === 'answer' || (r.otherQuotas ?? []).includes('answer'),
  ).map((r) => ({ service: serviceOf(r), route: r.name })),
  STREAMED_ANSWER,
];

/** Period, statistic and label of a custom metric. */
interface MetricOptions {
  /** @default 'Sum' */
  readonly statistic?: string;
  /** @default Duration.minutes(5) */
  readonly period?: Duration;
  /** @default - the route */
  readonly label?: string;
}

/** The custom metrics of one namespace (a stage's, {@link metricsNamespace}) as graphs and alarms read them. */
export class CustomMetrics {
  constructor(readonly namespace: string) {}

  /** A custom metric of one route (dimensions `service` and `route`). */
  route(
    name: DashboardMetricName,
    route: RouteMetrics,
    options: MetricOptions = {},
  ): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: this.namespace,
      metricName: name,
      dimensionsMap: { service: route.service, route: route.route },
      statistic: options.statistic ?? 'Sum',
      period: options.period ?? Duration.minutes(5),
      label: options.label ?? route.route,
    });
  }

  /** A custom metric of the ingest function (dimension `service` only). */
  ingest(name: DashboardMetricName, options: Omit<MetricOptions, 'label'> = {}): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: this.namespace,
      metricName: name,
      dimensionsMap: { service: SERVICES.ingest },
      statistic: options.statistic ?? 'Sum',
      period: options.period ?? Duration.minutes(5),
      label: name,
    });
  }

  /**
   * The sum of one metric over several routes, as a math expression (each metric gets a
   * distinct id; missing data counts as 0 so that a quiet route does not blank the sum).
   */
  sumOverRoutes(
    name: DashboardMetricName,
    routes: readonly RouteMetrics[],
    options: { period?: Duration; label?: string; idPrefix?: string } = {},
  ): cloudwatch.MathExpression {
    const prefix = options.idPrefix ?? name.toLowerCase().replace(/[^a-z0-9]/g, '');
    const period = options.period ?? Duration.minutes(5);
    const usingMetrics: Record<string, cloudwatch.IMetric> = {};
    routes.forEach((r, i) => {
      usingMetrics[`${prefix}${i}`] = this.route(name, r, { period });
    });
    return new cloudwatch.MathExpression({
      expression: Object.keys(usingMetrics)
        .map((id) => `FILL(${id}, 0)`)
        .join(' + '),
      usingMetrics,
      period,
      label: options.label ?? name,
    });
  }
}

/**
 * AWS metrics the dashboard or an alarm reads that aws-cdk-lib has no canned definition for
 * (its `*-canned-metrics.generated` files, made from AWS's metric catalogue, cover the others),
 * with the page that documents them. test/infra/metrics-emitted.test.ts checks every AWS metric
 * of the synthesized alarms and dashboard against the two.
 */
export const AWS_DOCUMENTED_METRICS: Readonly<
  Record<string, { readonly metrics: readonly string[]; readonly source: string }>
> = {
  'AWS/Bedrock': {
    metrics: ['InvocationThrottles'],
    source: 'https://docs.aws.amazon.com/bedrock/latest/userguide/monitoring-runtime-metrics.html',
  },
  'AWS/RDS': {
    // ACUUtilization: Aurora Serverless v2; the others: RDS Proxy (dimension ProxyName).
    metrics: [
      'ACUUtilization',
      'ClientConnections',
      'ClientConnectionsSetupFailedAuth',
      'DatabaseConnectionsBorrowLatency',
    ],
    source:
      'https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/rds-proxy.monitoring.html, https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/aurora-serverless-v2.viewing.monitoring.html',
  },
};
