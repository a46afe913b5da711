/**
 * The limiter every API Lambda entry builds the same way from its parsed environment. Apart from
 * lambda-wiring.ts so that a function without a database (usage) does not load pg.
 */
import * as z from '../../core/zod';
import { parseLimitsConfigJson } from '../../core/limits/config';
import { createLimiter, type Limiter } from '../../core/limits/limiter';
import { createDynamoLimitStore, createLimitsDynamoDbClient } from '../dynamodb/limit-store';
import { logPort, metricsSink, traceClient, type Observability } from '../observability/powertools';

/** The variables the limiter needs (set by the CDK app's `grantLimitsTable`). */
export const limitsEnvShape = {
  /** DynamoDB table of the limiter (rate limits, quotas, daily cost). */
  LIMITS_TABLE: z.string().check(z.minLength(1)),
  /** Plans, quotas and caps as JSON (empty: the built-in defaults). */
  LIMITS_CONFIG: z.optional(z.string()),
};

/** The limiter on the environment's table; the limits config is parsed here, at cold start. */
export function limiterFromEnv(
  env: { AWS_REGION: string; LIMITS_TABLE: string; LIMITS_CONFIG?: string | undefined },
  observability: Pick<Observability, 'logger' | 'metrics' | 'tracer'>,
): Limiter {
  return createLimiter({
    store: createDynamoLimitStore({
      client: traceClient(
        observability.tracer,
        createLimitsDynamoDbClient({ region: env.AWS_REGION }),
      ),
      tableName: env.LIMITS_TABLE,
    }),
    config: parseLimitsConfigJson(env.LIMITS_CONFIG, 'LIMITS_CONFIG'),
    log: logPort(observability.logger),
    metrics: metricsSink(observability.metrics),
  });
}
