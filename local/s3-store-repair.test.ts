import { appendFile, mkdtemp, readFile, rm, truncate, utimes, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import {
  CreateBucketCommand,
  HeadBucketCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { localS3Client } from './stack';
import { removeTornObjects, repairEmulatorFolder } from './s3-store-repair';

const BUCKET = 'repair-bucket';
const CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

let dir: string;

/** Runs the real emulator on `dir` for the length of `fn`. */
async function withEmulator<T>(fn: (client: S3Client) => Promise<T>): Promise<T> {
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: dir });
  const { port } = (await server.run()) as unknown as AddressInfo;
  const client = localS3Client(`http://127.0.0.1:${port}`, CREDENTIALS);
  try {
    return await fn(client);
  } finally {
    client.destroy();
    await server.close();
  }
}

const file = (key: string, part: 'object' | 'metadata.json') =>
  path.join(dir, BUCKET, `${key}._S3rver_${part}`);

async function listKeys(client: S3Client): Promise<string[]> {
  const out = await client.send(new ListObjectsV2Command({ Bucket: BUCKET }));
  return (out.Contents ?? []).map((o) => o.Key!).sort();
}

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'gw-s3-repair-'));
  await withEmulator(async (client) => {
    await client.send(new CreateBucketCommand({ Bucket: BUCKET }));
    for (const key of ['whole.md', 'docs/cut-metadata.md', 'docs/cut-content.md', 'no-metadata.md'])
      await client.send(
        new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: `text of ${key}\n`.repeat(50) }),
      );
  });
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/**
 * The three ways a killed writer leaves an object: during its metadata, after its content and
 * before its metadata, and during a new version's content written over an old one.
 */
async function tearObjects(): Promise<void> {
  await truncate(file('docs/cut-metadata.md', 'metadata.json'), 7);
  await rm(file('no-metadata.md', 'metadata.json'));
  const content = file('docs/cut-content.md', 'object');
  await writeFile(content, (await readFile(content)).subarray(0, 20));
  const later = new Date(Date.now() + 60_000);
  await utimes(content, later, later);
}

describe('removeTornObjects', () => {
  it('removes the objects a killed writer left, after which the emulator lists the bucket again', async () => {
    await tearObjects();
    // The premise: s3rver fails the bucket on the torn metadata (and HEAD, which lists it).
    await withEmulator(async (client) => {
      await expect(client.send(new ListObjectsV2Command({ Bucket: BUCKET }))).rejects.toThrow();
      await expect(client.send(new HeadBucketCommand({ Bucket: BUCKET }))).rejects.toThrow();
    });

    expect(await removeTornObjects(dir)).toEqual([
      `${BUCKET}/docs/cut-content.md`,
      `${BUCKET}/docs/cut-metadata.md`,
      `${BUCKET}/no-metadata.md`,
    ]);
    await withEmulator(async (client) => {
      await client.send(new HeadBucketCommand({ Bucket: BUCKET }));
      expect(await listKeys(client)).toEqual(['whole.md']);
    });
    // Nothing is left to remove.
    expect(await removeTornObjects(dir)).toEqual([]);
  });

  it('keeps whole objects, also content newer than its metadata that still has its MD5', async () => {
    // A folder copied without its files' times: the content can be the newer file.
    const later = new Date(Date.now() + 60_000);
    await utimes(file('whole.md', 'object'), later, later);
    expect(await removeTornObjects(dir)).toEqual([]);
    await withEmulator(async (client) =>
      expect(await listKeys(client)).toEqual([
        'docs/cut-content.md',
        'docs/cut-metadata.md',
        'no-metadata.md',
        'whole.md',
      ]),
    );
    // Appending changes the MD5: the same newer content is then torn.
    await appendFile(file('whole.md', 'object'), 'more');
    await utimes(file('whole.md', 'object'), later, later);
    expect(await removeTornObjects(dir)).toEqual([`${BUCKET}/whole.md`]);
  });

  it('checks the content of objects written since the last start against their MD5', async () => {
    // Answered, then cut short: s3rver writes the metadata once the body has passed its MD5,
    // while the content may still be written, so the cut content can be the older file.
    const content = file('whole.md', 'object');
    await writeFile(content, (await readFile(content)).subarray(0, 10));
    const earlier = new Date(Date.now() - 60_000);
    await utimes(content, earlier, earlier);
    expect(await removeTornObjects(dir)).toEqual([]);
    expect(await removeTornObjects(dir, { verifySince: Date.now() + 60_000 })).toEqual([]);
    // Objects whose metadata was written since then are read; whole ones stay.
    expect(await removeTornObjects(dir, { verifySince: Date.now() - 30_000 })).toEqual([
      `${BUCKET}/whole.md`,
    ]);
    await withEmulator(async (client) => expect(await listKeys(client)).not.toContain('whole.md'));
  });

  it('reads the objects written since the recorded start, and records the new one after', async () => {
    const marker = path.join(dir, 's3-started-at');
    const content = file('whole.md', 'object');
    await writeFile(content, (await readFile(content)).subarray(0, 10));
    const earlier = new Date(Date.now() - 60_000);
    await utimes(content, earlier, earlier);
    // No recorded start (the first, or a marker that is not a time): nothing is read.
    expect(await repairEmulatorFolder(dir, null)).toEqual([]);
    await writeFile(marker, 'not a time');
    expect(await repairEmulatorFolder(dir, marker)).toEqual([]);
    const recorded = Number(await readFile(marker, 'utf8'));
    expect(Math.abs(recorded - Date.now())).toBeLessThan(5_000);
    // A start recorded before the object was written: it is read, and is short.
    await writeFile(marker, String(Date.now() - 30_000));
    expect(await repairEmulatorFolder(dir, marker)).toEqual([`${BUCKET}/whole.md`]);
    expect(Number(await readFile(marker, 'utf8'))).toBeGreaterThan(Date.now() - 5_000);
  });

  it('has nothing to repair in a folder the emulator has not made yet', async () => {
    expect(await removeTornObjects(path.join(dir, 'absent'))).toEqual([]);
  });
});
