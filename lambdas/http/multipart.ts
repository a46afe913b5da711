/**
 * multipart/form-data bodies, as API Gateway hands them to Lambda: buffered whole (base64 when
 * binary) and decoded by `rawRequestBody` before they get here. Parsed with busboy, a maintained
 * streaming parser, fed the one buffer; every limit it has is set, so a hostile body costs at
 * most its own (already bounded) size.
 */
import busboy from 'busboy';
import { ValidationError } from '../core/errors';

/** One file part. */
interface MultipartFile {
  /** The form field it came in (`file` in `curl -F "file=@test.txt"`). */
  readonly field: string;
  /** The file name the client sent (not yet made safe for a key). */
  readonly filename: string;
  /** The part's own Content-Type (curl guesses it from the extension). */
  readonly contentType: string;
  readonly bytes: Buffer;
}

export interface MultipartForm {
  readonly files: readonly MultipartFile[];
  /** Text fields by name (a repeated field is refused). */
  readonly fields: Readonly<Record<string, string>>;
}

export interface MultipartLimits {
  /** File parts accepted; one more is a 4xx. */
  readonly files: number;
  /** Text fields accepted. */
  readonly fields: number;
  /** Largest text field value, in bytes. */
  readonly fieldBytes: number;
}

const DEFAULT_LIMITS: MultipartLimits = { files: 1, fields: 10, fieldBytes: 1024 };

/** Parses a buffered multipart/form-data body; anything malformed is a ValidationError. */
export function parseMultipart(
  body: Buffer,
  contentType: string | undefined,
  limits: MultipartLimits = DEFAULT_LIMITS,
): Promise<MultipartForm> {
  if (!contentType || !/^multipart\/form-data\s*;/i.test(contentType)) {
    return Promise.reject(
      new ValidationError('content-type: send the file as multipart/form-data (curl -F file=@...)'),
    );
  }
  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: { 'content-type': contentType },
      limits: {
        files: limits.files,
        fields: limits.fields,
        fieldSize: limits.fieldBytes,
        fieldNameSize: 100,
        parts: limits.files + limits.fields,
        headerPairs: 20,
      },
      defParamCharset: 'utf8',
    });
  } catch {
    return Promise.reject(new ValidationError('content-type: the multipart boundary is missing'));
  }
  return new Promise((resolve, reject) => {
    const files: MultipartFile[] = [];
    const fields: Record<string, string> = {};
    let failed = false;
    const fail = (message: string) => {
      if (failed) return;
      failed = true;
      reject(new ValidationError(message));
    };
    parser.on('file', (field, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      // A body that ends inside a file part fails the part's stream as well as the parser.
      stream.on('error', (err: unknown) =>
        fail(
          `body: not a valid multipart form (${err instanceof Error ? err.message : 'malformed'})`,
        ),
      );
      stream.on('end', () => {
        files.push({
          field,
          filename: info.filename ?? '',
          contentType: info.mimeType,
          bytes: Buffer.concat(chunks),
        });
      });
    });
    parser.on('field', (name, value, info) => {
      if (info.valueTruncated) return fail(`${name}: longer than ${limits.fieldBytes} bytes`);
      if (Object.hasOwn(fields, name)) return fail(`${name}: given more than once`);
      fields[name] = value;
    });
    parser.on('filesLimit', () => fail(`send one file per request (at most ${limits.files})`));
    parser.on('fieldsLimit', () => fail(`at most ${limits.fields} form fields`));
    parser.on('partsLimit', () => fail('too many parts in the form'));
    parser.on('error', (err: unknown) =>
      fail(
        `body: not a valid multipart form (${err instanceof Error ? err.message : 'malformed'})`,
      ),
    );
    parser.on('close', () => {
      if (!failed) resolve({ files, fields });
    });
    parser.end(body);
  });
}
