/**
 * Plain text: decoding (by byte order mark, declared charset, UTF-8, or the legacy encoding
 * chardet detects) and the check that rejects binary data posing as text.
 */
import { isUtf8 } from 'node:buffer';
import { TextDecoder } from 'node:util';
import { analyse } from 'chardet';
import type Iconv from 'iconv-lite';
import type { Extracted } from './shared';

const SAMPLE_BYTES = 64 * 1024;

let iconvModule: typeof Iconv | undefined;

/**
 * iconv-lite with its code tables (about 480 KB) is required on the first legacy-encoded text,
 * not when a function loads; a Lambda bundle ships it beside itself (lib/bundling.ts).
 */
function iconv(): typeof Iconv {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (iconvModule ??= require('iconv-lite') as typeof Iconv);
}

/**
 * Decodes bytes as text in the charset `charsetOf` finds. A UTF-8 BOM is dropped. Invalid
 * sequences become U+FFFD rather than failing.
 */
function decodeText(bytes: Uint8Array, charset?: string): string {
  return decodeAs(bytes, charsetOf(bytes, charset));
}

/**
 * UTF-8 and UTF-16 by the platform's TextDecoder; legacy encodings by iconv-lite, since Node's
 * TextDecoder reads Windows-1252's 0x80-0x9F (curly quotes, the euro sign) as control codes.
 */
function decodeAs(bytes: Uint8Array, encoding: string): string {
  if (encoding.startsWith('utf-')) return new TextDecoder(encoding).decode(bytes);
  return iconv().decode(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), encoding);
}

/**
 * How much more likely (in chardet's confidence points) another single-byte encoding must be
 * before it is preferred to Windows-1252: on a short sample chardet often ranks a Central
 * European code page first for plain French or German text.
 */
const WESTERN_MARGIN = 10;
const WESTERN = 'windows-1252';

/**
 * The charset to read `bytes` in: the one a byte order mark names; else the one the content
 * type declares, when it is a known encoding (a declared UTF-8 that the bytes are not is taken
 * for the usual mislabel); else UTF-8 when the bytes are valid UTF-8; else the legacy encoding
 * chardet judges most likely (Shift_JIS, GB18030, KOI8-R, ...), with Windows-1252 (which
 * includes Latin-1) preferred unless another is clearly more likely, and when chardet has no
 * guess. The result is a WHATWG encoding name.
 */
export function charsetOf(bytes: Uint8Array, declared?: string): string {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
  const sample = bytes.subarray(0, SAMPLE_BYTES);
  const label = declared !== undefined ? encodingOf(declared) : undefined;
  if (label !== undefined && label !== 'utf-8') return label;
  if (isUtf8Sample(sample, bytes.length > sample.length)) return 'utf-8';
  const guesses = analyse(sample).flatMap((match) => {
    const encoding = encodingOf(match.name);
    return encoding !== undefined && !encoding.startsWith('utf-')
      ? [{ encoding, confidence: match.confidence }]
      : [];
  });
  const top = guesses[0];
  const western = guesses.find((g) => g.encoding === WESTERN);
  if (top === undefined) return WESTERN;
  if (western !== undefined && top.confidence - western.confidence <= WESTERN_MARGIN)
    return WESTERN;
  return top.encoding;
}

/**
 * The WHATWG name of an encoding label (so `latin1` and `ISO-8859-1` are Windows-1252, as in a
 * browser), or undefined when it is not one this parser can decode.
 */
function encodingOf(label: string): string | undefined {
  let encoding: string;
  try {
    encoding = new TextDecoder(label).encoding;
  } catch {
    return undefined; // RangeError: not an encoding label
  }
  return encoding.startsWith('utf-') || iconv().encodingExists(encoding) ? encoding : undefined;
}

/** Valid UTF-8, allowing a character cut at the end of a sample taken from a longer text. */
function isUtf8Sample(sample: Uint8Array, truncated: boolean): boolean {
  if (isUtf8(sample)) return true;
  if (!truncated) return false;
  for (let cut = 1; cut <= 3 && cut < sample.length; cut += 1) {
    if (isUtf8(sample.subarray(0, sample.length - cut))) return true;
  }
  return false;
}

/**
 * Whether bytes look like binary data rather than text: judged on the first 64 KiB, binary
 * means NUL bytes above 1% (text never has them, most binary formats are full of them) or,
 * once decoded (as `decodeText` would), more than 10% control (C0 or C1) or undecodable
 * characters.
 * UTF-16 with a BOM is text.
 */
export function looksBinary(bytes: Uint8Array, charset?: string): boolean {
  const encoding = charsetOf(bytes, charset);
  if (encoding.startsWith('utf-16')) return false;
  const sample = bytes.subarray(0, SAMPLE_BYTES);
  if (sample.length === 0) return false;
  let nul = 0;
  for (const byte of sample) if (byte === 0) nul += 1;
  if (nul / sample.length > 0.01) return true;
  // A cut in the middle of a multi-byte character at the end of the sample is not a fault.
  const decoded = decodeAs(sample, encoding).slice(0, -1);
  let odd = 0;
  for (let i = 0; i < decoded.length; i += 1) {
    const code = decoded.charCodeAt(i);
    const control =
      (code < 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d && code !== 0x0c) ||
      (code >= 0x7f && code <= 0x9f);
    if (control || code === 0xfffd) odd += 1;
  }
  return odd / Math.max(decoded.length, 1) > 0.1;
}

/** Extracts plain text (no title: a text file does not carry one). */
export function extractText(bytes: Uint8Array, charset?: string): Extracted {
  return { text: decodeText(bytes, charset) };
}
