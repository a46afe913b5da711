/**
 * PDF text extraction with unpdf (a serverless build of PDF.js, pure JavaScript). unpdf and its
 * PDF.js bundle (about 1.5 MB) are loaded on the first PDF only.
 */
import { EXTENSIONS } from '../../core/ingestion/formats';
import { DocumentRejectedError } from '../../core/ingestion/types';
import { MAX_HEADING_WORDS } from '../../core/text/lines';
import { corruptFile, loadLibrary, type Extracted } from './shared';

/** PDF.js logs warnings to the console unless told otherwise; errors still surface as throws. */
const VERBOSITY_ERRORS = 0;

/**
 * The most pages a PDF may have. PDF.js finds a page by walking the page tree, which a file may
 * keep flat: 5,000 such pages took 4 s to read, 20,000 took 92 s, past the ingest function's
 * timeout; the page count is read from the file's catalog before any page is.
 */
export const MAX_PDF_PAGES = 5000;

/**
 * The most text a PDF may yield, in characters: about 6 million tokens, the text of thousands of
 * dense pages. Pages are read one at a time and the reading stops past it, so that a small file
 * whose pages draw one large content stream again and again (1.5 MB that read as 1 GB of work)
 * ends as too large instead of running the function out of memory or time.
 */
const MAX_PDF_TEXT_CHARS = 25_000_000;

/**
 * Extracts the text of every page (pages separated by a blank line) and the title from the
 * document information dictionary, or from the XMP metadata's dc:title.
 * @throws DocumentRejectedError `corrupt_file` when PDF.js cannot read the file, including
 *   password-protected files; `too_large` when it has more than {@link MAX_PDF_PAGES} pages or
 *   more than {@link MAX_PDF_TEXT_CHARS} characters of text.
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
  if (pdf.numPages > MAX_PDF_PAGES) {
    await pdf.destroy().catch(() => undefined);
    throw new DocumentRejectedError(
      'too_large',
      `The PDF has ${pdf.numPages.toLocaleString('en-US')} pages; the limit is ${MAX_PDF_PAGES.toLocaleString('en-US')}. Split it into smaller documents.`,
    );
  }
  try {
    const pages = await pageTexts(pdf);
    const title = await readTitle(pdf);
    return {
      text: withoutRunningLines(pages).join('\n\n'),
      ...(title !== undefined ? { title } : {}),
    };
  } catch (err) {
    if (err instanceof DocumentRejectedError) throw err;
    throw corruptFile('PDF', err);
  } finally {
    // Frees PDF.js's caches; a failure here must not hide the result or the original error.
    await pdf.destroy().catch(() => undefined);
  }
}

/** What {@link pageTexts} needs of PDF.js's document proxy. */
export interface PdfPages {
  readonly numPages: number;
  getPage(n: number): Promise<{
    getTextContent(): Promise<{ items: readonly object[] }>;
    cleanup(): boolean;
  }>;
}

/** A text item of PDF.js: its text, whether a line ends after it, where it is and how tall. */
interface TextItem {
  readonly str?: string;
  readonly hasEOL?: boolean;
  /** The text matrix: [4] and [5] are x and the baseline's y (upwards). */
  readonly transform?: readonly number[];
  readonly height?: number;
  /** How far the text advances along the line. */
  readonly width?: number;
}

/**
 * A line that starts this much further below the one before it than the page's lines usually are
 * (its line pitch) starts a paragraph.
 */
const PARAGRAPH_GAP = 1.3;
/** The line pitch of a page with too few lines to tell it, in heights of its text. */
const DEFAULT_PITCH = 1.2;
/** A line in text this much taller or shorter than the line before starts a block (a heading). */
const SIZE_CHANGE = 0.15;

/** Space wider than this many text heights between two pieces of one line separates table cells. */
const COLUMN_GAP = 2;

/** Where a line starts: its first text item's baseline and height. */
interface LineStart {
  readonly y: number;
  readonly height: number;
}

