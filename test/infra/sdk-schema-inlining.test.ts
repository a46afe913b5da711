/**
 * The SDK clients' schema modules with literal keys (lib/sdk-schema-inlining.ts): the rewrite
 * itself, the copies exporting exactly the values of the originals, the bundles shrinking, and
 * bundled S3 and DynamoDB clients built from the copies working against the local emulators
 * with the commands the functions send.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Script } from 'node:vm';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { buildSync } from 'esbuild';
import S3rver from 's3rver';
import { bundleAliases } from '../../lib/bundling';
import { REPO_ROOT } from '../../lib/config';
import {
  ensureSchemaInlinedClients,
  inlineSchemaKeys,
  SCHEMA_INLINED_CLIENTS,
  SCHEMA_INLINED_DIR,
} from '../../lib/sdk-schema-inlining';
import { localS3Client } from '../../local/stack';
import { startLocalDynamo } from '../../local/dynamodb';
import { bundleFunction, bundleProbe } from './probe';

describe('inlineSchemaKeys', () => {
  it('writes computed keys naming a string constant of the module as that literal', () => {
    const source = [
      'const _e = "error";',
      'const _hE = "httpError";',
      'const _q = "say \\"hi\\"";',
      'export var A$ = [-3, n0, _A, { [_e]: _c, [_hE]: 403 }, [], []];',
      'export var B$ = [9, n0, _B, {[_q]: 1,\n  [_e]: 2}];',
      'const other = x[_e] ? { [_unknown]: 1 } : y;',
    ].join('\n');
    const { source: out, inlined } = inlineSchemaKeys(source);
    expect(inlined).toBe(4);
    expect(out).toContain('{ "error": _c, "httpError": 403 }');
    expect(out).toContain('{"say \\"hi\\"": 1,\n  "error": 2}');
    // An index expression and a key naming no string constant are left alone.
    expect(out).toContain('x[_e] ? { [_unknown]: 1 } : y');
  });
});

/** A module's exports, evaluated from one esbuild CommonJS bundle of it. */
function loadExports(file: string): Record<string, unknown> {
  const result = buildSync({
    entryPoints: [file],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    write: false,
    absWorkingDir: REPO_ROOT,
    logLevel: 'error',
  });
  const module = { exports: {} as Record<string, unknown> };
  const wrapped = `(function (module, exports, require) {${result.outputFiles[0]!.text}\n})`;
  (new Script(wrapped).runInThisContext() as (...args: unknown[]) => void)(
    module,
    module.exports,
    require,
  );
  return module.exports;
}

/** Every export as JSON, functions (the schemas' lazy references) by their source text. */
function describeExports(exports: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(
    Object.keys(exports)
      .sort()
      .map((name) => [
        name,
        JSON.stringify(exports[name], (_key, value: unknown) =>
          typeof value === 'function' ? `function ${String(value)}` : value,
        ),
      ]),
  );
}

describe('the schema-inlined copies', () => {
  ensureSchemaInlinedClients(REPO_ROOT);

  it.each(SCHEMA_INLINED_CLIENTS)('%s: every schema module exports the same values', (client) => {
    const schemas = path.join('dist-es', 'schemas');
    const files = readdirSync(path.join(REPO_ROOT, 'node_modules', client, schemas));
    expect(files.length).toBeGreaterThan(0);
    for (const file of files.filter((f) => f.endsWith('.js'))) {
      const original = loadExports(path.join(REPO_ROOT, 'node_modules', client, schemas, file));
      const copy = loadExports(path.join(REPO_ROOT, SCHEMA_INLINED_DIR, client, schemas, file));
      expect(Object.keys(copy).length).toBeGreaterThan(10);
      expect(describeExports(copy)).toEqual(describeExports(original));
    }
  });

  it('are current, and leave no key to inline where the originals had many', () => {
    // A second call finds every copy current and makes nothing.
    expect(ensureSchemaInlinedClients(REPO_ROOT)).toEqual({});
    const s3 = path.join('@aws-sdk/client-s3', 'dist-es', 'schemas', 'schemas_0.js');
    const left = (dir: string) =>
      inlineSchemaKeys(readFileSync(path.join(REPO_ROOT, dir, s3), 'utf8')).inlined;
    expect(left('node_modules')).toBeGreaterThan(100);
    expect(left(SCHEMA_INLINED_DIR)).toBe(0);
  });

  it('shrinks the bundles of the functions using S3', () => {
    const aliases = bundleAliases('bundled');
    const originals = Object.fromEntries(
      Object.entries(aliases).filter(([from]) => !SCHEMA_INLINED_CLIENTS.some((c) => c === from)),
    );
    for (const name of ['ingest', 'documents'] as const) {
      // Measured 2026-11-22: 79 KB (ingest) and 53 KB (documents) smaller.
      const saved =
        bundleFunction(name, 'bundled', originals).bytes - bundleFunction(name, 'bundled').bytes;
      expect(saved).toBeGreaterThan(40 * 1024);
    }
  });
});

