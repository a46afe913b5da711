/**
 * IngestRecovery: nothing stranded in AWS (docs/ingestion.md). The ingest function also consumes
 * the ingest queue's dead-letter queue (each document a dead message names is marked `failed`
 * with the reason) and runs, on a schedule, the lease sweep that processes again the documents
 * left `processing` past their lease by a worker that timed out or was killed. The same scheduled
 * invocation then steps an embedding model switch, if one is in progress, within its time
 * (lambdas/ingest/handler.ts; docs/decisions/0148-switching-embedding-models.md).
 *
 * A sweep that fails is not repeated: the next one retries. EventBridge invokes the function
 * asynchronously, so neither the rule nor the function's asynchronous invocation settings retry
 * it, and a sweep event not run before the next one is due is dropped. Those settings apply to
 * asynchronous invocations alone, and the sweep is the function's only one: the queues' event
 * sources invoke it synchronously and retry through the queues.
 */
import { Duration } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';

export interface IngestRecoveryProps {
  /** The ingest function (lambdas/ingest): it handles dead letters and the sweep event too. */
  readonly ingestFunction: lambda.Function;
  /** The ingest queue's dead-letter queue (DocumentSource.deadLetterQueue). */
  readonly deadLetterQueue: sqs.IQueue;
  /**
   * How often the lease sweep runs; a document is retried at most this long after its lease
   * (15 minutes) ran out. @default Duration.minutes(5)
   */
  readonly sweepInterval?: Duration;
}

export class IngestRecovery extends Construct {
  readonly sweepRule: events.Rule;

  constructor(scope: Construct, id: string, props: IngestRecoveryProps) {
    super(scope, id);
    const fn = props.ingestFunction;
    fn.addEnvironment('DEAD_LETTER_QUEUE_ARN', props.deadLetterQueue.queueArn);
    fn.addEventSource(
      new SqsEventSource(props.deadLetterQueue, {
        batchSize: 10,
        reportBatchItemFailures: true,
        maxConcurrency: 2,
      }),
    );
    const interval = props.sweepInterval ?? Duration.minutes(5);
    fn.configureAsyncInvoke({
      retryAttempts: 0,
      // Lambda keeps an asynchronous event at most 6 hours (a throttled one is retried meanwhile).
      maxEventAge: Duration.seconds(Math.min(interval.toSeconds(), Duration.hours(6).toSeconds())),
    });
    this.sweepRule = new events.Rule(this, 'LeaseSweep', {
      description: 'Processes again the documents left processing past their lease',
      schedule: events.Schedule.rate(interval),
      targets: [
        new targets.LambdaFunction(fn, {
          event: events.RuleTargetInput.fromObject({ groundwork: 'lease-sweep' }),
          retryAttempts: 0,
        }),
      ],
    });
  }
}
