/**
 * `groundwork start` (what `npm start` runs): the embedded default in one process. PGlite with
 * pgvector, the migrations, the local embedding model, the S3 emulator wired to the ingest
 * handler, and the API served by the same handlers as the Lambdas. On first start it
 * indexes the sample handbook into the tenant `demo`, then prints a token and a curl command.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startLocalApi } from '../api';
import type { ApiSession } from '../client';
import { DEFAULT_DATA_DIR, stackOptionsFromEnv, type LocalEnv } from '../config';
import { acquireLock } from '../data-dir-lock';
import { startLocalStack } from '../stack';
import { formatReport, ingestFolder } from './ingest';
import { formatSwitchStatus, printSwitchProgress } from './reembed';
import { developerToken } from './token';

export const SAMPLE_CORPUS = path.join(__dirname, '..', '..', 'samples', 'handbook');
export const DEMO_TENANT = 'demo';
export const DEMO_USER = 'demo-user';

export async function startCommand(
  args: string[],
  env: LocalEnv & { dataDir: string },
): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { 'no-samples': { type: 'boolean', default: false } },
  });
  const lock = await acquireLock(env.dataDir, { command: 'start' });
  const stack = await startLocalStack({
    ...(await stackOptionsFromEnv(env)),
    s3Port: env.GROUNDWORK_S3_PORT,
  });
  const api = await startLocalApi(stack, {
    dataDir: env.dataDir,
    port: env.PORT,
    lexybrainRagEnabled: env.LEXYBRAIN_RAG_ENABLED,
  }).catch(async (err: unknown) => {
    await stack.stop();
    await lock.release();
    throw err;
  });
  await lock.update({ httpUrl: api.server.url, s3Endpoint: stack.s3.endpoint });

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    console.error('\nstopping...');
    await api.close();
    await stack.stop();
    await lock.release();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());

  if (!values['no-samples']) {
    const session: ApiSession = {
      url: api.server.url,
      token: (userId, tenantId) => developerToken(api.issuer, userId, tenantId),
      stack,
      s3Endpoint: stack.s3.endpoint,
      s3Credentials: stack.s3.credentials,
      close: async () => undefined,
    };
    const report = await ingestFolder(session, stack.s3.bucket, SAMPLE_CORPUS, DEMO_TENANT, {
      prefix: 'samples',
    });
    console.log(`sample handbook (tenant "${DEMO_TENANT}"): ${formatReport(report)}`);
  }

  const switching = formatSwitchStatus(await stack.modelSwitch.status());
  const token = developerToken(api.issuer, DEMO_USER, DEMO_TENANT);
  console.log(`
Groundwork is running (embedded default, data in ${env.dataDir})
  Database     ${databaseLine(env)}
  API          ${api.server.url}
  Playground   ${api.server.url}/   (sign in with any user id and tenant "${DEMO_TENANT}")
  S3 emulator  ${stack.s3.endpoint}  bucket "${stack.s3.bucket}"; objects under tenants/<tenant>/ are indexed
  Embedding    ${switching ?? stack.embedder.modelId}

A development token for user "${DEMO_USER}" in tenant "${DEMO_TENANT}" (valid 12 h):
  export TOKEN=${token}

Try:
  curl -s ${api.server.url}/api/rag/search -H "authorization: Bearer $TOKEN" -H 'content-type: application/json' \\
    -d '{"query_text": "How long do refunds take?", "top_k": 3}'

Index your own folder, in a tenant of its own (in another terminal):
  ${dataDirPrefix(env)}npx groundwork ingest ./my-docs --tenant my-team
  ${dataDirPrefix(env)}npx groundwork ask "<question>" --tenant my-team
Other tokens: ${dataDirPrefix(env)}npx groundwork token --user <id> --tenant <id>
Press Ctrl+C to stop.`);
  if (switching) printSwitchProgress(stack, (line) => console.log(line));
  await new Promise<never>(() => undefined);
  return 0;
}

/**
 * The data folder for the commands of another terminal, when the server's is not the default:
 * they find the running server through it (client.ts).
 */
function dataDirPrefix(env: LocalEnv & { dataDir: string }): string {
  return env.dataDir === path.resolve(DEFAULT_DATA_DIR)
    ? ''
    : `GROUNDWORK_DATA_DIR=${JSON.stringify(env.dataDir)} `;
}

/** Which database serves the API (never the URLs: they carry passwords). */
function databaseLine(env: LocalEnv): string {
  if (!env.GROUNDWORK_DATABASE_URL) return 'PGlite (in-process)';
  return env.GROUNDWORK_DATABASE_READ_URL
    ? 'PostgreSQL (GROUNDWORK_DATABASE_URL); search and retrieval on GROUNDWORK_DATABASE_READ_URL'
    : 'PostgreSQL (GROUNDWORK_DATABASE_URL)';
}
