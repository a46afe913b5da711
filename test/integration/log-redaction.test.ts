/**
 * Logs never carry what a user sent: an error from either database, logged through the
 * product's logger (wrapped as the core wraps it), keeps its SQLSTATE and statement but not the
 * statement's parameters, the offending row or the value quoted in the message.
 */
import { createLogger } from '../../lambdas/adapters/observability/powertools';
import type { Database } from '../../lambdas/adapters/postgres/database';
import { UnavailableError } from '../../lambdas/core/errors';
import { ENGINES, openTestDatabase } from '../support/databases';

const SECRET = 'what-is-the-merger-codename-zebra';

async function failure(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (err) {
    return err;
  }
  throw new Error('expected the statement to fail');
}

/** Everything the logger writes while `fn` runs. */
function captured(fn: () => void): string {
  const lines: string[] = [];
  const spies = [process.stdout, process.stderr].map((stream) =>
    jest.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    }),
  );
  try {
    fn();
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
  return lines.join('');
}

describe.each(ENGINES)('log redaction on %s', (engine) => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase(engine, { migrate: false });
    await db.query('CREATE TABLE redaction_probe (title text PRIMARY KEY)');
    await db.query('INSERT INTO redaction_probe (title) VALUES ($1)', [SECRET]);
  });
  afterAll(async () => {
    await db.query('DROP TABLE redaction_probe');
    await db.close();
  });

  const logger = () => createLogger({ serviceName: 'redaction-test', logLevel: 'INFO' });

  it('keeps the SQLSTATE but not the value of a data exception or its parameters', async () => {
    const err = await failure(() => db.query('SELECT $1::integer AS n', [SECRET]));
    expect((err as { code?: string }).code).toBe('22P02');
    const wrapped = new UnavailableError('retrieval failed', err);
    const out = captured(() => logger().error('request failed', { err: wrapped }));
    expect(out).toContain('22P02');
    expect(out).toContain('invalid input syntax for type integer');
    expect(out).not.toContain(SECRET);
  });

  it('keeps the constraint but not the row of a unique violation', async () => {
    const err = await failure(() =>
      db.query('INSERT INTO redaction_probe (title) VALUES ($1)', [SECRET]),
    );
    expect((err as { code?: string }).code).toBe('23505');
    const out = captured(() => logger().error('request failed', { err }));
    expect(out).toContain('redaction_probe_pkey');
    expect(out).not.toContain(SECRET);
  });

  it('logs errors unchanged where they carry no data', () => {
    const out = captured(() =>
      logger().error('request failed', { err: new Error('connection refused') }),
    );
    expect(out).toContain('connection refused');
  });
});
