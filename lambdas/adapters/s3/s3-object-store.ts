/** The `ObjectStore` port over the AWS SDK v3 S3 client (S3 in AWS, s3rver locally). */
import {
  GetObjectCommand,
  HeadObjectCommand,
  paginateListObjectsV2,
  S3ServiceException,
  type S3Client,
} from '@aws-sdk/client-s3';
import type { ListedObject, ObjectInfo, ObjectStore } from '../../core/ingestion/object-store';

function isNotFound(err: unknown): boolean {
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
    async list(bucket) {
      const out: ListedObject[] = [];
      for await (const page of paginateListObjectsV2({ client }, { Bucket: bucket })) {
        for (const o of page.Contents ?? []) {
          if (o.Key) out.push({ key: o.Key, lastModified: o.LastModified ?? new Date(0) });
        }
      }
      return out;
    },
  };
}

function toInfo(out: {
  ContentLength?: number;
  LastModified?: Date;
  ContentType?: string;
}): ObjectInfo {
  return {
    size: out.ContentLength ?? 0,
    lastModified: out.LastModified ?? new Date(0),
    ...(out.ContentType ? { contentType: out.ContentType } : {}),
  };
}
