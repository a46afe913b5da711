/**
 * The local stand-in for the SQS queue between the bucket and the `ingest` Lambda: S3 event
 * notifications from the emulator are wrapped as SQS messages and handed to the same handler,
 * a few messages per batch, with failed messages retried a bounded number of times, after a
 * delay as SQS's visibility timeout gives one, so that a dependency down for a few seconds does
 * not take every attempt. A notification that repeats one still waiting its first turn (the same
 * event on the same object) is dropped: ingestion reads the object when the waiting one runs, so
 * it would only do the same work twice (a folder uploaded again while the queue is still busy
 * with the keys announced at start).
 */
import { randomUUID } from 'node:crypto';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';

type IngestHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

export interface IngestQueue {
  /** Enqueues one S3 event notification (the JSON body an SQS message would carry). */
  push(notification: unknown): void;
  /** Resolves when every message has been processed (or has exhausted its retries), or at stop(). */
  idle(): Promise<void>;
  /** Messages that failed every attempt (what a dead-letter queue would hold). */
  readonly deadLetters: readonly SQSRecord[];
  /** Messages waiting and in flight, like SQS's ApproximateNumberOfMessages(NotVisible). */
  stats(): { pending: number; inFlight: number; deadLetters: number };
  stop(): Promise<void>;
}

/** How often the dead-letter consumer is run for one message before it is left to the retry route. */
const DEAD_LETTER_ATTEMPTS = 5;

