/**
 * The `ingest` Lambda: SQS messages carrying S3 event notifications. Each created or removed
 * object is synced through the ingestion use case; one bad message never fails its batch-mates
 * (partial batch response), and a message that fails for a transient reason is retried by SQS
 * and lands in the dead-letter queue after the configured number of receives.
 *
 * The same function consumes that dead-letter queue (the documents a message names are marked
 * `failed` with the reason) and, on a schedule, sweeps the `processing` documents whose lease
 * ran out and indexes again a few documents an older version of the ingestion code indexed
 * (core/ingestion/recovery.ts).
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
import { countBy, type IngestRecovery } from '../core/ingestion/recovery';
import type { ModelSwitch } from '../core/embedding/model-switch';
import { leaseSweepEventSchema, s3EventMessageSchema, s3TestEventSchema } from './s3-event';

export interface IngestHandlerDeps {
  readonly ingestion: Ingestion;
  /** Dead letters and the lease sweep; without it both are ignored (with a log line). */
  readonly recovery?: IngestRecovery;
  /**
   * The switch to the configured embedding model, stepped after each lease sweep within the
   * invocation's time (core/embedding/model-switch.ts); absent: never stepped here.
   */
  readonly modelSwitch?: ModelSwitch;
  /**
   * Time kept back from a scheduled invocation's budget: the outdated sweep and the switch start
   * no more work past it. @default 60000
   */
  readonly sweepReserveMs?: number;
  /** Records from this queue are dead letters of the ingest queue. */
  readonly deadLetterQueueArn?: string;
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** X-Ray: a subsegment for the handler, under which calls record theirs; absent: no tracing. */
  readonly tracer?: Tracer | undefined;
}

/** The event the schedule sends to run the lease sweep. */
export type LeaseSweepEvent = { readonly groundwork: 'lease-sweep' };

/** Thrown for a message that can never succeed; it still fails only its own record. */
export class MalformedMessageError extends Error {
  override name = 'MalformedMessageError';
}

/** Parses one SQS record and syncs every object it names. */
async function processRecord(ingestion: Ingestion, record: SQSRecord): Promise<SyncOutcome[]> {
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

/**
 * A dead letter: the message exhausted its receives. Every object it names is failed with the
 * reason (a malformed message names none: it is logged and dropped).
 */
export async function processDeadLetter(
  recovery: IngestRecovery,
  record: SQSRecord,
): Promise<number> {
  let body: unknown;
  try {
    body = JSON.parse(record.body);
  } catch {
    return 0;
  }
  const parsed = s3EventMessageSchema.safeParse(body);
  if (!parsed.success) return 0;
  const receives = Number(record.attributes?.ApproximateReceiveCount);
  for (const r of parsed.data.Records) {
    await recovery.deadLettered(
      r.s3.bucket.name,
      decodeS3EventKey(r.s3.object.key),
      Number.isFinite(receives) && receives > 0 ? receives : null,
    );
  }
  return parsed.data.Records.length;
}

/**
 * A batch's records in two groups: those SQS delivers for the first time (and dead letters),
 * and those it delivers again because a worker that received them did not finish.
 */
export function splitRedeliveries(
  records: readonly SQSRecord[],
  deadLetterQueueArn: string | undefined,
): { first: SQSRecord[]; again: SQSRecord[] } {
  const first: SQSRecord[] = [];
  const again: SQSRecord[] = [];
  for (const record of records) {
    const receives = Number(record.attributes?.ApproximateReceiveCount);
    const redelivered = record.eventSourceARN !== deadLetterQueueArn && receives > 1;
    (redelivered ? again : first).push(record);
  }
  return { first, again };
}

/** Builds the handler from its dependencies (the production entry and local/ both call this). */
export function makeHandler(deps: IngestHandlerDeps) {
  const processor = new BatchProcessor(EventType.SQS);
  const { recovery, deadLetterQueueArn, logger } = deps;
  const handleRecord = async (record: SQSRecord) => {
    try {
      if (deadLetterQueueArn && record.eventSourceARN === deadLetterQueueArn) {
        if (!recovery) {
          logger.error('dead letter dropped: no recovery configured', {
            messageId: record.messageId,
          });
          return 0;
        }
        const named = await processDeadLetter(recovery, record);
        if (named === 0)
          logger.error('dead letter names no object', { messageId: record.messageId });
        return named;
      }
      return await processRecord(deps.ingestion, record);
    } catch (err) {
      logger.error('ingest record failed', { messageId: record.messageId, err });
      throw err;
    }
  };
  const reserveMs = deps.sweepReserveMs ?? 60_000;
  // A scheduled invocation ignores the result: the sweep answers with an empty batch response.
  const base = async (
    event: SQSEvent | LeaseSweepEvent,
    context: Context,
  ): Promise<SQSBatchResponse> => {
    if (leaseSweepEventSchema.safeParse(event).success) {
      const outcomes = recovery ? await recovery.sweepExpiredLeases() : [];
      logger.info('lease sweep', { swept: outcomes.length, outcomes });
      // Documents an older version of the ingestion code indexed (version.ts), for as long as the
      // run may: before a model switch's batches, which then take what time is left.
      const reindexed = recovery
        ? await recovery.sweepOutdated({
            shouldStop: () => context.getRemainingTimeInMillis() < reserveMs,
          })
        : [];
      // A run may take up hundreds: their count per outcome, and the failures' reasons.
      if (reindexed.length > 0)
        logger.info('outdated documents indexed again', {
          reindexed: reindexed.length,
          byAction: countBy(reindexed, (o) => o.action),
          failed: reindexed.filter((o) => o.action === 'failed'),
        });
      if (deps.modelSwitch) await stepModelSwitch(deps.modelSwitch, context);
      return { batchItemFailures: [] };
    }
    const { first, again } = splitRedeliveries((event as SQSEvent).Records, deadLetterQueueArn);
    const options = { context, throwOnFullBatchFailure: false } as const;
    const failures: SQSBatchResponse['batchItemFailures'] = [];
    if (first.length > 0) {
      const done = await processPartialResponse(
        { Records: first },
        handleRecord,
        processor,
        options,
      );
      failures.push(...done.batchItemFailures);
    }
    // A record delivered again may be what killed the last worker (out of memory or time): it
    // runs after the others are done and one at a time, so it cannot take their work down too.
    if (again.length > 0) {
      const done = await processPartialResponse({ Records: again }, handleRecord, processor, {
        ...options,
        processInParallel: false,
      });
      failures.push(...done.batchItemFailures);
    }
    return { batchItemFailures: failures };
  };
  /** Re-embeds batches until the switch completes or the invocation's time runs short. */
  async function stepModelSwitch(modelSwitch: ModelSwitch, context: Context): Promise<void> {
    const outcome = await modelSwitch.run({
      shouldStop: () => context.getRemainingTimeInMillis() < reserveMs,
    });
    if (outcome === 'no-switch') return;
    const status = await modelSwitch.status();
    logger.info('embedding model switch', {
      outcome,
      live: status.live?.modelId,
      target: status.target?.modelId,
      chunksDone: status.chunksDone,
      chunksTotal: status.chunksTotal,
    });
  }
  const handler = middy(base);
  // The batch's result lists message ids only, but keep responses out of traces everywhere.
  if (deps.tracer) handler.use(captureLambdaHandler(deps.tracer, { captureResponse: false }));
  return handler.use(injectLambdaContext(logger)).use(logMetrics(deps.metrics));
}
