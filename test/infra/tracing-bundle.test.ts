/**
 * A function's bundle, as deployed, traces in Lambda: the `usage` function (DynamoDB only, so it
 * runs whole against dynalite) loaded in a fresh process with the variables the Lambda runtime
 * sets, and a UDP socket standing in for the X-Ray daemon. GET /api/usage must send the handler's
 * subsegment and, under it, the DynamoDB calls' subsegments. test/integration/tracing.test.ts
 * covers the database, S3, Bedrock and Secrets Manager subsegments in-process.
 */
import { execFile } from 'node:child_process';
import { createSocket, type Socket } from 'node:dgram';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { buildApiEvent } from '../../lambdas/http/api-event';
import { startLocalDynamo, type LocalDynamo } from '../../local/dynamodb';
import { bundleFunction } from './probe';

interface SubsegmentDoc {
  readonly name: string;
  readonly id: string;
  readonly parent_id?: string;
  readonly trace_id?: string;
  readonly namespace?: string;
  readonly aws?: { readonly operation?: string; readonly table_name?: string };
}

const TRACE_ROOT = '1-6743a1b2-0123456789abcdef01234567';

let dynamo: LocalDynamo;
let daemon: Socket;
const documents: SubsegmentDoc[] = [];

beforeAll(async () => {
  dynamo = await startLocalDynamo();
  daemon = createSocket('udp4');
  daemon.on('message', (message) => {
    // Each datagram: a JSON header line, then one (sub)segment document.
    const [, body] = message.toString('utf8').split('\n');
    if (body) documents.push(JSON.parse(body) as SubsegmentDoc);
  });
  await new Promise<void>((resolve) => daemon.bind(0, '127.0.0.1', resolve));
});

afterAll(async () => {
  daemon.close();
  await dynamo.stop();
});

it('sends the handler subsegment and the DynamoDB calls under it to the X-Ray daemon', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'groundwork-trace-'));
  writeFileSync(path.join(dir, 'index.js'), bundleFunction('usage', 'bundled').text);
  const event = buildApiEvent({
    method: 'GET',
    resource: '/api/usage',
    claims: { sub: 'user-1', 'custom:tenant_id': 'tenant-1', aud: 'our-client' },
  });
  const harness = `
    const { handler } = require(${JSON.stringify(path.join(dir, 'index.js'))});
    handler(${JSON.stringify(event)}, { functionName: 'usage', awsRequestId: 'r-1' }).then(
      (res) => console.log(JSON.stringify({ status: res.statusCode })),
      (err) => { console.error(err); process.exit(1); },
    );`;
  const { port } = daemon.address();
  const run = await promisify(execFile)(process.execPath, ['-e', harness], {
    cwd: dir,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: os.tmpdir(),
      // What the Lambda runtime sets for a function with active tracing.
      AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
      LAMBDA_TASK_ROOT: dir,
      _HANDLER: 'index.handler',
      _X_AMZN_TRACE_ID: `Root=${TRACE_ROOT};Parent=53995c3f42cd8ad8;Sampled=1`,
      AWS_XRAY_DAEMON_ADDRESS: `127.0.0.1:${port}`,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
      LIMITS_TABLE: dynamo.tableName,
      TOKEN_AUDIENCES: '["our-client"]',
      CORS_ORIGINS: '[]',
      POWERTOOLS_METRICS_DISABLED: 'true',
      POWERTOOLS_LOG_LEVEL: 'ERROR',
    },
    encoding: 'utf8',
    timeout: 60_000,
  });
  expect(JSON.parse(run.stdout)).toEqual({ status: 200 });
  // UDP on the loopback: the datagrams were sent before the process exited; let them arrive.
  await new Promise((resolve) => setTimeout(resolve, 200));

  const handler = documents.find((d) => d.name === '## index.handler');
  expect(handler).toMatchObject({ trace_id: TRACE_ROOT, parent_id: '53995c3f42cd8ad8' });
  const calls = documents.filter((d) => d.parent_id === handler?.id);
  expect(calls.length).toBeGreaterThan(0);
  for (const call of calls) {
    expect(call).toMatchObject({
      name: 'DynamoDB',
      namespace: 'aws',
      aws: { table_name: dynamo.tableName },
    });
  }
});