/** A probe script sending the functions' S3 and DynamoDB commands, bundled as the functions are. */
const PROBE = `
  const s3 = require('@aws-sdk/client-s3');
  const ddb = require('@aws-sdk/client-dynamodb');
  const { getSignedUrl } = require('@aws-sdk/s3-request-presigner');
  const [s3Endpoint, bucket, ddbEndpoint, table] = process.argv.slice(2);
  const settle = (p) => p.then((v) => v, (e) => ({ error: e.name, status: e.$metadata?.httpStatusCode }));
  (async () => {
    const S3 = new s3.S3Client({ endpoint: s3Endpoint, region: 'us-east-1', forcePathStyle: true,
      requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' });
    const out = {};
    await S3.send(new s3.PutObjectCommand({ Bucket: bucket, Key: 'a.txt', Body: 'hello', ContentType: 'text/plain',
      Metadata: { title: 'A' } }));
    const head = await S3.send(new s3.HeadObjectCommand({ Bucket: bucket, Key: 'a.txt' }));
    out.head = { length: head.ContentLength, type: head.ContentType, metadata: head.Metadata };
    const got = await S3.send(new s3.GetObjectCommand({ Bucket: bucket, Key: 'a.txt' }));
    out.body = await got.Body.transformToString();
    await S3.send(new s3.CopyObjectCommand({ Bucket: bucket, Key: 'b.txt', CopySource: bucket + '/a.txt' }));
    out.copied = await (await S3.send(new s3.GetObjectCommand({ Bucket: bucket, Key: 'b.txt' }))).Body.transformToString();
    await S3.send(new s3.DeleteObjectCommand({ Bucket: bucket, Key: 'b.txt' }));
    out.missing = await settle(S3.send(new s3.GetObjectCommand({ Bucket: bucket, Key: 'b.txt' })));
    out.missingHead = await settle(S3.send(new s3.HeadObjectCommand({ Bucket: bucket, Key: 'b.txt' })));
    const url = await getSignedUrl(S3, new s3.PutObjectCommand({ Bucket: bucket, Key: 'c.txt', ContentType: 'text/plain' }),
      { expiresIn: 60 });
    const put = await fetch(url, { method: 'PUT', body: 'signed', headers: { 'content-type': 'text/plain' } });
    out.presigned = { status: put.status,
      body: await (await S3.send(new s3.GetObjectCommand({ Bucket: bucket, Key: 'c.txt' }))).Body.transformToString() };

    const D = new ddb.DynamoDBClient({ endpoint: ddbEndpoint, region: 'local' });
    const key = { pk: { S: 'tenant#t1' }, sk: { S: 'month#2026-11' } };
    const updated = await D.send(new ddb.UpdateItemCommand({ TableName: table, Key: key,
      UpdateExpression: 'ADD answers :one SET tenant_month = :tm', ConditionExpression: 'attribute_not_exists(answers) OR answers < :cap',
      ExpressionAttributeValues: { ':one': { N: '1' }, ':cap': { N: '1' }, ':tm': { S: 't1#2026-11' } }, ReturnValues: 'ALL_NEW' }));
    out.updated = updated.Attributes;
    out.conditionFailed = await settle(D.send(new ddb.UpdateItemCommand({ TableName: table, Key: key,
      UpdateExpression: 'ADD answers :one', ConditionExpression: 'answers < :cap',
      ExpressionAttributeValues: { ':one': { N: '1' }, ':cap': { N: '1' } } })));
    out.item = (await D.send(new ddb.GetItemCommand({ TableName: table, Key: key, ConsistentRead: true }))).Item;
    out.batch = (await D.send(new ddb.BatchGetItemCommand({ RequestItems: { [table]: { Keys: [key] } } }))).Responses[table].length;
    out.query = (await D.send(new ddb.QueryCommand({ TableName: table, IndexName: 'tenant-usage',
      KeyConditionExpression: 'tenant_month = :tm', ExpressionAttributeValues: { ':tm': { S: 't1#2026-11' } } }))).Count;
    console.log(JSON.stringify(out));
  })().catch((e) => { console.error(e); process.exit(1); });`;