function sameSize(a: LineStart, b: LineStart): boolean {
  return Math.abs(a.height - b.height) <= SIZE_CHANGE * Math.max(a.height, b.height);
}

/**
 * The page's usual distance from one line to the next in text of one size, in heights of the
 * text: the median of those distances (1.2 in single-spaced text, about 1.8 at 1.5 spacing).
 */
function linePitch(lines: readonly LineStart[]): number {
  const pitches: number[] = [];
  for (let i = 1; i < lines.length; i++) {
    const [above, line] = [lines[i - 1]!, lines[i]!];
    const gap = above.y - line.y;
    if (gap > 0 && sameSize(above, line)) pitches.push(gap / Math.max(above.height, line.height));
  }
  if (pitches.length < 3) return DEFAULT_PITCH;
  pitches.sort((a, b) => a - b);
  return pitches[Math.floor(pitches.length / 2)]!;
}

/**
 * A page's text as unpdf joins it, each text item and a line break where PDF.js reports one,
 * with a blank line where a line starts a paragraph: further below the line before than the
 * page's lines usually are, above it (a new column), or in text of another size (a heading and
 * its body). A PDF has no paragraphs of its own, and without the blank line a heading and the
 * paragraph under it would be read as one sentence.
 */
function pageText(items: readonly object[]): string {
  // The pieces of text, and where each line with text starts among them.
  const pieces: string[] = [];
  const starts: { piece: number; at: LineStart }[] = [];
  let lineStart = true;
  // The current line: its first piece, its tallest text, where its last text ends, whether it
  // has cells, and the whitespace piece of a gap that a further piece of text would make a cell's.
  const freshLine = () => ({
    first: pieces.length,
    height: 0,
    end: null as number | null,
    cells: false,
    gap: null as number | null,
  });
  let line = freshLine();
  for (const item of items as readonly TextItem[]) {
    if (item.str == null) continue;
    const x = item.transform?.[4];
    const y = item.transform?.[5];
    const height = item.height ?? 0;
    const blank = item.str.trim() === '';
    if (lineStart && !blank && typeof y === 'number' && height > 0) {
      starts.push({ piece: pieces.length, at: { y, height } });
      lineStart = false;
    }
    if (line.end === null) line = freshLine();
    // More than COLUMN_GAP text heights between two pieces of text on one line, as whitespace or
    // as empty space, separate the cells of a table's row.
    const wide = (space: number) => line.height > 0 && space > COLUMN_GAP * line.height;
    if (!blank && line.end !== null && typeof x === 'number') {
      if (line.gap !== null) pieces[line.gap] = ' | ';
      else if (wide(x - line.end)) pieces.push(' | ');
      line.cells ||= line.gap !== null || wide(x - line.end);
      line.gap = null;
    }
    if (blank && line.end !== null && wide(item.width ?? 0)) line.gap = pieces.length;
    pieces.push(`${item.str}${item.hasEOL ? '\n' : ''}`);
    // The gap's own whitespace counts as covered, so that the text after it opens no second cell.
    if ((!blank || line.gap === pieces.length - 1) && typeof x === 'number') {
      line.end = x + (item.width ?? 0);
      if (!blank) line.height = Math.max(line.height, height);
    }
    if (item.hasEOL) {
      // A row reads as the parsers write one, `| cell | cell |` (../text/lines.ts).
      if (line.cells) {
        pieces[line.first] = `| ${pieces[line.first]}`;
        pieces[pieces.length - 1] = `${pieces[pieces.length - 1]!.replace(/\n$/, '')} |\n`;
      }
      line = freshLine();
      lineStart = true;
    }
  }
  if (line.cells) {
    pieces[line.first] = `| ${pieces[line.first]}`;
    pieces.push(' |');
  }
  const pitch = linePitch(starts.map((s) => s.at));
  // Whether each line starts a block: the page's first line, or one set apart from the line before.
  const opens = starts.map(() => true);
  for (let i = 1; i < starts.length; i++) {
    const [above, line] = [starts[i - 1]!.at, starts[i]!.at];
    const { piece } = starts[i]!;
    opens[i] = false;
    // Only where a line break already stands: text items of one line are never split.
    if (!pieces[piece - 1]?.endsWith('\n')) continue;
    const gap = above.y - line.y;
    const height = Math.max(above.height, line.height);
    if (gap < 0 || !sameSize(above, line) || gap > PARAGRAPH_GAP * pitch * height) {
      pieces[piece] = `\n${pieces[piece]}`;
      opens[i] = true;
    }
  }
  markHeadings(pieces, starts, opens);
  return pieces.join('');
}

