import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { localS3Credentials } from './s3-gate';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'gw-s3-keys-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('localS3Credentials', () => {
  it('creates the credentials once and reads them back in later processes', async () => {
    const first = await localS3Credentials(dir);
    expect(first.accessKeyId).toMatch(/^GWLOCAL[0-9A-F]{12}$/);
    expect(await localS3Credentials(dir)).toEqual(first);
    // Written aside and renamed: nothing but the file is left behind.
    expect(await readdir(dir)).toEqual(['s3-credentials.json']);
  });

  it('replaces a file a killed process left half written instead of failing every start', async () => {
    await writeFile(path.join(dir, 's3-credentials.json'), '{"accessKeyId":"GWLO');
    const created = await localS3Credentials(dir);
    expect(JSON.parse(await readFile(path.join(dir, 's3-credentials.json'), 'utf8'))).toEqual(
      created,
    );
    expect(await localS3Credentials(dir)).toEqual(created);
  });

  it('makes fresh credentials for each call without a folder', async () => {
    const [a, b] = [await localS3Credentials(), await localS3Credentials()];
    expect(a.accessKeyId).not.toBe(b.accessKeyId);
  });
});
