/**
 * DOCX text extraction with mammoth, loaded on the first Word document only. mammoth turns the
 * document into HTML, which keeps paragraphs, headings, lists and tables apart; the HTML parser
 * then turns it into text.
 */
import { corruptFile, loadLibrary, type Extracted } from './shared';
import { htmlToText } from './html';

/**
 * Extracts the text of a .docx file; the title is its first heading.
 * @throws DocumentRejectedError `corrupt_file` when the file is not a readable Word document.
 */
export async function extractDocx(bytes: Uint8Array): Promise<Extracted> {
  const mammoth = await loadLibrary('mammoth', () => import('mammoth'));
  let html: string;
  try {
    const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    // Images are dropped rather than inlined as base64 data: they are not searchable text.
    const result = await mammoth.convertToHtml(
      { buffer },
      { convertImage: mammoth.images.imgElement(async () => ({ src: '' })) },
    );
    html = result.value;
  } catch (err) {
    throw corruptFile('Word document', err);
  }
  const { text, firstHeading } = await htmlToText(html);
  return { text, ...(firstHeading !== undefined ? { title: firstHeading } : {}) };
}
