/**
 * The local S3 emulator's gate (local/s3-gate.ts): signed requests only (header-signed and
 * presigned, checked by recomputing SigV4), the presigned PUT's key, content type and exact size
 * enforced, the signed body hash checked, CORS for the allowed origin only; what passes reaches
 * s3rver and its events still feed ingestion.
 */
import http from 'node:http';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { createUploadBucket } from '../../lambdas/adapters/s3/upload-bucket';
import { localS3Client, startLocalStack, type LocalStack } from '../../local/stack';
import { createHashEmbedder } from '../support/hash-embedder';

process.env.POWERTOOLS_METRICS_DISABLED = 'true';

const PLAYGROUND = 'http://127.0.0.1:38080';
const BODY = 'Refunds are paid within 14 days of the request.\n';

describe('the S3 emulator gate', () => {
  let stack: LocalStack;

  beforeAll(async () => {
    stack = await startLocalStack({
      embedder: createHashEmbedder(),
      logLevel: 'SILENT',
      s3CorsOrigins: [PLAYGROUND],
    });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const objectUrl = (key: string) => `${stack.s3.endpoint}/${stack.s3.bucket}/${key}`;
  const code = async (response: Response) =>
    /<Code>([^<]+)<\/Code>/.exec(await response.text())?.[1];
  const presign = (key: string, size = Buffer.byteLength(BODY), type = 'text/markdown') =>
    createUploadBucket(stack.s3.client, stack.s3.bucket).presignPut(key, {
      contentType: type,
      contentLength: size,
      expiresInSeconds: 300,
    });
  const read = async (key: string) => {
    const got = await stack.s3.client.send(
      new GetObjectCommand({ Bucket: stack.s3.bucket, Key: key }),
    );
    return got.Body!.transformToString();
  };

  it('serves requests signed with its credentials, and their events reach ingestion', async () => {
    await stack.s3.client.send(
      new PutObjectCommand({ Bucket: stack.s3.bucket, Key: 'tenants/acme/signed.md', Body: BODY }),
    );
    expect(await read('tenants/acme/signed.md')).toBe(BODY);
    await stack.queue.idle();
    const { rows } = await stack.db.query<{ status: string }>(
      'SELECT status FROM documents WHERE source_uri = $1',
      [`s3://${stack.s3.bucket}/tenants/acme/signed.md`],
    );
    expect(rows).toEqual([{ status: 'indexed' }]);
  });

  it('writes to one key at once leave one of the bodies whole, as S3 does', async () => {
    // s3rver writes an object's file in place: two writes at once interleaved into one object.
    for (let round = 0; round < 10; round++) {
      const key = `scratch/race-${round}.txt`;
      const bodies = ['A', 'B', 'C'].map((c, i) => c.repeat(200_000 + i * 70_000));
      await Promise.all(
        bodies.map((Body) =>
          stack.s3.client.send(new PutObjectCommand({ Bucket: stack.s3.bucket, Key: key, Body })),
        ),
      );
      const stored = await read(key);
      expect(bodies.includes(stored) ? 'one body' : `${stored.length} mixed bytes`).toBe(
        'one body',
      );
    }
  });

  it('a client that leaves in the middle of a read does not hold the object', async () => {
    const key = 'scratch/large.bin';
    const size = 16_000_000;
    await stack.s3.client.send(
      new PutObjectCommand({ Bucket: stack.s3.bucket, Key: key, Body: Buffer.alloc(size, 97) }),
    );
    const url = await getSignedUrl(
      stack.s3.client,
      new GetObjectCommand({ Bucket: stack.s3.bucket, Key: key }),
      { expiresIn: 300 },
    );
    await new Promise<void>((resolve) => {
      const req = http.get(url, (res) => {
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.on('error', () => undefined);
    });
    const again = await stack.s3.client.send(
      new GetObjectCommand({ Bucket: stack.s3.bucket, Key: key }),
    );
    expect((await again.Body!.transformToByteArray()).length).toBe(size);
  }, 20_000);

  it('refuses a key the emulator would store outside its folder or cannot store, and stays up', async () => {
    for (const [Key, error] of [
      ['tenants/acme/../escape.md', 'InvalidArgument'],
      [`tenants/acme/${'日'.repeat(80)}.md`, 'KeyTooLongError'],
    ] as const) {
      await expect(
        stack.s3.client.send(new PutObjectCommand({ Bucket: stack.s3.bucket, Key, Body: BODY })),
      ).rejects.toMatchObject({ name: error, $metadata: { httpStatusCode: 400 } });
    }
    await stack.s3.client.send(
      new PutObjectCommand({ Bucket: stack.s3.bucket, Key: 'tenants/acme/after.md', Body: BODY }),
    );
    expect(await read('tenants/acme/after.md')).toBe(BODY);
  });

  it('refuses anonymous requests', async () => {
    const get = await fetch(objectUrl('tenants/acme/signed.md'));
    expect(get.status).toBe(403);
    expect(await code(get)).toBe('AccessDenied');
    const put = await fetch(objectUrl('tenants/acme/anonymous.md'), { method: 'PUT', body: BODY });
    expect(put.status).toBe(403);
    const list = await fetch(`${stack.s3.endpoint}/${stack.s3.bucket}`);
    expect(list.status).toBe(403);
  });

  it('refuses a wrong secret, an unknown key and a body other than the one signed', async () => {
    const client = (credentials: { accessKeyId: string; secretAccessKey: string }) =>
      localS3Client(stack.s3.endpoint, credentials);
    const wrongSecret = client({ ...stack.s3.credentials, secretAccessKey: 'not-the-secret' });
    await expect(
      wrongSecret.send(
        new GetObjectCommand({ Bucket: stack.s3.bucket, Key: 'tenants/acme/signed.md' }),
      ),
    ).rejects.toMatchObject({ name: 'SignatureDoesNotMatch', $metadata: { httpStatusCode: 403 } });
    // The well-known s3rver key is not accepted either.
    const s3rverDefault = client({ accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' });
    await expect(
      s3rverDefault.send(
        new GetObjectCommand({ Bucket: stack.s3.bucket, Key: 'tenants/acme/signed.md' }),
      ),
    ).rejects.toMatchObject({ name: 'InvalidAccessKeyId' });
    wrongSecret.destroy();
    s3rverDefault.destroy();

    // Signed for one body, sent with another: the payload hash does not match.
    const tamper = new S3Client({
      endpoint: stack.s3.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: stack.s3.credentials,
      requestChecksumCalculation: 'WHEN_REQUIRED',
    });
    tamper.middlewareStack.add(
      (next) => async (args) => {
        (args.request as { body: unknown }).body = BODY.replace('14', '99');
        return next(args);
      },
      { step: 'finalizeRequest', priority: 'low', name: 'tamper' },
    );
    await expect(
      tamper.send(
        new PutObjectCommand({
          Bucket: stack.s3.bucket,
          Key: 'tenants/acme/tampered.md',
          Body: BODY,
        }),
      ),
    ).rejects.toMatchObject({
      name: 'XAmzContentSHA256Mismatch',
      $metadata: { httpStatusCode: 400 },
    });
    tamper.destroy();
  });

  it('enforces the key, content type and exact size of a presigned PUT, and its expiry', async () => {
    const key = 'tenants/acme/uploads/presigned.md';
    const url = await presign(key);
    const attempt = (target: string, body: string, type = 'text/markdown') =>
      fetch(target, { method: 'PUT', body, headers: { 'content-type': type } });

    const otherType = await attempt(url, BODY, 'text/html');
    expect([otherType.status, await code(otherType)]).toEqual([403, 'SignatureDoesNotMatch']);
    const otherSize = await attempt(url, `${BODY}more`);
    expect([otherSize.status, await code(otherSize)]).toEqual([403, 'SignatureDoesNotMatch']);
    const otherKey = await attempt(url.replace('presigned.md', 'elsewhere.md'), BODY);
    expect([otherKey.status, await code(otherKey)]).toEqual([403, 'SignatureDoesNotMatch']);
    // One hex digit of the signature changed (to another digit, whatever it was).
    const forged = await attempt(
      url.replace(
        /X-Amz-Signature=([0-9a-f])/,
        (_, digit: string) => `X-Amz-Signature=${digit === '0' ? '1' : '0'}`,
      ),
      BODY,
    );
    expect(forged.status).toBe(403);

    const ok = await attempt(url, BODY);
    expect(ok.status).toBe(200);
    expect(await read(key)).toBe(BODY);

    const expired = await getSignedUrl(
      stack.s3.client,
      new PutObjectCommand({ Bucket: stack.s3.bucket, Key: key, ContentType: 'text/markdown' }),
      { expiresIn: 60, signingDate: new Date(Date.now() - 3600_000) },
    );
    const late = await attempt(expired, BODY);
    expect([late.status, await code(late)]).toEqual([403, 'AccessDenied']);
  });

  it('answers CORS for the allowed origin only', async () => {
    const preflight = (origin: string) =>
      fetch(objectUrl('tenants/acme/uploads/x.md'), {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': 'PUT',
          'access-control-request-headers': 'content-type',
        },
      });
    const allowed = await preflight(PLAYGROUND);
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(PLAYGROUND);
    expect(allowed.headers.get('access-control-allow-methods')).toContain('PUT');

    const other = await preflight('http://evil.example');
    expect(other.status).toBe(403);
    expect(other.headers.get('access-control-allow-origin')).toBeNull();

    // The upload itself, from each origin.
    const key = 'tenants/acme/uploads/cors.md';
    const fromPlayground = await fetch(await presign(key), {
      method: 'PUT',
      body: BODY,
      headers: { 'content-type': 'text/markdown', origin: PLAYGROUND },
    });
    expect(fromPlayground.status).toBe(200);
    expect(fromPlayground.headers.get('access-control-allow-origin')).toBe(PLAYGROUND);
    const fromElsewhere = await fetch(await presign(key), {
      method: 'PUT',
      body: BODY,
      headers: { 'content-type': 'text/markdown', origin: 'http://evil.example' },
    });
    expect(fromElsewhere.status).toBe(403);
    expect(fromElsewhere.headers.get('access-control-allow-origin')).toBeNull();

    // An origin added later (startLocalApi adds the playground's).
    stack.s3.allowOrigin('http://localhost:38081');
    expect((await preflight('http://localhost:38081')).status).toBe(200);
  });
});