/**
 * Marks as a heading (`## Prices`, as the other parsers write one: lambdas/core/text/lines.ts) a
 * line that is a block of its own in text taller than the page's usual text, that holds at most
 * {@link MAX_HEADING_WORDS} words and no table cells, and that does not end as a sentence or
 * clause does. A heading of two lines or more stays unmarked.
 */
function markHeadings(
  pieces: string[],
  starts: readonly { piece: number; at: LineStart }[],
  opens: readonly boolean[],
): void {
  const heights = starts.map((s) => s.at.height).sort((a, b) => a - b);
  const usual = heights[Math.floor(heights.length / 2)] ?? 0;
  for (const [i, { piece, at }] of starts.entries()) {
    const alone = opens[i] && (i === starts.length - 1 || opens[i + 1]);
    if (!alone || at.height <= usual * (1 + SIZE_CHANGE)) continue;
    const text = pieces
      .slice(piece, starts[i + 1]?.piece ?? pieces.length)
      .join('')
      .trim();
    if (text.startsWith('|') || /[.!?,;:]$/.test(text)) continue;
    if (text.split(/\s+/).length > MAX_HEADING_WORDS) continue;
    pieces[piece] = pieces[piece]!.replace(/^(\n*)/, '$1## ');
  }
}

/**
 * The text of each page ({@link pageText}), read one page at a time (unpdf's `extractText`
 * starts every page at once).
 * @throws DocumentRejectedError `too_large` past `maxChars` ({@link MAX_PDF_TEXT_CHARS}).
 */
export async function pageTexts(pdf: PdfPages, maxChars = MAX_PDF_TEXT_CHARS): Promise<string[]> {
  const pages: string[] = [];
  let chars = 0;
  for (let n = 1; n <= pdf.numPages; n++) {
    const page = await pdf.getPage(n);
    const { items } = await page.getTextContent();
    const text = pageText(items);
    page.cleanup();
    chars += text.length;
    if (chars > maxChars) {
      throw new DocumentRejectedError(
        'too_large',
        `The PDF holds more than ${maxChars.toLocaleString('en-US')} characters of text (passed on page ${n.toLocaleString('en-US')}). Split it into smaller documents.`,
      );
    }
    pages.push(text);
  }
  return pages;
}

/** Lines at each end of a page that may be a running header or footer. */
const EDGE_LINES = 2;
/** A line at a page's edge on at least this share of the pages (and 3) is running. */
const RUNNING_SHARE = 0.5;

/** A line as it repeats from page to page: numbers (and roman page numbers) stand for any. */
function runningForm(line: string): string {
  const trimmed = line.trim().toLowerCase();
  if (/^[ivxlcdm]+$/.test(trimmed)) return '#';
  return trimmed.replace(/\d+/g, '#').replace(/\s+/g, ' ');
}

/**
 * The pages without their running headers and footers: the document's or chapter's name and the
 * page number that a printed layout repeats at the top or bottom of every page, which would
 * otherwise run into the text around them (a sentence read across a page break, a chunk that
 * seems to be about the title). A line counts as running when one of the first or last two lines
 * with text of at least half the pages reads the same, numbers aside. Documents of fewer than 3
 * pages are left whole.
 */
