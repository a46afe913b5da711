/**
 * DOCX text extraction with mammoth, loaded on the first Word document only. mammoth turns the
 * document into HTML, which keeps paragraphs, headings, lists and tables apart; the HTML parser
 * then turns it into text. A DOCX is a zip archive: its directory is read first (yauzl), and a
 * document whose markup unpacks past {@link MAX_DOCX_MARKUP_BYTES} is refused before anything is
 * inflated, since mammoth holds the markup, and a tree of it, in memory (a 1 MB file that
 * unpacks to 315 MB of XML took a process past 4.7 GB).
 */
import { DocumentRejectedError } from '../../core/ingestion/types';
import { corruptFile, loadLibrary, type Extracted } from './shared';
import { htmlToText } from './html';

/**
 * The most XML a Word document may unpack to, as its zip directory declares: far above the
 * markup of a document of thousands of pages. Images do not count (they are dropped).
 */
const MAX_DOCX_MARKUP_BYTES = 64 * 1024 * 1024;

/** The unpacked size of the archive's markup parts (`.xml`, `.rels`), as its directory says. */
async function markupBytes(buffer: Buffer): Promise<number> {
  const yauzl = await loadLibrary('yauzl', () => import('yauzl'));
  const zip = await yauzl.fromBufferPromise(buffer, { lazyEntries: true });
  return new Promise<number>((resolve, reject) => {
    let total = 0;
    zip.on('entry', (entry: { fileName: string; uncompressedSize: number }) => {
      if (/\.(xml|rels)$/i.test(entry.fileName)) total += entry.uncompressedSize;
      zip.readEntry();
    });
    zip.on('end', () => resolve(total));
    zip.on('error', reject);
    zip.readEntry();
  });
}

/** mammoth's style map entry for paragraphs in Word's Title style. */
const TITLE_STYLE = "p[style-name='Title'] => h1:fresh";

/**
 * Extracts the text of a .docx file; the title is its first heading (a paragraph in Word's Title
 * style counts as one).
 * @throws DocumentRejectedError `corrupt_file` when the file is not a readable Word document,
 *   `too_large` when its markup unpacks past {@link MAX_DOCX_MARKUP_BYTES}.
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
