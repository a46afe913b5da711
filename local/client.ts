/**
 * How CLI commands reach the API: through a running `groundwork start` when there is one (its
 * URL is in the data folder's lock), otherwise through an in-process stack and server started
 * for the one command. Either way the request goes over HTTP with a real token.
 */
import { createLocalIssuer } from '../lambdas/adapters/auth/local-issuer';
import { developerToken, localKeyDir } from './commands/token';
import { startLocalApi } from './api';
import { stackOptionsFromEnv, type LocalEnv } from './config';
import { acquireLock, readLock } from './data-dir-lock';
import { localS3Credentials, type S3Credentials } from './s3-gate';
import { startLocalStack, type LocalStack } from './stack';

export interface ApiSession {
  readonly url: string;
  /**
   * A development token for the given user and tenant (a tenant admin's with `admin`), on the
   * developer plan (commands/token.ts).
   */
  token(userId: string, tenantId: string, options?: { admin?: boolean }): string;
  /** The in-process stack, when this command started one (no server was running). */
  readonly stack: LocalStack | null;
  /** The S3 endpoint of the stack that serves this command. */
  readonly s3Endpoint: string;
  /** The credentials that S3 endpoint accepts. */
  readonly s3Credentials: S3Credentials;
  close(): Promise<void>;
}

export async function openApiSession(
  env: LocalEnv & { dataDir: string },
  command: string,
): Promise<ApiSession> {
  const running = await readLock(env.dataDir);
  if (running?.httpUrl && running.s3Endpoint) {
    const issuer = await createLocalIssuer({ keyDir: localKeyDir(env.dataDir) });
    return {
      url: running.httpUrl,
      token: (userId, tenantId, options) => developerToken(issuer, userId, tenantId, options),
      stack: null,
      s3Endpoint: running.s3Endpoint,
      s3Credentials: await localS3Credentials(localKeyDir(env.dataDir)),
      close: async () => undefined,
    };
  }
  const lock = await acquireLock(env.dataDir, { command });
  try {
    const stack = await startLocalStack(await stackOptionsFromEnv(env));
    const api = await startLocalApi(stack, { dataDir: env.dataDir, port: 0 });
    return {
      url: api.server.url,
      token: (userId, tenantId, options) => developerToken(api.issuer, userId, tenantId, options),
      stack,
      s3Endpoint: stack.s3.endpoint,
      s3Credentials: stack.s3.credentials,
      async close() {
        await api.close();
        await stack.stop();
        await lock.release();
      },
    };
  } catch (err) {
    await lock.release();
    throw err;
  }
}

/**
 * What to say when the server does not answer at all: fetch's own "fetch failed" names neither
 * the server nor the cause (its `cause`, e.g. ECONNREFUSED when `groundwork start` was stopped).
 */
export function unreachable(url: string, err: unknown): string {
  const cause = (err as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  const why =
    typeof cause?.code === 'string'
      ? cause.code
      : typeof cause?.message === 'string'
        ? cause.message
        : err instanceof Error
          ? err.message
          : String(err);
  return `the server at ${url} did not answer (${why}); if \`groundwork start\` was stopped, start it again or stop it for good, then run the command again`;
}

/** Calls the API; throws with the error body's message on a non-2xx answer. */
export async function callApi<T>(
  session: ApiSession,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<T> {
  const res = await fetch(session.url + path, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  }).catch((err: unknown) => {
    throw new Error(unreachable(session.url, err));
  });
  const json = (await res.json()) as T & { error?: { code: string; message: string } };
  if (!res.ok)
    throw new Error(
      `${res.status} ${json.error?.code ?? ''}: ${json.error?.message ?? 'request failed'}`,
    );
  return json;
}