describe('bundled clients from the copies', () => {
  let s3rver: S3rver | undefined;
  let stopDynamo: (() => Promise<void>) | undefined;
  afterAll(async () => {
    await s3rver?.close();
    await stopDynamo?.();
  });

  it('send the S3 and DynamoDB commands the functions use, errors included', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'groundwork-sdk-probe-'));
    s3rver = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: dir });
    const { port } = (await s3rver.run()) as unknown as AddressInfo;
    const s3Endpoint = `http://127.0.0.1:${port}`;
    await localS3Client(s3Endpoint, { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }).send(
      new CreateBucketCommand({ Bucket: 'probe' }),
    );
    const dynamo = await startLocalDynamo({ tableName: 'probe-limits' });
    stopDynamo = () => dynamo.stop();

    const { file: outfile, inputs } = bundleProbe('sdk-probe', PROBE);
    for (const client of ['@aws-sdk/client-s3', '@aws-sdk/client-dynamodb']) {
      const schemas = path.posix.join(client, 'dist-es/schemas/schemas_0.js');
      const copies = inputs.filter((i) => i.endsWith(path.posix.join('groundwork-sdk', schemas)));
      const originals = inputs.filter((i) => i.endsWith(path.posix.join('node_modules', schemas)));
      expect({ client, copies: copies.length, originals }).toEqual({
        client,
        copies: 1,
        originals: [],
      });
    }

    // Asynchronously: both emulators answer from this process.
    const run = await promisify(execFile)(
      process.execPath,
      [outfile, s3Endpoint, 'probe', dynamo.endpoint, dynamo.tableName],
      {
        // The bundles' credential chain is the environment's (lib/bundling.ts).
        env: {
          PATH: process.env.PATH ?? '',
          HOME: dir,
          AWS_ACCESS_KEY_ID: 'S3RVER',
          AWS_SECRET_ACCESS_KEY: 'S3RVER',
          AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        },
        encoding: 'utf8',
        timeout: 50_000,
      },
    );
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual({
      head: { length: 5, type: 'text/plain', metadata: { title: 'A' } },
      body: 'hello',
      copied: 'hello',
      missing: { error: 'NoSuchKey', status: 404 },
      missingHead: { error: 'NotFound', status: 404 },
      presigned: { status: 200, body: 'signed' },
      updated: {
        pk: { S: 'tenant#t1' },
        sk: { S: 'month#2026-11' },
        answers: { N: '1' },
        tenant_month: { S: 't1#2026-11' },
      },
      conditionFailed: { error: 'ConditionalCheckFailedException', status: 400 },
      item: {
        pk: { S: 'tenant#t1' },
        sk: { S: 'month#2026-11' },
        answers: { N: '1' },
        tenant_month: { S: 't1#2026-11' },
      },
      batch: 1,
      query: 1,
    });
  }, 60_000);
});
