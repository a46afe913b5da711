/**
 * Powertools Logger and Metrics, created once per process, and the adapters that let the core
 * log and count through its own small ports.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Log, MetricsSink } from '../../core/ports';
import { redactLogValue } from './redact';

/** The CloudWatch namespace every handler emits to (the dashboard reads the same constant). */
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

export function createObservability(serviceName: string): { logger: Logger; metrics: Metrics } {
  const logger = createLogger({ serviceName });
  const metrics = new Metrics({
    namespace: process.env.POWERTOOLS_METRICS_NAMESPACE ?? METRICS_NAMESPACE,
    serviceName,
  });
  return { logger, metrics };
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
