/**
 * The Lambdas' writer and reads: one pool without `DB_READ_HOST`; with it, the reads connect to
 * that host and the writer to `DB_HOST`, with the same secret (read from a fake Secrets Manager;
 * the hosts are `.invalid`, so each connection fails naming the host it tried).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { databasesFromEnv } from './lambda-wiring';

const env = {
  DB_SECRET_ARN: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:app',
  AWS_REGION: 'us-east-1',
  DB_NAME: 'groundwork',
  DB_HOST: 'writer.invalid',
};

const ENV_KEYS = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_ENDPOINT_URL_SECRETS_MANAGER'];
const saved = Object.fromEntries(ENV_KEYS.map((k) => [k, process.env[k]]));
let server: Server;

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.setHeader('content-type', 'application/x-amz-json-1.1');
      res.end(
        JSON.stringify({
          ARN: env.DB_SECRET_ARN,
          Name: 'app',
          SecretString: JSON.stringify({
            username: 'groundwork_app',
            password: 'pw',
            host: 'secret-host.invalid',
          }),
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  Object.assign(process.env, {
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    AWS_ENDPOINT_URL_SECRETS_MANAGER: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
  });
});

afterAll(async () => {
  for (const key of ENV_KEYS) {
    if (saved[key] === undefined) delete process.env[key];
    else process.env[key] = saved[key];
  }
  await new Promise((resolve) => server.close(resolve));
});

/** The host a connection attempt failed on (from the DNS error of the `.invalid` name). */
async function hostTried(run: () => Promise<unknown>): Promise<string> {
  const err = await run().then(
    () => new Error('connected'),
    (e: unknown) => e,
  );
  const text = [err, (err as { cause?: unknown }).cause]
    .map((e) => (e instanceof Error ? e.message : String(e)))
    .join(' ');
  return /([\w-]+\.invalid)/.exec(text)?.[1] ?? text;
}

describe('databasesFromEnv', () => {
  it('reads through the writer when no read host is set: one pool', async () => {
    const { writer, reads } = databasesFromEnv(env);
    expect(reads).toBe(writer);
    expect(await hostTried(() => reads.query('SELECT 1'))).toBe('writer.invalid');
  });

  it('connects the reads to DB_READ_HOST and the writer to DB_HOST', async () => {
    const { writer, reads } = databasesFromEnv({ ...env, DB_READ_HOST: 'reader.invalid' });
    expect(reads).not.toBe(writer);
    expect(await hostTried(() => reads.query('SELECT 1'))).toBe('reader.invalid');
    expect(await hostTried(() => writer.query('SELECT 1'))).toBe('writer.invalid');
  });
});
