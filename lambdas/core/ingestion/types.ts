/**
 * Types shared by the ingestion pipeline: what a parser returns, what the chunker makes,
 * and the error a document is rejected with (its message is shown to people, so it must say
 * what to do).
 */

/** Formats we can extract text from. */
export type SourceFormat = 'text' | 'markdown' | 'html' | 'pdf' | 'docx';

/** The text extracted from one object; chunk offsets point into `text`. */
export interface ParsedDocument {
  readonly format: SourceFormat;
  readonly text: string;
  /** A title when the format carries one (HTML <title>, Markdown `# `, PDF info, DOCX heading). */
  readonly title?: string;
}

/** Extracts text from raw bytes. Throws DocumentRejectedError for unsupported or corrupt input. */
export interface DocumentParser {
  parse(bytes: Uint8Array, hint: { key: string; contentType?: string }): Promise<ParsedDocument>;
}

/** One chunk: `source.slice(start, end) === text`. */
export interface Chunk {
  readonly index: number;
  readonly text: string;
  readonly start: number;
  readonly end: number;
  readonly tokenCount: number;
}

export interface ChunkingOptions {
  /** Target chunk size in tokens. */
  readonly targetTokens: number;
  /** Tokens shared between neighbouring chunks. */
  readonly overlapTokens: number;
}

/** A document cannot be indexed; `message` is a reason a person can act on. */
export class DocumentRejectedError extends Error {
  constructor(
    readonly reasonCode:
      | 'unsupported_format'
      | 'corrupt_file'
      | 'empty_document'
      | 'too_large'
      | 'no_tenant'
      | 'invalid_metadata'
      | 'duplicate',
    message: string,
  ) {
    super(message);
    this.name = 'DocumentRejectedError';
  }
}
