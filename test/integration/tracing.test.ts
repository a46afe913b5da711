/**
 * X-Ray tracing as the Lambda entries wire it (lambdas/adapters/observability): a handler built
 * by `createHttpHandler` with the Powertools Tracer opens its subsegment, and under it every
 * database statement (PGlite and PostgreSQL), DynamoDB (dynalite), S3 (s3rver), Bedrock (the
 * fake) and Secrets Manager (a fake speaking its JSON protocol) call records one, through the
 * real AWS SDK clients. The trace holds no SQL text and no parameter. Outside Lambda, tracing is
 * off and the X-Ray SDK is not even loaded.
 *
 * The handler runs inside a segment of the X-Ray SDK's own context, as the Lambda runtime's
 * facade segment would be; the segment is never closed, so nothing is sent to a daemon.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import {
  CreateBucketCommand,
  GetObjectCommand,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import type { Context } from 'aws-lambda';
import AWSXRay from 'aws-xray-sdk-core';
import S3rver from 's3rver';
import { readDatabaseSecret } from '../../lambdas/adapters/aws/database-from-secret';
import { createBedrockEmbedder } from '../../lambdas/adapters/embeddings/bedrock-embedder';
import { createBedrockRuntimeClient } from '../../lambdas/adapters/embeddings/bedrock-runtime-client';
import {
  createObservability,
  traceClient,
  type Observability,
} from '../../lambdas/adapters/observability/powertools';
import { traceDatabase } from '../../lambdas/adapters/observability/traced-database';
import { APP_GROUP_ROLE, ensureRequestRole } from '../../lambdas/adapters/postgres/app-role';
import type { Database } from '../../lambdas/adapters/postgres/database';
import * as z from '../../lambdas/core/zod';
import { createHttpHandler, type ApiEvent } from '../../lambdas/http/http-handler';
import { localDynamoClient, startLocalDynamo, type LocalDynamo } from '../../local/dynamodb';
import { localS3Client } from '../../local/stack';
import { ENGINES, openTestDatabase } from '../support/databases';
import { startFakeBedrock, type FakeBedrock } from '../support/fake-bedrock';
import { startFakeSecretsManager, type FakeSecretsManager } from '../support/fake-secrets-manager';

/** A value that must never reach a trace (a user's question, a tenant's id). */
const SECRET_PARAM = 'what-the-user-asked-7f3a';
const BUCKET = 'tracing-test';
const SECRET_ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:db-AbCdEf';

/** The few fields of an X-Ray (sub)segment document these tests read. */
interface SegmentDoc {
  readonly name: string;
  readonly namespace?: string;
  readonly fault?: boolean;
  readonly error?: boolean;
  readonly subsegments?: SegmentDoc[];
  readonly aws?: { readonly operation?: string };
}

/** Names of a segment's subsegments, nested as `parent > child`. */
function names(doc: SegmentDoc, prefix = ''): string[] {
  return (doc.subsegments ?? []).flatMap((s) => [
    `${prefix}${s.name}`,
    ...names(s, `${prefix}${s.name} > `),
  ]);
}

const ENV_KEYS = [
  'AWS_EXECUTION_ENV',
  '_HANDLER',
  'POWERTOOLS_TRACE_ENABLED',
  'POWERTOOLS_METRICS_DISABLED',
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_ENDPOINT_URL_SECRETS_MANAGER',
  'AWS_XRAY_DAEMON_ADDRESS',
] as const;
const savedEnv = Object.fromEntries(ENV_KEYS.map((k) => [k, process.env[k]]));

let observability: Observability;
let dynamo: LocalDynamo;
let s3rver: S3rver;
let s3: S3Client;
let s3Dir: string;
let bedrock: FakeBedrock;
let secrets: FakeSecretsManager;

