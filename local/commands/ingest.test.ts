import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { unreachable } from '../client';
import { documentsNotInFolder, ingestFolder, uploadFolder, type DocumentSummary } from './ingest';

describe('uploadFolder', () => {
  let folder: string;
  beforeEach(async () => {
    folder = await mkdtemp(path.join(tmpdir(), 'gw-upload-'));
    for (const name of ['a.md', 'b.md', 'c.md'])
      await writeFile(path.join(folder, name), `# ${name}`);
  });
  afterEach(() => rm(folder, { recursive: true, force: true }));

  it('skips a file removed while the folder is uploaded, and uploads the rest', async () => {
    const sent: string[] = [];
    const client = {
      send: async (command: PutObjectCommand) => {
        // The first upload removes another file of the folder before its turn.
        if (sent.length === 0) {
          const other = ['a.md', 'b.md', 'c.md'].find((f) => !command.input.Key!.endsWith(f))!;
          await rm(path.join(folder, other));
        }
        sent.push(command.input.Key!);
        return {};
      },
    } as unknown as S3Client;
    const result = await uploadFolder(folder, 'acme', { client, bucket: 'docs' });
    expect(result.keys).toEqual(sent);
    expect(result.keys).toHaveLength(2);
    expect(result.vanished).toHaveLength(1);
    expect(result.vanished[0]).toMatch(/^tenants\/acme\/[abc]\.md$/);
    expect(sent).not.toContain(result.vanished[0]);
  });
});

describe('ingestFolder', () => {
  it('says which server did not answer when its S3 endpoint goes away during the upload', async () => {
    const folder = await mkdtemp(path.join(tmpdir(), 'gw-ingest-'));
    try {
      await writeFile(path.join(folder, 'a.md'), '# A');
      // Port 9 (discard): nothing listens there, as when `groundwork start` was killed.
      const session = {
        url: 'http://127.0.0.1:9',
        s3Endpoint: 'http://127.0.0.1:9',
        s3Credentials: { accessKeyId: 'AKIDLOCAL', secretAccessKey: 'secret' },
        stack: null,
        token: () => 'token',
        close: async () => {},
      };
      await expect(ingestFolder(session, 'docs', folder, 'acme')).rejects.toThrow(
        'the server at http://127.0.0.1:9 did not answer (ECONNREFUSED)',
      );
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});

describe('documentsNotInFolder', () => {
  const doc = (name: string, extra: Partial<DocumentSummary> = {}): DocumentSummary => ({
    id: name,
    source_uri: `s3://docs/tenants/acme/${name}`,
    status: 'indexed',
    failure_reason: null,
    chunk_count: 1,
    ...extra,
  });

  it('names only files of an earlier run, never an upload made through the documents API', () => {
    const listed = [
      doc('kept.md'),
      doc('deleted-from-folder.md'),
      doc('failed-and-gone.md', { status: 'failed' }),
      doc('removed.md', { status: 'deleted' }),
      doc('uploads/123/report.pdf'),
      doc('users/alice/uploads/456/notes.md'),
      doc('vanished.md'),
      doc('kept.md.metadata.json'),
    ];
    const stale = documentsNotInFolder(
      listed,
      new Set(['s3://docs/tenants/acme/kept.md']),
      new Set(['s3://docs/tenants/acme/vanished.md']),
    );
    expect(stale.map((d) => d.id)).toEqual(['deleted-from-folder.md', 'failed-and-gone.md']);
  });
});

describe('unreachable', () => {
  it("names the server and the cause that fetch's own message leaves out", () => {
    const err = new TypeError('fetch failed', {
      cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:3000'), {
        code: 'ECONNREFUSED',
      }),
    });
    const message = unreachable('http://127.0.0.1:3000', err);
    expect(message).toContain('http://127.0.0.1:3000');
    expect(message).toContain('ECONNREFUSED');
    expect(message).toContain('groundwork start');
  });

  it('falls back to the error itself without a cause', () => {
    expect(unreachable('http://x', new Error('socket hang up'))).toContain('socket hang up');
  });
});
