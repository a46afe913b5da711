/**
 * Plain text: decoding (UTF-8 by default, UTF-16 by its byte order mark, or the charset the
 * content type names) and the check that rejects binary data posing as text.
 */
import { TextDecoder } from 'node:util';
import type { Extracted } from './shared';

const SAMPLE_BYTES = 64 * 1024;

/**
 * Decodes bytes as text. A UTF-8 BOM is dropped; a UTF-16 BOM selects UTF-16; otherwise the
 * `charset` (from a content type) is used when it is a known encoding, else UTF-8. Invalid
 * sequences become U+FFFD rather than failing.
 */
export function decodeText(bytes: Uint8Array, charset?: string): string {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder('utf-16le').decode(bytes);
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder('utf-16be').decode(bytes);
  return decoderFor(charset).decode(bytes);
}

function decoderFor(charset: string | undefined): TextDecoder {
  if (charset !== undefined) {
    try {
      return new TextDecoder(charset);
    } catch {
      // An unknown label (RangeError): UTF-8 is the best guess.
    }
  }
  return new TextDecoder('utf-8');
}

/**
 * Whether bytes look like binary data rather than text: judged on the first 64 KiB, binary
 * means NUL bytes above 1% (text never has them, most binary formats are full of them) or,
 * once decoded (as `decodeText` would), more than 10% control or undecodable characters.
 * UTF-16 with a BOM is text.
 */
export function looksBinary(bytes: Uint8Array, charset?: string): boolean {
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff)) {
    return false;
  }
  const sample = bytes.subarray(0, SAMPLE_BYTES);
  if (sample.length === 0) return false;
  let nul = 0;
  for (const byte of sample) if (byte === 0) nul += 1;
  if (nul / sample.length > 0.01) return true;
  // A cut in the middle of a multi-byte character at the end of the sample is not a fault.
  const decoded = decoderFor(charset).decode(sample).slice(0, -1);
  let odd = 0;
  for (let i = 0; i < decoded.length; i += 1) {
    const code = decoded.charCodeAt(i);
    const control = code < 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d && code !== 0x0c;
    if (control || code === 0xfffd) odd += 1;
  }
  return odd / Math.max(decoded.length, 1) > 0.1;
}

/** Extracts plain text (no title: a text file does not carry one). */
export function extractText(bytes: Uint8Array, charset?: string): Extracted {
  return { text: decodeText(bytes, charset) };
}