beforeAll(async () => {
  [dynamo, bedrock, secrets] = await Promise.all([
    startLocalDynamo(),
    startFakeBedrock(),
    startFakeSecretsManager({
      [SECRET_ARN]: JSON.stringify({ username: 'app', password: 'pw', host: 'db.example' }),
    }),
  ]);
  s3Dir = await mkdtemp(path.join(os.tmpdir(), 'groundwork-tracing-'));
  s3rver = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: s3Dir });
  const { port } = (await s3rver.run()) as unknown as AddressInfo;
  // s3rver itself, without the local stack's signature gate: its own fixed credentials.
  s3 = localS3Client(`http://127.0.0.1:${port}`, {
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
  });
  await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
  await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'doc.txt', Body: 'hello' }));

  // What the Lambda runtime sets; the X-Ray daemon address is nowhere (no segment is sent).
  Object.assign(process.env, {
    AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
    _HANDLER: 'index.handler',
    POWERTOOLS_METRICS_DISABLED: 'true',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    AWS_ENDPOINT_URL_SECRETS_MANAGER: secrets.url,
    AWS_XRAY_DAEMON_ADDRESS: '127.0.0.1:9',
  });
  delete process.env.POWERTOOLS_TRACE_ENABLED;
  observability = createObservability('tracing-test');
});

afterAll(async () => {
  for (const key of ENV_KEYS) {
    if (savedEnv[key] === undefined) delete process.env[key];
    else process.env[key] = savedEnv[key];
  }
  s3.destroy();
  await Promise.all([dynamo.stop(), bedrock.close(), s3rver.close(), secrets.close()]);
  await rm(s3Dir, { recursive: true, force: true });
});

/** Runs `handler` inside a fresh segment, as in a Lambda invocation, and returns the segment. */
async function traced(run: () => Promise<unknown>): Promise<SegmentDoc> {
  const segment = new AWSXRay.Segment('tracing-test');
  await AWSXRay.getNamespace().runPromise(async () => {
    AWSXRay.setSegment(segment);
    await run();
  });
  return JSON.parse(JSON.stringify(segment)) as SegmentDoc;
}

function apiEvent(): ApiEvent {
  return {
    routeKey: 'POST /trace',
    rawPath: '/trace',
    body: '{}',
    headers: {},
    requestContext: {
      authorizer: { jwt: { claims: { sub: 'user-1', 'custom:tenant_id': 'tenant-1' } } },
    },
  } as unknown as ApiEvent;
}

