/**
 * The file formats Groundwork reads: by extension and by content type. The parser detects a
 * format with these tables, and the documents API admits uploads of these types only.
 */
import type { SourceFormat } from './types';

export const EXTENSIONS: Readonly<Record<string, SourceFormat>> = {
  txt: 'text',
  text: 'text',
  csv: 'text',
  tsv: 'text',
  json: 'text',
  log: 'text',
  md: 'markdown',
  markdown: 'markdown',
  html: 'html',
  htm: 'html',
  xhtml: 'html',
  pdf: 'pdf',
  docx: 'docx',
};

export const CONTENT_TYPES: Readonly<Record<string, SourceFormat>> = {
  'text/plain': 'text',
  'text/csv': 'text',
  'text/tab-separated-values': 'text',
  'application/json': 'text',
  'text/markdown': 'markdown',
  'text/x-markdown': 'markdown',
  'text/html': 'html',
  'application/xhtml+xml': 'html',
  'application/pdf': 'pdf',
  'application/x-pdf': 'pdf',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
};

/** The content type a file of each format is uploaded with (`groundwork ingest`). */
export const UPLOAD_CONTENT_TYPES: Readonly<Record<SourceFormat, string>> = {
  text: 'text/plain; charset=utf-8',
  markdown: 'text/markdown; charset=utf-8',
  html: 'text/html; charset=utf-8',
  pdf: 'application/pdf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
};

/**
 * Content types that say nothing about the format (S3's default, or what clients send for a name
 * they do not know: curl sends `application/octet-stream` for .md and .docx): the extension
 * decides instead.
 */
export const GENERIC_CONTENT_TYPES: ReadonlySet<string> = new Set([
  '',
  'application/octet-stream',
  'binary/octet-stream',
  'application/binary',
  'application/unknown',
]);

/** The supported types, for messages. */
export const SUPPORTED_TYPES =
  '.txt, .md, .html, .pdf and .docx (and .csv, .json and .log as plain text)';

/** A content type's media type, lower case, without its parameters (`text/plain; charset=utf-8`). */
export function mediaTypeOf(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}

/** The lower-case extension of a key's or file name's last path segment, without the dot. */
export function extensionOf(key: string): string | undefined {
  const name = key.slice(key.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  if (dot <= 0 || dot === name.length - 1) return undefined;
  return name.slice(dot + 1).toLowerCase();
}

const PDF_MAGIC = [...'%PDF-'].map((c) => c.charCodeAt(0));
const ZIP_MAGIC = [0x50, 0x4b, 0x03, 0x04];
const DOCX_MAIN_PART = [...'word/document.xml'].map((c) => c.charCodeAt(0));

function startsWith(bytes: Uint8Array, prefix: readonly number[]): boolean {
  return prefix.every((b, i) => bytes[i] === b);
}

function holds(bytes: Uint8Array, needle: readonly number[]): boolean {
  const first = needle[0]!;
  for (let i = bytes.indexOf(first); i !== -1; i = bytes.indexOf(first, i + 1)) {
    if (needle.every((b, k) => bytes[i + k] === b)) return true;
  }
  return false;
}

/**
 * The format the bytes themselves declare, whatever the name or type says: PDF (its header at
 * the very start: a text that merely mentions "%PDF-" stays text) or DOCX (a ZIP whose entry
 * names, stored uncompressed, include word/document.xml); undefined for anything else.
 */
export function containerFormat(bytes: Uint8Array): 'pdf' | 'docx' | undefined {
  if (startsWith(bytes, PDF_MAGIC)) return 'pdf';
  if (startsWith(bytes, ZIP_MAGIC) && holds(bytes, DOCX_MAIN_PART)) return 'docx';
  return undefined;
}
