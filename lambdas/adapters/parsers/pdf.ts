/**
 * PDF text extraction with unpdf (a serverless build of PDF.js, pure JavaScript). unpdf and its
 * PDF.js bundle (about 1.5 MB) are loaded on the first PDF only.
 */
import { DocumentRejectedError } from '../../core/ingestion/types';
import { corruptFile, loadLibrary, type Extracted } from './shared';

/** PDF.js logs warnings to the console unless told otherwise; errors still surface as throws. */
const VERBOSITY_ERRORS = 0;

/**
 * Extracts the text of every page (pages separated by a blank line) and the title from the
 * document information dictionary, or from the XMP metadata's dc:title.
 * @throws DocumentRejectedError `corrupt_file` when PDF.js cannot read the file, including
 *   password-protected files.
 */
export async function extractPdf(bytes: Uint8Array): Promise<Extracted> {
  const unpdf = await loadLibrary('unpdf', async () => {
    const module = await import('unpdf');
    await module.getResolvedPDFJS(); // resolve the bundled PDF.js now, as part of loading
    return module;
  });
  let pdf: Awaited<ReturnType<typeof unpdf.getDocumentProxy>>;
  try {
    // PDF.js takes ownership of (detaches) the buffer it is given: pass a copy so the caller's
    // bytes stay usable.
    pdf = await unpdf.getDocumentProxy(new Uint8Array(bytes), { verbosity: VERBOSITY_ERRORS });
  } catch (err) {
    if (err instanceof Error && err.name === 'PasswordException') {
      throw new DocumentRejectedError(
        'corrupt_file',
        'Could not read the PDF: it is password-protected. Remove the password, then re-upload the file.',
      );
    }
    throw corruptFile('PDF', err);
  }
  try {
    const { text: pages } = await unpdf.extractText(pdf, { mergePages: false });
    const title = await readTitle(pdf);
    return { text: pages.join('\n\n'), ...(title !== undefined ? { title } : {}) };
  } catch (err) {
    throw corruptFile('PDF', err);
  } finally {
    // Frees PDF.js's caches; a failure here must not hide the result or the original error.
    await pdf.destroy().catch(() => undefined);
  }
}

/** The Info dictionary's /Title, else XMP dc:title; a broken metadata block is not fatal. */
async function readTitle(pdf: {
  getMetadata(): Promise<{ info: object; metadata: { get(name: string): unknown } | null }>;
}): Promise<string | undefined> {
  try {
    const { info, metadata } = await pdf.getMetadata();
    const infoTitle: unknown = (info as { Title?: unknown }).Title;
    if (typeof infoTitle === 'string' && infoTitle.trim() !== '') {
      return stripProducerPrefix(infoTitle);
    }
    const xmpTitle = metadata?.get('dc:title');
    return typeof xmpTitle === 'string' && xmpTitle.trim() !== '' ? xmpTitle : undefined;
  } catch {
    return undefined; // the text is what matters; a document without a title is still indexed
  }
}

/** Word's PDF export sets titles like "Microsoft Word - report.docx": keep the useful part. */
function stripProducerPrefix(title: string): string {
  return title.replace(/^Microsoft (?:Word|PowerPoint|Excel) - /, '');
}
