import { createDocuments, type DocumentCatalog, type UploadBucket } from './documents';

const caller = { tenantId: 'acme', userId: 'alice', isAdmin: false };
const request = { filename: 'notes.txt', contentType: 'text/plain', visibility: 'tenant' as const };

/** A catalog recording the calls an upload makes; any other call fails the test. */
function recordingCatalog() {
  const calls: string[] = [];
  const catalog = new Proxy({} as DocumentCatalog, {
    get: (_target, name: string) => {
      if (name === 'reserve')
        return async (doc: { id: string }) => {
          calls.push(`reserve ${doc.id}`);
          return { id: doc.id };
        };
      if (name === 'markFailed')
        return async (id: string, reason: string) => void calls.push(`failed ${id}: ${reason}`);
      throw new Error(`unexpected catalog call ${name}`);
    },
  });
  return { catalog, calls };
}

/** A bucket that refuses the keys `refuses` matches, as a store that is down does. */
function bucket(refuses: (key: string) => boolean): UploadBucket & { stored: string[] } {
  const stored: string[] = [];
  return {
    name: 'docs',
    stored,
    presignPut: async (key) => `https://docs.example/${key}`,
    put: async (key) => {
      if (refuses(key)) throw new Error('S3 unavailable (injected)');
      stored.push(key);
    },
    delete: async () => undefined,
    touch: async () => true,
  };
}

describe('an upload the bucket refuses', () => {
  it('records the document failed with its reason when the file cannot be stored', async () => {
    const { catalog, calls } = recordingCatalog();
    const documents = createDocuments({
      catalog,
      bucket: bucket((key) => !key.endsWith('.metadata.json')),
      newId: () => 'doc-1',
    });
    await expect(
      documents.storeUpload(caller, request, new TextEncoder().encode('hello')),
    ).rejects.toThrow('S3 unavailable');
    expect(calls).toEqual([
      'reserve doc-1',
      'failed doc-1: The file could not be stored; upload it again.',
    ]);
  });

  it('reserves nothing when the sidecar cannot be written', async () => {
    const { catalog, calls } = recordingCatalog();
    const documents = createDocuments({ catalog, bucket: bucket(() => true), newId: () => 'd' });
    await expect(documents.createUpload(caller, { ...request, sizeBytes: 5 })).rejects.toThrow(
      'S3 unavailable',
    );
    await expect(
      documents.storeUpload(caller, request, new TextEncoder().encode('hello')),
    ).rejects.toThrow('S3 unavailable');
    expect(calls).toEqual([]);
  });
});

describe('the size limit', () => {
  it('names the sizes in bytes, so a file one byte over does not read as "50.0 MB; the limit is 50 MB"', async () => {
    const { catalog, calls } = recordingCatalog();
    const documents = createDocuments({ catalog, bucket: bucket(() => false) });
    await expect(
      documents.createUpload(caller, { ...request, sizeBytes: 50 * 1024 * 1024 + 1 }),
    ).rejects.toThrow(
      'size_bytes: the file is 52428801 bytes; the limit is 52428800 bytes (50 MB)',
    );
    expect(calls).toEqual([]);
  });
});
