import type { Database } from '../postgres/database';
import { lazyDatabase, parseDatabaseSecret } from './database-from-secret';

/** A pool whose connections log in with `password`; the server accepts only `current.password`. */
function fakePool(password: string, server: { password: string }, closed: string[]): Database {
  const check = () => {
    if (password !== server.password)
      throw Object.assign(new Error(`password authentication failed`), { code: '28P01' });
  };
  return {
    kind: 'postgres',
    query: <T>() => {
      check();
      return Promise.resolve({ rows: [{ password } as T], rowCount: 1 });
    },
    exec: () => Promise.resolve(check()),
    call: <T>() => {
      check();
      return Promise.resolve({ rows: [{ password } as T], rowCount: 1 });
    },
    transaction: (fn) => {
      check();
      return fn({
        query: <T>() => Promise.resolve({ rows: [] as T[], rowCount: 0 }),
        exec: () => Promise.resolve(),
      });
    },
    close: () => {
      closed.push(password);
      return Promise.resolve();
    },
  };
}

describe('lazyDatabase', () => {
  it('opens on first use, once', async () => {
    const server = { password: 'a' };
    let opens = 0;
    const db = lazyDatabase(() => {
      opens += 1;
      return Promise.resolve(fakePool(server.password, server, []));
    });
    expect(opens).toBe(0);
    await db.query('SELECT 1');
    await db.exec('SELECT 1');
    expect(opens).toBe(1);
  });

  it('reads the credentials again when the login is refused after a rotation, and retries once', async () => {
    const server = { password: 'a' };
    const closed: string[] = [];
    let opens = 0;
    const db = lazyDatabase(() => {
      opens += 1;
      return Promise.resolve(fakePool(server.password, server, closed));
    });
    await db.query('SELECT 1');
    server.password = 'b'; // rotated
    const { rows } = await db.query<{ password: string }>('SELECT 1');
    expect(rows[0]?.password).toBe('b');
    expect(opens).toBe(2);
    await new Promise((r) => setImmediate(r));
    expect(closed).toEqual(['a']);
    await db.transaction(() => Promise.resolve(1));
    expect(opens).toBe(2);
  });

  it('does not retry other errors, and retries a failed open on the next call', async () => {
    let opens = 0;
    const db = lazyDatabase(() => {
      opens += 1;
      if (opens === 1) return Promise.reject(new Error('connect ETIMEDOUT'));
      return Promise.resolve({
        kind: 'postgres',
        query: () => Promise.reject(Object.assign(new Error('syntax'), { code: '42601' })),
        exec: () => Promise.resolve(),
        transaction: () => Promise.resolve(undefined),
        close: () => Promise.resolve(),
      } as unknown as Database);
    });
    await expect(db.query('SELECT 1')).rejects.toThrow('ETIMEDOUT');
    await expect(db.query('SELEC 1')).rejects.toThrow('syntax');
    expect(opens).toBe(2);
  });

  it('gives up after one retry when the new credentials are refused too', async () => {
    const server = { password: 'never' };
    let opens = 0;
    const db = lazyDatabase(() => {
      opens += 1;
      return Promise.resolve(fakePool(`p${opens}`, server, []));
    });
    await expect(db.query('SELECT 1')).rejects.toMatchObject({ code: '28P01' });
    expect(opens).toBe(2);
  });
});

describe('parseDatabaseSecret', () => {
  const arn = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:app-db';

  it('reads the shape RDS and its rotation keep', () => {
    expect(
      parseDatabaseSecret(
        JSON.stringify({ username: 'app', password: 's3cret', host: 'proxy', port: '5432' }),
        arn,
      ),
    ).toEqual({ username: 'app', password: 's3cret', host: 'proxy', port: 5432 });
  });

  it('names the secret and the field at fault, never a value', () => {
    const parse = () => parseDatabaseSecret(JSON.stringify({ username: 'app', password: 42 }), arn);
    expect(parse).toThrow(`The database secret ${arn} is malformed`);
    expect(parse).toThrow(/password/);
    expect(parse).toThrow(/expected string/);
    expect(parse).not.toThrow(/\b42\b/);
    expect(() => parseDatabaseSecret('not json', arn)).toThrow(`${arn} holds no JSON object`);
    expect(() => parseDatabaseSecret(undefined, arn)).toThrow(/holds no JSON object/);
  });
});
