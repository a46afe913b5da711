/** The `ObjectStore` port over the AWS SDK v3 S3 client (S3 in AWS, s3rver locally). */
import {
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsCommand,
  S3ServiceException,
  type S3Client,
} from '@aws-sdk/client-s3';
import type { ListedObject, ObjectInfo, ObjectStore } from '../../core/ingestion/object-store';

/** S3's answer for a key that does not exist (to a caller that may list the bucket). */
export function isNotFound(err: unknown): boolean {
  return (
    err instanceof S3ServiceException &&
    (err.name === 'NotFound' || err.name === 'NoSuchKey' || err.$metadata?.httpStatusCode === 404)
  );
}

export function createS3ObjectStore(client: S3Client): ObjectStore {
  return {
    async head(bucket, key) {
      try {
        const out = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
        return toInfo(out);
      } catch (err) {
        if (isNotFound(err)) return null;
        throw err;
      }
    },
    async get(bucket, key) {
      try {
        const out = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
        const bytes = out.Body ? await out.Body.transformToByteArray() : new Uint8Array();
        return { info: toInfo(out), bytes };
      } catch (err) {
        if (isNotFound(err)) return null;
        throw err;
      }
    },
    // ListObjects (version 1) with markers: the local S3 emulator cannot write version 2's
    // continuation token on Node 17 and later (it encrypts it with DES, which OpenSSL 3 leaves to
    // its legacy provider), so a bucket of more than 1,000 objects would not list. S3 serves both.
    async list(bucket) {
      const out: ListedObject[] = [];
      let marker: string | undefined;
      for (;;) {
        const page = await client.send(
          new ListObjectsCommand({ Bucket: bucket, ...(marker ? { Marker: marker } : {}) }),
        );
        const contents = page.Contents ?? [];
        for (const o of contents) {
          if (o.Key) out.push({ key: o.Key, lastModified: o.LastModified ?? new Date(0) });
        }
        const last = page.NextMarker ?? contents.at(-1)?.Key;
        if (!page.IsTruncated || last === undefined) return out;
        marker = last;
      }
    },
  };
}

function toInfo(out: {
  ContentLength?: number;
  LastModified?: Date;
  ContentType?: string;
  ETag?: string;
}): ObjectInfo {
  return {
    size: out.ContentLength ?? 0,
    lastModified: out.LastModified ?? new Date(0),
    ...(out.ContentType ? { contentType: out.ContentType } : {}),
    ...(out.ETag ? { etag: out.ETag } : {}),
  };
}
