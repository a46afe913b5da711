/** The documents API's `UploadBucket` port over the AWS SDK v3 S3 client (s3rver locally). */
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { UploadBucket } from '../../core/documents/documents';
import { isNotFound } from './s3-object-store';

/** `CopySource` wants the key URL-encoded, with its slashes kept. */
const copySource = (bucket: string, key: string) =>
  `${bucket}/${key.split('/').map(encodeURIComponent).join('/')}`;

export function createUploadBucket(client: S3Client, bucket: string): UploadBucket {
  return {
    name: bucket,

    async presignPut(key, { contentType, contentLength, expiresInSeconds }) {
      const command = new PutObjectCommand({
        Bucket: bucket,
        Key: key,
        ContentType: contentType,
        ContentLength: contentLength,
      });
      // Both headers are signed: S3 refuses a PUT whose type or length differs from the request.
      return getSignedUrl(client, command, {
        expiresIn: expiresInSeconds,
        signableHeaders: new Set(['content-type', 'content-length']),
      });
    },

    async put(key, body, contentType) {
      await client.send(
        new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: contentType }),
      );
    },

    async delete(key) {
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
    },

    async touch(key) {
      let contentType: string | undefined;
      try {
        const head = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
        contentType = head.ContentType;
      } catch (err) {
        if (isNotFound(err)) return false;
        throw err;
      }
      // Copying an object onto itself (with REPLACE, as S3 requires) emits ObjectCreated:Copy.
      try {
        await client.send(
          new CopyObjectCommand({
            Bucket: bucket,
            Key: key,
            CopySource: copySource(bucket, key),
            MetadataDirective: 'REPLACE',
            ...(contentType ? { ContentType: contentType } : {}),
          }),
        );
      } catch (err) {
        // Removed between the two requests (a removal racing the retry).
        if (isNotFound(err)) return false;
        throw err;
      }
      return true;
    },
  };
}
