/**
 * The ObjectStore adapter over the real SDK client and the local S3 emulator: a bucket of more
 * than one page (1,000 keys) lists whole, as reconciliation at start needs for a large folder; an
 * object's version is read with it. The documents API's UploadBucket re-announces an object.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { createS3ObjectStore } from '../../lambdas/adapters/s3/s3-object-store';
import { createUploadBucket } from '../../lambdas/adapters/s3/upload-bucket';
import { localS3Client } from '../../local/stack';

const BUCKET = 'documents';
let dir: string;
let server: S3rver;
let client: S3Client;
let endpoint: string;
const CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'groundwork-s3-list-'));
  server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: dir });
  const { port } = (await server.run()) as unknown as AddressInfo;
  endpoint = `http://127.0.0.1:${port}`;
  client = localS3Client(endpoint, CREDENTIALS);
  await client.send(new CreateBucketCommand({ Bucket: BUCKET }));
});
afterAll(async () => {
  client.destroy();
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

it('lists every object of a bucket holding more than one page of keys', async () => {
  const keys = Array.from(
    { length: 1_203 },
    (_, i) => `tenants/acme/notes/${String(i).padStart(5, '0')} ${i % 7 === 0 ? 'é' : 'x'}.txt`,
  );
  for (let i = 0; i < keys.length; i += 50) {
    await Promise.all(
      keys
        .slice(i, i + 50)
        .map((Key) => client.send(new PutObjectCommand({ Bucket: BUCKET, Key, Body: 'x' }))),
    );
  }
  const store = createS3ObjectStore(client);
  if (!store.list) throw new Error('the S3 store lists');
  const listed = await store.list(BUCKET);
  expect(listed.map((o) => o.key).sort()).toEqual([...keys].sort());
  expect(new Set(listed.map((o) => o.key)).size).toBe(keys.length);
}, 120_000);

it("reads an object's version: its entity tag changes with each write, within the same second too", async () => {
  const store = createS3ObjectStore(client);
  const Key = 'tenants/acme/versioned.txt';
  await client.send(new PutObjectCommand({ Bucket: BUCKET, Key, Body: 'first version' }));
  const first = await store.head(BUCKET, Key);
  const read = await store.get(BUCKET, Key);
  expect(first?.etag).toMatch(/\S/);
  expect(read?.info.etag).toBe(first?.etag);
  await client.send(new PutObjectCommand({ Bucket: BUCKET, Key, Body: 'second version' }));
  const second = await store.head(BUCKET, Key);
  expect(second?.etag).toMatch(/\S/);
  expect(second?.etag).not.toBe(first?.etag);
});

it('re-announces an object by copying it onto itself, and reads one removed meanwhile as missing', async () => {
  const uploads = createUploadBucket(client, BUCKET);
  const Key = 'tenants/acme/uploads/retried.txt';
  await client.send(new PutObjectCommand({ Bucket: BUCKET, Key, Body: 'to retry' }));
  expect(await uploads.touch(Key)).toBe(true);
  expect(await uploads.touch('tenants/acme/uploads/never-there.txt')).toBe(false);

  // A removal that lands between the read of the object and its copy (a DELETE racing a retry).
  const racing = localS3Client(endpoint, CREDENTIALS);
  racing.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'CopyObjectCommand')
        await client.send(new DeleteObjectCommand({ Bucket: BUCKET, Key }));
      return next(args);
    },
    { step: 'initialize' },
  );
  try {
    expect(await createUploadBucket(racing, BUCKET).touch(Key)).toBe(false);
  } finally {
    racing.destroy();
  }
});
