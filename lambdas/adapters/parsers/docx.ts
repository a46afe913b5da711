/**
 * DOCX text extraction with mammoth, loaded on the first Word document only. mammoth turns the
 * document into HTML, which keeps paragraphs, headings, lists and tables apart; the HTML parser
 * then turns it into text. A DOCX is a zip archive: its directory is read first (yauzl), and a
 * document whose markup unpacks past {@link MAX_DOCX_MARKUP_BYTES} is refused before anything is
 * inflated, since mammoth holds the markup, and a tree of it, in memory (a 1 MB file that
 * unpacks to 315 MB of XML took a process past 4.7 GB). The markup is then inflated and its
 * elements counted before mammoth reads it: dense markup costs mammoth about 2.3 KB per element
 * (8 MB of runs of one letter took 1.67 GB), and an entry that inflates past the size its
 * directory declares is refused as corrupt when it does.
 */
import { DocumentRejectedError } from '../../core/ingestion/types';
import { corruptFile, loadLibrary, type Extracted } from './shared';
import { htmlToText } from './html';

/**
 * The most XML a Word document may unpack to, as its zip directory declares: far above the
 * markup of a document of thousands of pages. Images do not count (they are dropped).
 */
const MAX_DOCX_MARKUP_BYTES = 64 * 1024 * 1024;

/**
 * The most elements the markup may hold: a document of a few hundred pages has tens of
 * thousands. mammoth needs about 2.3 KB for each, and the ingest function has 1,024 MB.
 */
export const MAX_DOCX_ELEMENTS = 300_000;

const MARKUP_PART = /\.(xml|rels)$/i;
const LESS_THAN = 0x3c;

/** Whether `byte` is an ASCII letter: what follows the `<` of a start or empty tag. */
const isLetter = (byte: number | undefined): boolean =>
  byte !== undefined && (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7a;

/** The unpacked size of the archive's markup parts (`.xml`, `.rels`), as its directory says. */
async function markupBytes(buffer: Buffer): Promise<number> {
  const yauzl = await loadLibrary('yauzl', () => import('yauzl'));
  const zip = await yauzl.fromBufferPromise(buffer, { lazyEntries: true });
  let total = 0;
  for await (const entry of zip.eachEntry()) {
    if (MARKUP_PART.test(entry.fileName)) total += entry.uncompressedSize;
  }
  return total;
}

/**
 * Whether the markup parts hold more than `limit` elements (start and empty tags: a `<` followed
 * by a letter, as the HTML parser counts them), counted as they inflate and stopping at the
 * limit. yauzl fails an entry that inflates past its declared size.
 */
async function markupHasMoreElementsThan(buffer: Buffer, limit: number): Promise<boolean> {
  const yauzl = await loadLibrary('yauzl', () => import('yauzl'));
  const zip = await yauzl.fromBufferPromise(buffer, { lazyEntries: true });
  let count = 0;
  for await (const entry of zip.eachEntry()) {
    if (!MARKUP_PART.test(entry.fileName)) continue;
    const stream = await zip.openReadStreamPromise(entry);
    // A `<` that ends one chunk is a tag if the next chunk starts with a letter.
    let openAtEnd = false;
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      if (chunk.length === 0) continue;
      if (openAtEnd && isLetter(chunk[0])) count += 1;
      openAtEnd = chunk[chunk.length - 1] === LESS_THAN;
      for (let at = chunk.indexOf(LESS_THAN); at !== -1; at = chunk.indexOf(LESS_THAN, at + 1)) {
        if (isLetter(chunk[at + 1])) count += 1;
      }
      if (count > limit) {
        stream.destroy();
        zip.close();
        return true;
      }
    }
  }
  return false;
}

/** mammoth's style map entry for paragraphs in Word's Title style. */
const TITLE_STYLE = "p[style-name='Title'] => h1:fresh";

/**
 * Extracts the text of a .docx file; the title is its first heading (a paragraph in Word's Title
 * style counts as one).
 * @throws DocumentRejectedError `corrupt_file` when the file is not a readable Word document,
 *   or a part inflates past its declared size; `too_large` when its markup unpacks past
 *   {@link MAX_DOCX_MARKUP_BYTES} or holds more than {@link MAX_DOCX_ELEMENTS} elements.
 */
export async function extractDocx(bytes: Uint8Array): Promise<Extracted> {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let unpacked: number;
  try {
    unpacked = await markupBytes(buffer);
  } catch (err) {
    throw corruptFile('Word document', err);
  }
  if (unpacked > MAX_DOCX_MARKUP_BYTES) {
    throw new DocumentRejectedError(
      'too_large',
      `The Word document unpacks to ${(unpacked / 1048576).toFixed(0)} MB of markup; the limit is ${MAX_DOCX_MARKUP_BYTES / 1048576} MB. Split it into smaller documents.`,
    );
  }
  let dense: boolean;
  try {
    dense = await markupHasMoreElementsThan(buffer, MAX_DOCX_ELEMENTS);
  } catch (err) {
    throw corruptFile('Word document', err);
  }
  if (dense) {
    throw new DocumentRejectedError(
      'too_large',
      `The Word document's markup has more than ${MAX_DOCX_ELEMENTS.toLocaleString('en-US')} elements. Split it into smaller documents.`,
    );
  }
  const mammoth = await loadLibrary('mammoth', () => import('mammoth'));
  let html: string;
  try {
    // Images are dropped rather than inlined as base64 data: they are not searchable text.
    const result = await mammoth.convertToHtml(
      { buffer },
      {
        // Word's Title style is a heading too (mammoth leaves it a plain paragraph), and so the
        // document's title when it comes first.
        styleMap: [TITLE_STYLE],
        convertImage: mammoth.images.imgElement(async () => ({ src: '' })),
      },
    );
    html = result.value;
  } catch (err) {
    throw corruptFile('Word document', err);
  }
  const { text, firstHeading } = await htmlToText(html);
  return { text, ...(firstHeading !== undefined ? { title: firstHeading } : {}) };
}
