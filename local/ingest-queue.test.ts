/**
 * The local ingest queue's redeliveries: a failed message waits out its delay before the next
 * attempt, as SQS's visibility timeout makes it, without holding up other messages; idle() waits
 * for it; the dead-letter consumer is tried again when it fails.
 */
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { createIngestQueue, sameWorkKey } from './ingest-queue';
import { localS3Event } from './stack';

/** A handler that fails each message (by its body's `name`) as often as `failures` says. */
function flakyHandler(failures: Record<string, number>) {
  const calls: { name: string; at: number }[] = [];
  const handler = (event: SQSEvent): Promise<SQSBatchResponse> => {
    const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
    for (const r of event.Records) {
      const { name } = JSON.parse(r.body) as { name: string };
      calls.push({ name, at: Date.now() });
      if ((failures[name] ?? 0) > 0) {
        failures[name] = (failures[name] ?? 0) - 1;
        batchItemFailures.push({ itemIdentifier: r.messageId });
      }
    }
    return Promise.resolve({ batchItemFailures });
  };
  return { handler, calls };
}

describe('the local ingest queue', () => {
  it('attempts a failed message again after its delay, and idle() waits for it', async () => {
    const { handler, calls } = flakyHandler({ a: 2 });
    const queue = createIngestQueue(handler, { redeliveryDelaysMs: [60, 120] });
    queue.push({ name: 'a' });
    await new Promise((resolve) => setTimeout(resolve, 20));
    // Between attempts the message is hidden, counted in flight as SQS counts it.
    expect(queue.stats()).toEqual({ pending: 0, inFlight: 1, deadLetters: 0 });
    await queue.idle();
    expect(calls.map((c) => c.name)).toEqual(['a', 'a', 'a']);
    expect(calls[1]!.at - calls[0]!.at).toBeGreaterThanOrEqual(55);
    expect(calls[2]!.at - calls[1]!.at).toBeGreaterThanOrEqual(115);
    expect(queue.deadLetters).toHaveLength(0);
    await queue.stop();
  });

  it('does not hold other messages up while one waits', async () => {
    const { handler, calls } = flakyHandler({ a: 1 });
    const queue = createIngestQueue(handler, {
      concurrency: 1,
      batchSize: 1,
      redeliveryDelaysMs: [200],
    });
    queue.push({ name: 'a' });
    queue.push({ name: 'b' });
    await queue.idle();
    expect(calls.map((c) => c.name)).toEqual(['a', 'b', 'a']);
    expect(calls[1]!.at - calls[0]!.at).toBeLessThan(150);
    await queue.stop();
  });

  it('dead-letters after the last attempt, and tries the consumer again while it fails', async () => {
    const { handler, calls } = flakyHandler({ a: 5 });
    const consumed: SQSRecord[] = [];
    let consumerFailures = 2;
    const queue = createIngestQueue(handler, {
      maxReceives: 2,
      redeliveryDelaysMs: [30],
      onDeadLetter: (record) => {
        consumed.push(record);
        if (consumerFailures-- > 0) return Promise.reject(new Error('database down'));
        return Promise.resolve();
      },
    });
    queue.push({ name: 'a' });
    await queue.idle();
    expect(calls).toHaveLength(2);
    expect(queue.deadLetters).toHaveLength(1);
    expect(queue.deadLetters[0]!.attributes.ApproximateReceiveCount).toBe('2');
    // Failed twice (the database down), the third run marked the document failed.
    expect(consumed).toHaveLength(3);
    await queue.stop();
  });

  it('sets no timer for a batch that fails while it stops, and releases idle() at stop', async () => {
    const releases: (() => void)[] = [];
    let calls = 0;
    const queue = createIngestQueue(
      (event) => {
        calls += 1;
        // Each attempt fails once stop() has begun, as in a database outage.
        return new Promise<SQSBatchResponse>((resolve) => {
          releases.push(() =>
            resolve({
              batchItemFailures: event.Records.map((r) => ({ itemIdentifier: r.messageId })),
            }),
          );
        });
      },
      { redeliveryDelaysMs: [5_000] },
    );
    queue.push({ name: 'a' });
    queue.push({ name: 'b' });
    const waiting = queue.idle();
    const stopping = queue.stop();
    for (const release of releases) release();
    await stopping;
    // No redelivery is waiting: nothing is in flight, and idle() is released at once.
    expect(queue.stats()).toEqual({ pending: 0, inFlight: 0, deadLetters: 0 });
    const released = await Promise.race([
      waiting.then(() => 'released'),
      new Promise((resolve) => setTimeout(() => resolve('still waiting'), 200)),
    ]);
    expect(released).toBe('released');
    await queue.idle();
    expect(calls).toBe(2);
  });

  it('attempts again at once without delays, and stop() drops a waiting message', async () => {
    const immediate = flakyHandler({ a: 1 });
    const queue = createIngestQueue(immediate.handler);
    queue.push({ name: 'a' });
    await queue.idle();
    expect(immediate.calls.map((c) => c.name)).toEqual(['a', 'a']);
    await queue.stop();

    const waiting = flakyHandler({ a: 1 });
    const stopped = createIngestQueue(waiting.handler, { redeliveryDelaysMs: [10_000] });
    stopped.push({ name: 'a' });
    await new Promise((resolve) => setTimeout(resolve, 20));
    await stopped.stop();
    await stopped.idle(); // nothing is left to wait for
    expect(waiting.calls).toHaveLength(1);
  });

  it('drops a notification that repeats one still waiting its first turn, and nothing else', async () => {
    const seen: string[] = [];
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => {
      for (const r of event.Records) seen.push(r.body);
      await held;
      return { batchItemFailures: [] };
    };
    const queue = createIngestQueue(handler, { batchSize: 1, concurrency: 1 });
    const created = localS3Event('docs', 'tenants/t/a.md', true);
    queue.push(created); // taken at once, held
    queue.push(created); // waits its first turn
    queue.push(created); // the same work as the one waiting: dropped
    queue.push(localS3Event('docs', 'tenants/t/a.md', false)); // another event: kept
    queue.push(localS3Event('docs', 'tenants/t/b.md', true)); // another object: kept
    queue.push({ name: 'not an S3 notification' });
    queue.push({ name: 'not an S3 notification' }); // never merged
    expect(queue.stats()).toEqual({ pending: 5, inFlight: 1, deadLetters: 0 });
    release();
    await queue.idle();
    expect(seen).toHaveLength(6);
    // Once the waiting one has had its turn, the same notification is queued again.
    queue.push(created);
    await queue.idle();
    expect(seen).toHaveLength(7);
    await queue.stop();
  });

  it('reads the work of an S3 notification, and none from anything else', () => {
    expect(sameWorkKey(JSON.stringify(localS3Event('docs', 'a b.md', true)))).toBe(
      '["ObjectCreated:Put","docs","a+b.md"]',
    );
    expect(sameWorkKey('{"name":"a"}')).toBeNull();
    expect(sameWorkKey('not json')).toBeNull();
    expect(sameWorkKey('{"Records":[{},{}]}')).toBeNull();
    expect(sameWorkKey('{"Records":[null]}')).toBeNull();
  });
});
