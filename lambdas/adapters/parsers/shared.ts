/**
 * Helpers shared by the format parsers: what an extractor returns, whitespace normalisation,
 * titles, and turning library failures into errors a person can act on.
 */
import { DocumentRejectedError } from '../../core/ingestion/types';

/** What a format extractor returns before normalisation. */
export interface Extracted {
  readonly text: string;
  readonly title?: string;
}

/** A parsing library could not be loaded: a deployment fault, not a fault of the document. */
export class ParserUnavailableError extends Error {
  constructor(library: string, cause: unknown) {
    super(`Could not load the ${library} library: ${shortCause(cause)}`, { cause });
    this.name = 'ParserUnavailableError';
  }
}

/** Loads a heavy library on first use; a failure becomes a ParserUnavailableError. */
export async function loadLibrary<T>(library: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (err) {
    throw new ParserUnavailableError(library, err);
  }
}

/**
 * The rejection for a file a library failed to read, e.g. "Could not read the PDF: Invalid PDF
 * structure. Re-export or re-upload the file."
 */
export function corruptFile(what: string, cause: unknown): DocumentRejectedError {
  return new DocumentRejectedError(
    'corrupt_file',
    `Could not read the ${what}: ${shortCause(cause)}. Re-export or re-upload the file.`,
  );
}

/** First line of an error message, without a trailing period, at most 160 characters. */
function shortCause(cause: unknown): string {
  const raw = cause instanceof Error ? cause.message : String(cause);
  const line = (raw.split('\n')[0] ?? '').trim().replace(/[.:;,\s]+$/, '');
  if (line === '') return 'unknown error';
  return line.length > 160 ? `${line.slice(0, 157)}...` : line;
}

// C0 control characters other than tab and newline (form feed and vertical tab become
// newlines first), plus DEL: they carry no meaning for search and upset some tokenizers.
const CONTROL_CHARACTERS = /[\u0000-\u0008\u000E-\u001F\u007F]/g;

/**
 * Modest whitespace normalisation applied to every format: CRLF and CR become LF, form feeds
 * become line breaks, control characters go, trailing spaces go, runs of blank lines become a
 * single blank line, and the text is trimmed. Chunk offsets refer to the result.
 */
export function normalizeWhitespace(text: string): string {
  return (
    text
      .replace(/\r\n?/g, '\n')
      .replace(/[\f\v\u2028\u2029]/g, '\n')
      .replace(CONTROL_CHARACTERS, '')
      // Only the first blank of a run may start a match: from every blank, a run followed by more
      // text would be rescanned to its end (quadratic in the run's length).
      .replace(/(?<![ \t\u00a0])[ \t\u00a0]+$/gm, '')
      .replace(/\n{3,}/g, '\n\n')
      .trim()
  );
}

/** A title on one line, at most 300 characters; undefined when blank. */
export function cleanTitle(title: string | undefined | null): string | undefined {
  if (typeof title !== 'string') return undefined;
  const line = title.replace(/\s+/g, ' ').trim();
  if (line === '') return undefined;
  return line.length > 300 ? `${line.slice(0, 297)}...` : line;
}
