/**
 * Seed 004's `POST /api/upload`, a thin adapter over the documents use case: a multipart file
 * stored under the caller's tenant prefix with the same type, size, name and scope rules as
 * `POST /api/documents`, and indexed by its S3 event like any upload. Its size limit (what a
 * buffered Lambda request can carry): docs/decisions/0144-seed-search-and-upload.md.
 */
import type { Documents } from '../core/documents/documents';
import { ValidationError } from '../core/errors';
import * as z from '../core/zod';
import { toDetail } from '../documents/handler';
import { createHttpHandler, parseOrThrow, type HttpHandlerDeps } from '../http/http-handler';
import { parseMultipart } from '../http/multipart';
import { UPLOAD_FIELD, type SeedUploadResponse } from './search-upload-schema';

const noBody = z.looseObject({});

/**
 * POST /api/upload: one file in the `file` field of a multipart form, at most
 * MAX_UPLOAD_BODY_BYTES of body; optional text fields `title` and `visibility` (`tenant` or
 * `user`). Answers 202 with the queued document; GET /api/documents/{id} follows its indexing.
 */
export function makeSeedUploadHandler(deps: HttpHandlerDeps & { documents: Documents }) {
  return createHttpHandler(
    deps,
    // The table's `upload` entry makes the body bytes of at most MAX_UPLOAD_BODY_BYTES.
    { route: 'api-upload', schema: noBody },
    async ({ identity, headers, rawBody }) => {
      const form = await parseMultipart(rawBody ?? Buffer.alloc(0), headers['content-type']);
      // A part without a file name arrives as a text field: say what the file part lacks.
      if (Object.hasOwn(form.fields, UPLOAD_FIELD))
        throw new ValidationError(
          'file: send it as a file, with a file name (curl -F "file=@name.txt")',
        );
      const fields = parseOrThrow(uploadFieldsSchema, form.fields);
      const file = form.files.find((f) => f.field === UPLOAD_FIELD);
      const other = form.files.find((f) => f.field !== UPLOAD_FIELD);
      if (other) throw new ValidationError(`${other.field}: send the file in the "file" field`);
      if (!file) throw new ValidationError('file: a file is required (curl -F "file=@name.txt")');
      if (file.bytes.byteLength === 0) throw new ValidationError('file: the file is empty');
      const stored = await deps.documents.storeUpload(
        identity,
        {
          filename: file.filename,
          contentType: file.contentType,
          visibility: fields.visibility,
          ...(fields.title ? { title: fields.title } : {}),
        },
        file.bytes,
      );
      const body: SeedUploadResponse = {
        filename: file.filename,
        document: toDetail(stored.document),
      };
      return {
        status: 202,
        headers: { location: `/api/documents/${stored.documentId}` },
        body,
      };
    },
  );
}

/** The upload form's text fields (none is required). */
const uploadFieldsSchema = z.strictObject({
  title: z.optional(z.string().check(z.trim(), z.minLength(1), z.maxLength(500))),
  visibility: z._default(z.enum(['tenant', 'user']), 'tenant'),
});