describe('tracing in a Lambda', () => {
  it('is on, with a tracer shared by the entry', () => {
    expect(observability.tracer?.isTracingEnabled()).toBe(true);
  });

  it.each(ENGINES)(
    'records a subsegment per AWS call and per statement under the handler (%s)',
    async (engine) => {
      const { logger, metrics, tracer } = observability;
      // A request runs in its scope as the application role (row-level security), as in AWS.
      const base = await openTestDatabase(engine);
      await ensureRequestRole(base, APP_GROUP_ROLE);
      const db: Database = traceDatabase(base, tracer);
      const dynamoClient = traceClient(tracer, localDynamoClient(dynamo.endpoint));
      const s3Client = traceClient(tracer, s3);
      const embedder = createBedrockEmbedder({
        client: traceClient(
          tracer,
          createBedrockRuntimeClient({ region: 'us-east-1', endpoint: bedrock.url }),
        ),
        modelId: 'amazon.titan-embed-text-v2:0',
        dimension: 256,
      });
      let status = 0;
      try {
        const handler = createHttpHandler(
          { logger, metrics, tracer },
          { route: 'trace', schema: z.object({}) },
          async () => {
            await readDatabaseSecret(SECRET_ARN, 'us-east-1', tracer);
            await dynamoClient.send(
              new GetItemCommand({
                TableName: dynamo.tableName,
                Key: { pk: { S: 'user#t#u' }, sk: { S: 'usage#2026-11' } },
              }),
            );
            await s3Client.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'doc.txt' }));
            await embedder.embed(['a question']);
            // Two statements at once stay siblings; a transaction holds its own.
            await Promise.all([
              db.query('SELECT $1::text AS echoed', [SECRET_PARAM]),
              db.query('/* a comment */ WITH x AS (SELECT 1) SELECT * FROM x'),
            ]);
            await db.transaction(async (tx) => {
              await tx.query('CREATE TEMP TABLE trace_probe (v text) ON COMMIT DROP');
              await tx.query('INSERT INTO trace_probe (v) VALUES ($1)', [SECRET_PARAM]);
            });
            await db.query('SELECT $1::int', [SECRET_PARAM]).catch(() => undefined);
            return { body: { ok: true } };
          },
        );
        const segment = await traced(async () => {
          status = (await handler(apiEvent(), {} as Context)).statusCode;
        });
        expect(status).toBe(200);
        expect(names(segment)).toEqual([
          '## index.handler',
          '## index.handler > SecretsManager',
          '## index.handler > DynamoDB',
          '## index.handler > S3',
          '## index.handler > BedrockRuntime',
          '## index.handler > postgres SELECT',
          '## index.handler > postgres WITH',
          '## index.handler > postgres transaction',
          '## index.handler > postgres transaction > postgres CREATE',
          '## index.handler > postgres transaction > postgres INSERT',
          '## index.handler > postgres SELECT',
        ]);
        const handlerSegment = segment.subsegments?.[0];
        const calls = handlerSegment?.subsegments ?? [];
        expect(calls.slice(0, 4).map((s) => [s.namespace, s.aws?.operation])).toEqual([
          ['aws', 'GetSecretValue'],
          ['aws', 'GetItem'],
          ['aws', 'GetObject'],
          ['aws', 'InvokeModel'],
        ]);
        // The failed statement carries its (redacted) error; the others none.
        expect(calls.map((s) => Boolean(s.fault || s.error))).toEqual([
          ...Array<boolean>(calls.length - 1).fill(false),
          true,
        ]);
        const text = JSON.stringify(segment);
        expect(text).not.toContain(SECRET_PARAM);
        expect(text).not.toMatch(/trace_probe|echoed|FROM x/);
      } finally {
        dynamoClient.destroy();
        await base.close();
      }
    },
  );
});

describe('tracing outside Lambda', () => {
  /** Creates an entry's observability in a fresh process with `env`; reports what it got. */
  function probe(env: Record<string, string>): { tracer: boolean; xrayLoaded: boolean } {
    const script = `
      const { createObservability } = require(${JSON.stringify(
        path.resolve(__dirname, '../../lambdas/adapters/observability/powertools.ts'),
      )});
      const { tracer } = createObservability('probe');
      const xrayLoaded = Object.keys(require.cache).some((f) => f.includes('aws-xray-sdk-core'));
      console.log(JSON.stringify({ tracer: tracer !== undefined, xrayLoaded }));`;
    const run = spawnSync(process.execPath, ['-r', 'tsx/cjs', '-e', script], {
      env: { PATH: process.env.PATH ?? '', POWERTOOLS_METRICS_DISABLED: 'true', ...env },
      cwd: path.resolve(__dirname, '../..'),
      encoding: 'utf8',
    });
    if (run.status !== 0) throw new Error(run.stderr);
    return JSON.parse(run.stdout) as { tracer: boolean; xrayLoaded: boolean };
  }

  it('is off, and the X-Ray SDK is not loaded, outside Lambda or when switched off', () => {
    expect(probe({})).toEqual({ tracer: false, xrayLoaded: false });
    expect(
      probe({ AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x', POWERTOOLS_TRACE_ENABLED: 'false' }),
    ).toEqual({ tracer: false, xrayLoaded: false });
    // The same probe sees the tracer when the runtime's variable is there.
    expect(probe({ AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x' })).toEqual({
      tracer: true,
      xrayLoaded: true,
    });
  });
});
