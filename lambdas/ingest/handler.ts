/**
 * The `ingest` Lambda: SQS messages carrying S3 event notifications. Each created or removed
 * object is synced through the ingestion use case; one bad message never fails its batch-mates
 * (partial batch response), and a message that fails for a transient reason is retried by SQS
 * and lands in the dead-letter queue after the configured number of receives.
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import type { Tracer } from '@aws-lambda-powertools/tracer';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import middy from '@middy/core';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { decodeS3EventKey } from '../core/ingestion/object-attributes';
import type { Ingestion, SyncOutcome } from '../core/ingestion/ingest';
import { s3EventMessageSchema, s3TestEventSchema } from './s3-event';

export interface IngestHandlerDeps {
  readonly ingestion: Ingestion;
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** X-Ray: a subsegment for the handler, under which calls record theirs; absent: no tracing. */
  readonly tracer?: Tracer | undefined;
}

/** Thrown for a message that can never succeed; it still fails only its own record. */
export class MalformedMessageError extends Error {
  override name = 'MalformedMessageError';
}

/** Parses one SQS record and syncs every object it names. */
export async function processRecord(
  ingestion: Ingestion,
  record: SQSRecord,
): Promise<SyncOutcome[]> {
  let body: unknown;
  try {
    body = JSON.parse(record.body);
  } catch {
    throw new MalformedMessageError(`message ${record.messageId} is not JSON`);
  }
  if (s3TestEventSchema.safeParse(body).success) return [];
  const parsed = s3EventMessageSchema.safeParse(body);
  if (!parsed.success)
    throw new MalformedMessageError(`message ${record.messageId} is not an S3 event notification`);
  const outcomes: SyncOutcome[] = [];
  for (const r of parsed.data.Records) {
    if (!r.eventName.startsWith('ObjectCreated:') && !r.eventName.startsWith('ObjectRemoved:'))
      continue;
    outcomes.push(await ingestion.syncObject(r.s3.bucket.name, decodeS3EventKey(r.s3.object.key)));
  }
  return outcomes;
}

/** Builds the handler from its dependencies (the production entry and local/ both call this). */
export function makeHandler(deps: IngestHandlerDeps) {
  const processor = new BatchProcessor(EventType.SQS);
  const base = async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> =>
    processPartialResponse(
      event,
      async (record: SQSRecord) => {
        try {
          return await processRecord(deps.ingestion, record);
        } catch (err) {
          deps.logger.error('ingest record failed', { messageId: record.messageId, err });
          throw err;
        }
      },
      processor,
      { context, throwOnFullBatchFailure: false },
    );
  const handler = middy(base);
  // The batch's result lists message ids only, but keep responses out of traces everywhere.
  if (deps.tracer) handler.use(captureLambdaHandler(deps.tracer, { captureResponse: false }));
  return handler.use(injectLambdaContext(deps.logger)).use(logMetrics(deps.metrics));
}
