/**
 * Powertools Logger, Metrics and Tracer, created once per process, and the adapters that let the
 * core log and count through its own small ports.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Tracer } from '@aws-lambda-powertools/tracer';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import type { Context } from 'aws-lambda';
import type { Log, MetricsSink } from '../../core/ports';
import { redactLogValue } from './redact';

/**
 * The CloudWatch namespace when `POWERTOOLS_METRICS_NAMESPACE` is not set (the embedded
 * default); in AWS the stack sets each stage's own, which its dashboard and alarms read
 * (lib/metrics.ts).
 */
export const METRICS_NAMESPACE = 'Groundwork';

/**
 * The one way a logger is made, in a Lambda and in the embedded default: Powertools' JSON lines,
 * with every logged error redacted (no statement parameters, rows or quoted values; see redact.ts).
 */
export function createLogger(
  options: Pick<NonNullable<ConstructorParameters<typeof Logger>[0]>, 'serviceName' | 'logLevel'>,
): Logger {
  return new Logger({ ...options, jsonReplacerFn: redactLogValue });
}

/**
 * The one way metrics are made: Powertools' EMF in the stage's namespace, with the library's
 * own notices (such as "No application metrics to publish") written through `logger`, at its
 * level, instead of straight to the console.
 */
export function createMetrics(serviceName: string, logger: Logger): Metrics {
  return new Metrics({
    namespace: process.env.POWERTOOLS_METRICS_NAMESPACE ?? METRICS_NAMESPACE,
    serviceName,
    logger,
  });
}

/** What a Lambda entry observes itself with. */
export interface Observability {
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** The X-Ray tracer; undefined where tracing is off (see {@link createTracer}). */
  readonly tracer: Tracer | undefined;
}

/** A Lambda entry's logger, metrics and tracer (once per process, at module scope). */
export function createObservability(serviceName: string): Observability {
  const logger = createLogger({ serviceName });
  const metrics = createMetrics(serviceName, logger);
  return { logger, metrics, tracer: createTracer(serviceName) };
}

/**
 * Whether this process traces: in a Lambda function (the runtime sets AWS_EXECUTION_ENV) unless
 * POWERTOOLS_TRACE_ENABLED is `false`. Powertools applies the same rule (and turns tracing off
 * under SAM CLI and Amplify mocks on top of it).
 */
function tracingWanted(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.AWS_EXECUTION_ENV) && env.POWERTOOLS_TRACE_ENABLED?.toLowerCase() !== 'false';
}

/**
 * The Powertools Tracer where tracing is wanted, else undefined. It is required here, not
 * imported: the X-Ray SDK it loads turns on async hooks for the whole process (about ten times
 * the cost of every `await` in a micro-benchmark), which the embedded default, the tests and a
 * function with tracing off must not pay. Responses are never recorded (they are the callers'
 * data): `captureResponse: false` on the handler middleware, `POWERTOOLS_TRACER_CAPTURE_RESPONSE`
 * for methods. Outgoing requests are traced where they are made (`traceClient` on each AWS SDK
 * client, traced-database.ts for statements), not by patching Node's http modules and fetch for
 * the whole process (`captureHTTPsRequests: false`), which would also report every request made
 * outside an invocation's segment as an error.
 */
function createTracer(serviceName: string): Tracer | undefined {
  if (!tracingWanted()) return undefined;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { Tracer: PowertoolsTracer } = require('@aws-lambda-powertools/tracer') as {
    Tracer: typeof Tracer;
  };
  const tracer = new PowertoolsTracer({ serviceName, captureHTTPsRequests: false });
  return tracer.isTracingEnabled() ? tracer : undefined;
}

/**
 * A handler that middy does not wrap (the streaming one), with the subsegment the
 * `captureLambdaHandler` middleware gives the others: its hooks, run around the handler.
 */
export function withTracing<E, R>(
  tracer: Tracer | undefined,
  handler: (event: E, responseStream: R, context: Context) => Promise<void>,
): (event: E, responseStream: R, context: Context) => Promise<void> {
  if (!tracer) return handler;
  const hooks = captureLambdaHandler(tracer, { captureResponse: false });
  return async (event, responseStream, context) => {
    const request = {
      event,
      context,
      response: undefined,
      error: undefined as Error | undefined,
      internal: {},
    };
    await hooks.before?.(request);
    try {
      await handler(event, responseStream, context);
    } catch (err) {
      request.error = err instanceof Error ? err : new Error(String(err));
      await hooks.onError?.(request);
      throw err;
    }
    await hooks.after?.(request);
  };
}

/** `client` with an X-Ray subsegment per call (AWS SDK v3); itself where tracing is off. */
export function traceClient<C>(tracer: Tracer | undefined, client: C): C {
  return tracer ? tracer.captureAWSv3Client(client) : client;
}

/** Adapts Powertools Metrics to the core's `MetricsSink`. */
export function metricsSink(metrics: Metrics): MetricsSink {
  return {
    count: (name, value = 1) => metrics.addMetric(name, MetricUnit.Count, value),
    timing: (name, ms) => metrics.addMetric(name, MetricUnit.Milliseconds, ms),
  };
}

/** Adapts Powertools Logger to the core's `Log` port. */
export function logPort(logger: Logger): Log {
  return {
    debug: (m, ...x) => logger.debug(m, ...(x as never[])),
    info: (m, ...x) => logger.info(m, ...(x as never[])),
    warn: (m, ...x) => logger.warn(m, ...(x as never[])),
    error: (m, ...x) => logger.error(m, ...(x as never[])),
  };
}