export function withoutRunningLines(pages: readonly string[]): string[] {
  if (pages.length < 3) return [...pages];
  const edges = pages.map((page) => {
    const lines = page.split('\n');
    // Blank lines (paragraph breaks, pageText) do not count towards the edge.
    const filled = lines.flatMap((line, i) => (line.trim() !== '' ? [i] : []));
    const indexes = new Set([...filled.slice(0, EDGE_LINES), ...filled.slice(-EDGE_LINES)]);
    return { lines, indexes: [...indexes] };
  });
  const seen = new Map<string, number>();
  for (const { lines, indexes } of edges)
    for (const form of new Set(indexes.map((i) => runningForm(lines[i]!))))
      seen.set(form, (seen.get(form) ?? 0) + 1);
  const threshold = Math.max(3, RUNNING_SHARE * pages.length);
  const running = (line: string) => (seen.get(runningForm(line)) ?? 0) >= threshold;
  return edges.map(({ lines, indexes }) => {
    const drop = new Set(indexes.filter((i) => running(lines[i]!)));
    return lines.filter((_, i) => !drop.has(i)).join('\n');
  });
}

/**
 * The Info dictionary's /Title, else XMP dc:title, when it names the document
 * ({@link isMeaningfulTitle}); a broken metadata block is not fatal. Without one the parser calls
 * the PDF by its first line, as a plain text file (index.ts).
 */
async function readTitle(pdf: {
  getMetadata(): Promise<{ info: object; metadata: { get(name: string): unknown } | null }>;
}): Promise<string | undefined> {
  try {
    const { info, metadata } = await pdf.getMetadata();
    const recorded: unknown = (info as { Title?: unknown }).Title;
    const infoTitle = typeof recorded === 'string' ? stripProducerPrefix(recorded) : undefined;
    if (infoTitle !== undefined && isMeaningfulTitle(infoTitle)) return infoTitle;
    const xmpTitle = metadata?.get('dc:title');
    return typeof xmpTitle === 'string' && isMeaningfulTitle(xmpTitle) ? xmpTitle : undefined;
  } catch {
    return undefined; // the text is what matters; a document without a title is still indexed
  }
}

/** What a tool records when the author set no title: "Untitled", "Untitled-1", Word's "Document1". */
const PLACEHOLDER_TITLE = /^(?:untitled(?:[\s_-]*document)?|document|no title)(?:[\s_-]*\d+)?$/i;

/** Formats a PDF is often exported from, besides those Groundwork reads (EXTENSIONS). */
const AUTHORING_EXTENSIONS: ReadonlySet<string> = new Set([
  'doc',
  'rtf',
  'odt',
  'pages',
  'ppt',
  'pptx',
  'odp',
  'key',
  'xls',
  'xlsx',
  'ods',
  'tex',
  'ps',
  'indd',
]);

/**
 * Whether a recorded title names the document rather than standing in for a missing one: neither
 * blank, nor a placeholder, nor a file name ("noise.pdf", "C:\\Reports\\q3.docx"), which print
 * drivers and converters record when the source has no title of its own.
 */
function isMeaningfulTitle(title: string): boolean {
  const trimmed = title.trim();
  if (trimmed === '' || PLACEHOLDER_TITLE.test(trimmed)) return false;
  const extension = /\S\.([a-z0-9]{1,5})$/i.exec(trimmed)?.[1]?.toLowerCase();
  return (
    extension === undefined ||
    !(Object.hasOwn(EXTENSIONS, extension) || AUTHORING_EXTENSIONS.has(extension))
  );
}

/** Word's PDF export sets titles like "Microsoft Word - report.docx": keep the useful part. */
function stripProducerPrefix(title: string): string {
  return title.replace(/^Microsoft (?:Word|PowerPoint|Excel) - /, '');
}
