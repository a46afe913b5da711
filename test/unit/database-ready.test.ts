/**
 * openWhenReady: the migration's wait for a database that does not accept connections yet (a new
 * cluster, a proxy whose target is not available, an instance resuming from 0 ACUs).
 */
import { isDatabaseNotReady, openWhenReady } from '../../lambdas/adapters/aws/database-from-secret';
import type { Database } from '../../lambdas/adapters/postgres/database';
import { createPgDatabase } from '../../lambdas/adapters/postgres/pg-database';
import { TEST_DATABASE_URL } from '../support/databases';

const withCode = (code: string, message = code) => Object.assign(new Error(message), { code });

/** A database whose first `failures` connection attempts fail with the given errors. */
function flakyOpen(failures: Error[]) {
  const opened: { closed: boolean }[] = [];
  const open = (): Promise<Database> => {
    const state = { closed: false };
    opened.push(state);
    const failure = failures.shift();
    return Promise.resolve({
      kind: 'postgres',
      query: () =>
        failure ? Promise.reject(failure) : Promise.resolve({ rows: [{ '?column?': 1 }] }),
      exec: () => Promise.resolve(),
      transaction: () => Promise.reject(new Error('unused')),
      close: () => {
        state.closed = true;
        return Promise.resolve();
      },
    } as unknown as Database);
  };
  return { open, opened };
}

function fakeClock() {
  let time = 0;
  const pauses: number[] = [];
  return {
    now: () => time,
    sleep: (ms: number) => {
      pauses.push(ms);
      time += ms;
      return Promise.resolve();
    },
    pauses,
  };
}

describe('openWhenReady', () => {
  it('retries refused, timed-out and starting-up connections with a doubling pause, closing each failed pool', async () => {
    const { open, opened } = flakyOpen([
      withCode('ECONNREFUSED'),
      new Error('timeout expired'),
      withCode('57P03', 'the database system is starting up'),
    ]);
    const clock = fakeClock();
    const retries: number[] = [];
    const db = await openWhenReady(open, {
      deadline: 60_000,
      ...clock,
      onRetry: (attempt) => retries.push(attempt),
    });
    expect(await db.query('SELECT 1')).toBeDefined();
    expect(clock.pauses).toEqual([1000, 2000, 4000]);
    expect(retries).toEqual([1, 2, 3]);
    expect(opened.map((o) => o.closed)).toEqual([true, true, true, false]);
  });

  it('fails at once on a refused login or any other error', async () => {
    const clock = fakeClock();
    const { open } = flakyOpen([withCode('28P01', 'password authentication failed')]);
    await expect(openWhenReady(open, { deadline: 60_000, ...clock })).rejects.toThrow(
      'password authentication failed',
    );
    expect(clock.pauses).toEqual([]);
  });

  it('gives up with the last error when the next pause would pass the deadline', async () => {
    const clock = fakeClock();
    const { open } = flakyOpen(Array.from({ length: 20 }, () => withCode('ECONNREFUSED')));
    await expect(openWhenReady(open, { deadline: 10_000, ...clock })).rejects.toThrow(
      'ECONNREFUSED',
    );
    expect(clock.pauses).toEqual([1000, 2000, 4000]);
  });

  it('tells a database that is not ready from one that refused the request', () => {
    expect(isDatabaseNotReady(withCode('ETIMEDOUT'))).toBe(true);
    expect(isDatabaseNotReady(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isDatabaseNotReady(withCode('42P01'))).toBe(false);
    expect(isDatabaseNotReady(new Error('boom'))).toBe(false);
  });
});

describe('openWhenReady with real connections', () => {
  const clock = () => ({ now: () => 0, sleep: () => Promise.resolve() });

  it('waits through a refused port, as for a cluster not listening yet', async () => {
    // Port 1 on the loopback refuses at once: what a proxy or cluster not yet listening does.
    const refused = () => Promise.resolve(createPgDatabase({ host: '127.0.0.1', port: 1, max: 1 }));
    let attempts = 0;
    await expect(
      openWhenReady(refused, {
        deadline: 3000,
        ...clock(),
        onRetry: (_attempt, err) => {
          attempts++;
          expect(isDatabaseNotReady(err)).toBe(true);
        },
      }),
    ).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect(attempts).toBeGreaterThan(0);
  });

  it('does not retry what a running PostgreSQL refuses (an unknown database)', async () => {
    const url = new URL(TEST_DATABASE_URL);
    url.pathname = '/groundwork_no_such_database';
    let attempts = 0;
    await expect(
      openWhenReady(
        () => Promise.resolve(createPgDatabase({ connectionString: url.href, max: 1 })),
        {
          deadline: 60_000,
          ...clock(),
          onRetry: () => attempts++,
        },
      ),
    ).rejects.toMatchObject({ code: '3D000' });
    expect(attempts).toBe(0);
  });

  it('opens a running PostgreSQL at once', async () => {
    const db = await openWhenReady(
      () => Promise.resolve(createPgDatabase({ connectionString: TEST_DATABASE_URL, max: 1 })),
      { deadline: 0, ...clock() },
    );
    await db.close();
  });
});