export function lambdaContext(functionName: string): Context {
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: '1024',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => 900_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/**
 * What makes two notifications the same work: the event and the object of an S3 notification's
 * one record; null for anything else, which is never merged.
 */
export function sameWorkKey(body: string): string | null {
  try {
    const records = (JSON.parse(body) as { Records?: unknown }).Records;
    if (!Array.isArray(records) || records.length !== 1) return null;
    const r = records[0] as {
      eventName?: unknown;
      s3?: { bucket?: { name?: unknown }; object?: { key?: unknown } };
    } | null;
    const parts = [r?.eventName, r?.s3?.bucket?.name, r?.s3?.object?.key];
    return parts.every((x) => typeof x === 'string') ? JSON.stringify(parts) : null;
  } catch {
    return null;
  }
}

/** A message of the queue: its record, how often it was received, and its {@link sameWorkKey}. */
interface Item {
  readonly record: SQSRecord;
  readonly receives: number;
  readonly work: string | null;
}

/** The record as the dead-letter queue holds it: with how often it was received. */
function receivedBy(item: Item): SQSRecord {
  return {
    ...item.record,
    attributes: { ...item.record.attributes, ApproximateReceiveCount: String(item.receives + 1) },
  };
}

export function createIngestQueue(
  handler: IngestHandler,
  options: {
    batchSize?: number;
    concurrency?: number;
    maxReceives?: number;
    onError?: (err: unknown) => void;
    /** Runs for a message that failed every attempt (what a dead-letter queue's consumer does). */
    onDeadLetter?: (record: SQSRecord) => Promise<void>;
    /** Runs when the queue drains after some work (the embedded default refreshes planner statistics). */
    onIdle?: () => Promise<void>;
    /**
     * How long a failed message stays hidden before its next attempt, by the attempts made so far
     * (the last entry for later ones); the dead-letter consumer waits the same when it fails
     * (the database down), trying {@link DEAD_LETTER_ATTEMPTS} times. @default no wait
     */
    redeliveryDelaysMs?: readonly number[];
  } = {},
): IngestQueue {
  const delays = options.redeliveryDelaysMs ?? [];
  const delayAfter = (attempts: number): number =>
    delays.length === 0 ? 0 : delays[Math.min(attempts, delays.length) - 1]!;
  const timers = new Set<NodeJS.Timeout>();
  /** Runs `then` after `ms`; idle() waits for it, the batches running do not count it. */
  const later = (ms: number, then: () => void) => {
    if (stopped) return;
    const timer = setTimeout(() => {
      timers.delete(timer);
      then();
      settleIfIdle();
    }, ms).unref();
    timers.add(timer);
  };
  const batchSize = options.batchSize ?? 4;
  const concurrency = options.concurrency ?? 2;
  const maxReceives = options.maxReceives ?? 3;
  const pending: Item[] = [];
  /** The work of each message waiting its first turn (one message per work). */
  const waitingFirst = new Set<string>();
  const deadLetters: SQSRecord[] = [];
  let running = 0;
  let inFlight = 0;
  /** Failed messages waiting out their delay: not visible, as SQS counts them. */
  let hidden = 0;
  let stopped = false;
  let waiters: (() => void)[] = [];

  let processedSinceIdle = 0;
  let idleHookRunning: Promise<void> | null = null;
  const settleIfIdle = () => {
    if (running !== 0 || pending.length !== 0 || timers.size !== 0) return;
    if (processedSinceIdle > 0 && options.onIdle && !idleHookRunning) {
      processedSinceIdle = 0;
      // Waiters resolve after the hook, so that what they read reflects it.
      idleHookRunning = options
        .onIdle()
        .catch((err: unknown) => options.onError?.(err))
        .finally(() => {
          idleHookRunning = null;
          settleIfIdle();
        });
      return;
    }
    if (idleHookRunning) return;
    const w = waiters;
    waiters = [];
    w.forEach((resolve) => resolve());
  };

  const consumeDeadLetter = (record: SQSRecord, attempt: number) => {
    if (!options.onDeadLetter || stopped) return;
    // Counted as running, so that idle() waits for the document to be marked failed.
    running += 1;
    options
      .onDeadLetter(record)
      .catch((err: unknown) => {
        options.onError?.(err);
        // Marking the document failed needs the database: try again once it may be back.
        if (attempt < DEAD_LETTER_ATTEMPTS && delays.length > 0)
          later(delayAfter(attempt), () => consumeDeadLetter(record, attempt + 1));
      })
      .finally(() => {
        running -= 1;
        settleIfIdle();
      });
  };
  const deadLetter = (record: SQSRecord) => {
    deadLetters.push(record);
    consumeDeadLetter(record, 1);
  };
  /** A failed message: attempted again after its delay, or dead-lettered after the last. */
  const failed = (item: Item) => {
    const receives = item.receives + 1;
    if (receives >= maxReceives) return deadLetter(receivedBy(item));
    const ms = delayAfter(receives);
    if (ms === 0) return void pending.push({ ...item, receives });
    // A stopped queue drops it, as it drops what is pending: the next start announces it again.
    if (stopped) return;
    hidden += 1;
    later(ms, () => {
      hidden -= 1;
      if (stopped) return;
      pending.push({ ...item, receives });
      pump();
    });
  };

  const pump = () => {
    while (!stopped && running < concurrency && pending.length > 0) {
      const batch = pending.splice(0, batchSize);
      for (const item of batch)
        if (item.receives === 0 && item.work) waitingFirst.delete(item.work);
      running += 1;
      inFlight += batch.length;
      processedSinceIdle += batch.length;
      const event: SQSEvent = { Records: batch.map((b) => b.record) };
      handler(event, lambdaContext('groundwork-ingest'))
        .then((response) => {
          const failures = new Set(
            (response?.batchItemFailures ?? []).map((f) => f.itemIdentifier),
          );
          for (const item of batch) if (failures.has(item.record.messageId)) failed(item);
        })
        .catch((err: unknown) => {
          options.onError?.(err);
          for (const item of batch) failed(item);
        })
        .finally(() => {
          running -= 1;
          inFlight -= batch.length;
          pump();
          settleIfIdle();
        });
    }
  };

  return {
    push(notification) {
      const body = JSON.stringify(notification);
      const work = sameWorkKey(body);
      if (work !== null) {
        if (waitingFirst.has(work)) return;
        waitingFirst.add(work);
      }
      const messageId = randomUUID();
      pending.push({
        receives: 0,
        work,
        record: {
          messageId,
          receiptHandle: messageId,
          body,
          attributes: {
            ApproximateReceiveCount: '1',
            SentTimestamp: String(Date.now()),
            SenderId: 's3.amazonaws.com',
            ApproximateFirstReceiveTimestamp: String(Date.now()),
          },
          messageAttributes: {},
          md5OfBody: '',
          eventSource: 'aws:sqs',
          eventSourceARN: 'arn:aws:sqs:local:000000000000:groundwork-ingest',
          awsRegion: 'local',
        },
      });
      pump();
    },
    idle() {
      if (stopped) return Promise.resolve();
      return new Promise((resolve) => {
        waiters.push(resolve);
        settleIfIdle();
      });
    },
    deadLetters,
    stats: () => ({
      pending: pending.length,
      inFlight: inFlight + hidden,
      deadLetters: deadLetters.length,
    }),
    async stop() {
      stopped = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      hidden = 0;
      await new Promise<void>((resolve) => {
        const check = () => (running === 0 ? resolve() : setTimeout(check, 20));
        check();
      });
      // Nothing more will run: whoever waits for the queue to drain is released.
      const w = waiters;
      waiters = [];
      w.forEach((resolve) => resolve());
    },
  };
}
