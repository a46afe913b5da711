import {
  createDocuments,
  isApiUploadKey,
  type DocumentCatalog,
  type UploadBucket,
} from './documents';

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

describe('the upload type rule', () => {
  const upload = (filename: string, contentType: string) => {
    const { catalog } = recordingCatalog();
    const store = bucket(() => false);
    const documents = createDocuments({ catalog, bucket: store, newId: () => 'd' });
    return documents.createUpload(caller, { ...request, filename, contentType, sizeBytes: 5 });
  };

  it.each(['notes.md', 'notes.markdown', 'page.htm', 'page.html', 'memo.txt', 'a.pdf', 'b.docx'])(
    'takes the format of %s from its extension when the type is application/octet-stream',
    async (filename) => {
      const ticket = await upload(filename, 'application/octet-stream');
      // The signature covers the type the client declared, which is the type it will PUT.
      expect(ticket.upload.headers).toEqual({ 'content-type': 'application/octet-stream' });
    },
  );

  it.each([
    ['tool.exe', 'its extension ".exe" is not supported'],
    ['README', 'its name has no extension'],
  ])(
    'refuses %s sent as application/octet-stream, naming the type and the name',
    async (name, why) => {
      await expect(upload(name, 'application/octet-stream')).rejects.toThrow(
        `content_type: "application/octet-stream" does not say which format the file is in, and ${why}`,
      );
    },
  );

  it('lets a declared specific type win over the extension', async () => {
    await expect(upload('notes.md', 'application/pdf')).rejects.toThrow(
      'content_type: "application/pdf" does not match the file\'s extension ".md"',
    );
    await expect(upload('b.docx', 'text/plain')).rejects.toThrow('does not match');
  });
});

describe('the keys the documents API stores uploads under', () => {
  it('are recognised as its own, a tenant upload and a private one alike, and no folder file is', async () => {
    const store = bucket(() => false);
    const { catalog } = recordingCatalog();
    const documents = createDocuments({ catalog, bucket: store, newId: () => 'doc-1' });
    const bytes = new TextEncoder().encode('hello');
    await documents.storeUpload(caller, request, bytes);
    await documents.storeUpload(caller, { ...request, visibility: 'user' }, bytes);
    const uploads = store.stored.filter((key) => !key.endsWith('.metadata.json'));

    expect(uploads).toEqual([
      'tenants/acme/uploads/doc-1/notes.txt',
      'tenants/acme/users/alice/uploads/doc-1/notes.txt',
    ]);
    for (const key of uploads) expect(isApiUploadKey(key)).toBe(true);
    for (const key of ['tenants/acme/notes.txt', 'tenants/acme/handbook/uploads.md'])
      expect(isApiUploadKey(key)).toBe(false);
  });
});
