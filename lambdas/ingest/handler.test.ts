import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { SQSRecord } from 'aws-lambda';
import type { Ingestion } from '../core/ingestion/ingest';
import { lambdaContext } from '../../local/ingest-queue';
import { makeHandler, splitRedeliveries } from './handler';

process.env.POWERTOOLS_METRICS_DISABLED = 'true';

const QUEUE = 'arn:aws:sqs:eu-west-1:111122223333:ingest';
const DEAD_LETTERS = 'arn:aws:sqs:eu-west-1:111122223333:ingest-dlq';

function record(key: string, receives: number, source = QUEUE): SQSRecord {
  return {
    messageId: key,
    eventSourceARN: source,
    attributes: { ApproximateReceiveCount: String(receives) },
    body: JSON.stringify({
      Records: [
        { eventName: 'ObjectCreated:Put', s3: { bucket: { name: 'docs' }, object: { key } } },
      ],
    }),
  } as unknown as SQSRecord;
}

/** An ingestion that logs when each sync starts and ends, and takes a tick in between. */
function recordingIngestion(events: string[]): Ingestion {
  return {
    async syncObject(_bucket, key) {
      events.push(`start ${key}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
      events.push(`end ${key}`);
      return { action: 'unchanged', documentId: key };
    },
  };
}

describe('splitRedeliveries', () => {
  it('puts records delivered again apart from first deliveries and dead letters', () => {
    const { first, again } = splitRedeliveries(
      [record('a', 1), record('b', 2), record('c', 1), record('d', 3, DEAD_LETTERS)],
      DEAD_LETTERS,
    );
    expect(first.map((r) => r.messageId)).toEqual(['a', 'c', 'd']);
    expect(again.map((r) => r.messageId)).toEqual(['b']);
  });

  it('counts a record without a receive count as a first delivery', () => {
    const bare = { ...record('a', 1), attributes: {} } as unknown as SQSRecord;
    expect(splitRedeliveries([bare], undefined).first).toHaveLength(1);
  });
});

describe('the ingest handler', () => {
  it('runs first deliveries together, then each record delivered again alone', async () => {
    const events: string[] = [];
    const handler = makeHandler({
      ingestion: recordingIngestion(events),
      logger: new Logger({ logLevel: 'SILENT' }),
      metrics: new Metrics(),
    });
    const res = await handler(
      {
        Records: [
          record('again-1', 2),
          record('new-1', 1),
          record('again-2', 3),
          record('new-2', 1),
        ],
      },
      lambdaContext('ingest'),
    );
    expect(res.batchItemFailures).toEqual([]);
    expect(events).toEqual([
      'start new-1',
      'start new-2',
      'end new-1',
      'end new-2',
      'start again-1',
      'end again-1',
      'start again-2',
      'end again-2',
    ]);
  });

  it('reports the failures of both groups', async () => {
    const handler = makeHandler({
      ingestion: {
        async syncObject(_bucket, key) {
          if (key.startsWith('bad')) throw new Error('database down');
          return { action: 'unchanged', documentId: key };
        },
      },
      logger: new Logger({ logLevel: 'SILENT' }),
      metrics: new Metrics(),
    });
    const res = await handler(
      { Records: [record('bad-new', 1), record('ok', 1), record('bad-again', 2)] },
      lambdaContext('ingest'),
    );
    expect(res.batchItemFailures.map((f) => f.itemIdentifier).sort()).toEqual([
      'bad-again',
      'bad-new',
    ]);
  });
});
