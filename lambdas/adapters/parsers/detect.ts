/**
 * Which format an object is in: its content type when that says something, else its key's
 * extension; PDF and DOCX magic bytes override both, so a misnamed file is still read right.
 */
import {
  containerFormat,
  CONTENT_TYPES,
  EXTENSIONS,
  extensionOf,
  GENERIC_CONTENT_TYPES,
  mediaTypeOf,
  SUPPORTED_TYPES,
} from '../../core/ingestion/formats';
import { DocumentRejectedError, type SourceFormat } from '../../core/ingestion/types';
import { looksBinary } from './text';

/** The format, and the charset the content type names (if any). */
export interface Detected {
  readonly format: SourceFormat;
  readonly charset?: string;
}

/**
 * Detects the format of an object.
 * @throws DocumentRejectedError `unsupported_format` naming the extension or content type.
 */
export function detectFormat(
  bytes: Uint8Array,
  hint: { key: string; contentType?: string },
): Detected {
  const { mediaType, charset } = parseContentType(hint.contentType);
  const withCharset = (format: SourceFormat): Detected =>
    charset !== undefined ? { format, charset } : { format };

  const sniffed = containerFormat(bytes);
  if (sniffed !== undefined) return { format: sniffed };

  const extension = extensionOf(hint.key);
  const byExtension = extension !== undefined ? EXTENSIONS[extension] : undefined;
  const byContentType = CONTENT_TYPES[mediaType];
  // text/plain is what many tools send for any text file: a .md or .html key says more.
  if (
    byContentType === 'text' &&
    byExtension !== undefined &&
    byExtension !== 'pdf' &&
    byExtension !== 'docx'
  ) {
    return withCharset(byExtension);
  }
  if (byContentType !== undefined) return withCharset(byContentType);
  if (byExtension !== undefined) return withCharset(byExtension);

  if (extension === undefined && GENERIC_CONTENT_TYPES.has(mediaType)) {
    // No name and no type to go by: read it if it is text.
    if (looksLikeHtml(bytes)) return withCharset('html');
    if (bytes.length > 0 && !looksBinary(bytes, charset)) return withCharset('text');
  }
  const what =
    extension !== undefined
      ? `".${extension}"`
      : !GENERIC_CONTENT_TYPES.has(mediaType)
        ? `"${mediaType}"`
        : 'with no extension';
  throw new DocumentRejectedError(
    'unsupported_format',
    `Unsupported file type ${what}: supported types are ${SUPPORTED_TYPES}.`,
  );
}

function parseContentType(contentType: string | undefined): {
  mediaType: string;
  charset?: string;
} {
  const mediaType = mediaTypeOf(contentType);
  const params = (contentType ?? '').split(';').slice(1);
  for (const param of params) {
    const [name = '', value = ''] = param.split('=');
    if (name.trim().toLowerCase() === 'charset' && value.trim() !== '') {
      return { mediaType, charset: value.trim().replace(/^"(.*)"$/, '$1') };
    }
  }
  return { mediaType };
}

function looksLikeHtml(bytes: Uint8Array): boolean {
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.byteLength, 1024))
    .toString('utf8')
    .replace(/^\uFEFF/, '')
    .trimStart()
    .toLowerCase();
  return head.startsWith('<!doctype html') || head.startsWith('<html');
}
