/**
 * HTML to plain text with node-html-parser: navigation, scripts and styles are dropped, block
 * elements become line breaks, entities are decoded, and whitespace collapses the way a
 * browser shows it (except inside <pre>). Headings, list items and table rows are marked as
 * Markdown marks them (`## Heading`, `- item`, `| a | b |`). Also used for DOCX, which mammoth
 * turns into HTML.
 */
import type { HTMLElement } from 'node-html-parser';
import { DocumentRejectedError } from '../../core/ingestion/types';
import { loadLibrary } from './shared';

/** Text and title candidates found in an HTML document. */
export interface HtmlText {
  readonly text: string;
  /** The <title>, if any. */
  readonly titleTag?: string;
  /** The text of the first <h1>. */
  readonly firstH1?: string;
  /** The text of the first heading of any level. */
  readonly firstHeading?: string;
}

// Elements whose content is never document text.
const SKIPPED = new Set([
  'script',
  'style',
  'nav',
  'noscript',
  'template',
  'svg',
  'head',
  'iframe',
  'object',
  'embed',
  'canvas',
]);
const HEADINGS = new Set(['h1', 'h2', 'h3', 'h4', 'h5', 'h6']);
// Blocks that stand apart from their neighbours by a blank line.
const PARAGRAPHS = new Set([
  ...HEADINGS,
  'p',
  'blockquote',
  'pre',
  'table',
  'ul',
  'ol',
  'dl',
  'dt',
  'hr',
  'figure',
]);
// Blocks that start and end a line.
const LINES = new Set([
  'address',
  'article',
  'aside',
  'body',
  'caption',
  'dd',
  'details',
  'dialog',
  'div',
  'fieldset',
  'figcaption',
  'footer',
  'form',
  'header',
  'hgroup',
  'li',
  'main',
  'section',
  'summary',
  'tbody',
  'thead',
  'tfoot',
  'tr',
]);
const CELLS = new Set(['td', 'th']);

/**
 * The most elements a page may have. node-html-parser keeps about 1 KB per element (500,000
 * `<td>` cells took 550 MB); the ingest function has 1,024 MB for the file, its text, its chunks
 * and their vectors as well.
 */
export const MAX_HTML_ELEMENTS = 300_000;

/** Whether `html` has more than `limit` start tags, counted without building anything. */
function moreElementsThan(html: string, limit: number): boolean {
  const startTag = /<[A-Za-z]/g;
  let count = 0;
  while (startTag.exec(html) !== null) {
    count += 1;
    if (count > limit) return true;
  }
  return false;
}

/** An element being walked: its children are visited from `next` on. */
interface Frame {
  readonly element: HTMLElement;
  readonly tag: string;
  /** Inside a skipped element: text is not output (heading and title text still collect). */
  readonly silent: boolean;
  /** This element is a <pre> or inside one. */
  readonly inPre: boolean;
  readonly inCell: boolean;
  readonly inSvg: boolean;
  /** The text of a heading or <title> this element is, while collected. */
  readonly capture?: string[];
  next: number;
  cells: number;
}

/**
 * Converts an HTML document or fragment to text, collecting title candidates.
 *
 * An element whose end tag is missing contains what follows it, as in a browser
 * (`parseNoneClosedTags`): node-html-parser's default repair of unclosed elements takes time
 * quadratic in their number (a page of 1,000 unclosed spans in each of 40 sections took 43 s). The
 * tree is walked with a stack of its own, so a page nested 200,000 elements deep is read, not
 * overflowing the call stack.
 * @throws DocumentRejectedError `too_large` when it has more than {@link MAX_HTML_ELEMENTS}
 *   elements.
 */
export async function htmlToText(html: string): Promise<HtmlText> {
  if (moreElementsThan(html, MAX_HTML_ELEMENTS)) {
    throw new DocumentRejectedError(
      'too_large',
      `The document's markup has more than ${MAX_HTML_ELEMENTS.toLocaleString('en-US')} elements. Split it into smaller documents.`,
    );
  }
  const { parse, NodeType } = await loadLibrary(
    'node-html-parser',
    () => import('node-html-parser'),
  );
  // Script, style and noscript bodies stay raw (not parsed as markup); <pre> is parsed so
  // that the elements inside it are walked like any others.
  const root = parse(withoutUnclosedMarkup(html), {
    parseNoneClosedTags: true,
    comment: false,
    blockTextElements: { script: true, noscript: true, style: true },
  });
  const out = new TextBuilder();
  let firstH1: string | undefined;
  let firstHeading: string | undefined;
  let titleTag: string | undefined;
  // Inside a table cell, blocks (Word wraps cell text in paragraphs) only separate words,
  // so that a row stays on one line.
  const separate = (tag: string, inCell: boolean): void => {
    if (inCell && (tag === 'br' || PARAGRAPHS.has(tag) || LINES.has(tag))) out.space();
    else if (tag === 'br') out.lineBreak();
    else if (PARAGRAPHS.has(tag)) out.paragraphBreak();
    else if (LINES.has(tag)) out.newLine();
  };
  const frameOf = (element: HTMLElement, parent: Frame | undefined): Frame => {
    const tag = element.rawTagName?.toLowerCase() ?? '';
    const inSvg = (parent?.inSvg ?? false) || tag === 'svg';
    // The document's <title>, not the <title> of an inline SVG image; the first heading with text.
    const captured =
      (tag === 'title' && !inSvg && titleTag === undefined) ||
      (HEADINGS.has(tag) &&
        !(parent?.silent ?? false) &&
        (firstHeading === undefined || (tag === 'h1' && firstH1 === undefined)));
    return {
      element,
      tag,
      silent: (parent?.silent ?? false) || SKIPPED.has(tag),
      inPre: (parent?.inPre ?? false) || tag === 'pre',
      inCell: (parent?.inCell ?? false) || CELLS.has(tag),
      inSvg,
      ...(captured ? { capture: [] } : {}),
      next: 0,
      cells: 0,
    };
  };
  const finish = (frame: Frame, capture: readonly string[]): void => {
    const text = collapse(capture.join(''));
    if (frame.tag === 'title') titleTag ??= text;
    else if (text !== '') {
      firstHeading ??= text;
      if (frame.tag === 'h1') firstH1 ??= text;
    }
  };

  const stack: Frame[] = [frameOf(root, undefined)];
  // The open elements whose text is collected (a heading, a title), a handful at most.
  const capturing: Frame[] = [];
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]!;
    const child = frame.element.childNodes[frame.next];
    if (child === undefined) {
      stack.pop();
      if (frame.tag === 'tr' && frame.cells > 0 && !frame.silent && !frame.inCell)
        out.rowEnd(frame.cells);
      // An empty item or heading leaves no marker for the text after it.
      if (frame.tag === 'li' || HEADINGS.has(frame.tag)) out.endMarked();
      if (!frame.silent && frame.tag !== 'br') separate(frame.tag, frame.inCell);
      if (frame.capture !== undefined) {
        capturing.pop();
        finish(frame, frame.capture);
      }
      continue;
    }
    frame.next += 1;
    if (child.nodeType === NodeType.TEXT_NODE) {
      for (const open of capturing) open.capture?.push(child.text);
      if (!frame.silent) out.inline(child.text, frame.inPre);
      continue;
    }
    if (child.nodeType !== NodeType.ELEMENT_NODE) continue;
    const next = frameOf(child as HTMLElement, frame);
    if (frame.tag === 'tr' && CELLS.has(next.tag) && !frame.silent) {
      if (frame.cells > 0) out.cellSeparator();
      // A table inside a cell stays on its row's line, its cells inline.
      else if (!frame.inCell) out.rowStart();
      frame.cells += 1;
    }
    if (!next.silent) separate(next.tag, next.inCell);
    if (!next.silent && !next.inCell && !next.inPre) {
      if (next.tag === 'li') out.listItem();
      else if (HEADINGS.has(next.tag)) out.heading(Number(next.tag.slice(1)));
    }
    stack.push(next);
    if (next.capture !== undefined) capturing.push(next);
  }

  return {
    text: out.toString(),
    ...(titleTag !== undefined && titleTag !== '' ? { titleTag } : {}),
    ...(firstH1 !== undefined ? { firstH1 } : {}),
    ...(firstHeading !== undefined ? { firstHeading } : {}),
  };
}

/**
 * The page without its doctype and XML declaration, and with the comment and CDATA openers that
 * nothing closes read as text. node-html-parser's patterns for comments and CDATA rescan the rest
 * of the page from each opener that has no closer (86 s for a megabyte of `<!--`); a browser
 * would hide the rest of the page in such a comment, but text in a page is kept rather than lost
 * to a stray opener.
 */
function withoutUnclosedMarkup(html: string): string {
  let page = html.replace(/<!doctype[^<>]*>|<\?xml[^<>]*\?>/gi, '');
  for (const [open, close, asText] of UNCLOSED_OPENERS) {
    const closed = page.lastIndexOf(close);
    const tail = closed === -1 ? 0 : closed + close.length;
    if (page.includes(open, tail))
      page = page.slice(0, tail) + page.slice(tail).replaceAll(open, asText);
  }
  return page;
}

/** An opener, its closer, and the opener as text when nothing after it closes it. */
const UNCLOSED_OPENERS = [
  ['<!--', '-->', '&lt;!--'],
  ['<![CDATA[', ']]>', '&lt;![CDATA['],
] as const;

function collapse(text: string): string {
  return text.replace(/[\s\u00a0]+/g, ' ').trim();
}

/** Accumulates text, collapsing inline whitespace and merging consecutive breaks. */
class TextBuilder {
  private readonly parts: string[] = [];
  /** Newlines at the end of the output so far (0, 1 or 2); 2 at the very start. */
  private trailingNewlines = 2;
  private pendingSpace = false;
  /**
   * A list item's or a heading's marker, written before its first text (an empty item or heading
   * has none).
   */
  private pendingMarker: string | null = null;
  /** Where the open table row starts in `parts`, and whether it has text yet. */
  private row: { at: number; newlines: number; text: boolean } | null = null;

  inline(text: string, preserve: boolean): void {
    if (preserve) {
      if (text === '') return;
      this.pendingMarker = null;
      if (this.row) this.row.text = true;
      this.flushSpace();
      this.parts.push(text);
      let trailing = 0;
      while (trailing < text.length && text[text.length - 1 - trailing] === '\n') trailing += 1;
      this.trailingNewlines =
        trailing === text.length ? this.trailingNewlines + trailing : trailing;
      return;
    }
    const collapsed = text.replace(/[\s\u00a0]+/g, ' ');
    if (collapsed === '' || collapsed === ' ') {
      if (collapsed === ' ' && this.trailingNewlines === 0) this.pendingSpace = true;
      return;
    }
    const leading = collapsed.startsWith(' ');
    const trailing = collapsed.endsWith(' ');
    const core = collapsed.trim();
    if (leading && this.trailingNewlines === 0) this.pendingSpace = true;
    this.flushSpace();
    if (this.pendingMarker !== null && this.trailingNewlines > 0)
      this.parts.push(this.pendingMarker);
    this.pendingMarker = null;
    if (this.row) this.row.text = true;
    this.parts.push(core);
    this.trailingNewlines = 0;
    this.pendingSpace = trailing;
  }

  /** A table row begins on a line of its own; `rowEnd` decides how it is written. */
  rowStart(): void {
    this.breakTo(1);
    // A list item that opens with a table: its rows are the item.
    this.pendingMarker = null;
    this.row = { at: this.parts.length, newlines: this.trailingNewlines, text: false };
  }

  /**
   * Marks a list item: "- " goes before its first text, on that text's line (after a block the
   * item opens with), as Markdown marks it, so that each item reads as its own line.
   */
  listItem(): void {
    this.breakTo(1);
    this.pendingMarker = '- ';
  }

  /** Ends a list item or a heading: a marker its text did not take is dropped. */
  endMarked(): void {
    this.pendingMarker = null;
  }

  /** Marks a heading of `level` (1 to 6): `## ` goes before its first text. */
  heading(level: number): void {
    this.breakTo(2);
    this.pendingMarker = `${'#'.repeat(level)} `;
  }

  /**
   * Ends a table row of `cells` cells: written `| a | b |` as Markdown's rows are, one per line;
   * a row without text is dropped and a one-cell row (a layout table's) stays plain text.
   */
  rowEnd(cells: number): void {
    const row = this.row;
    this.row = null;
    if (!row) return;
    if (!row.text) {
      this.parts.length = row.at;
      this.trailingNewlines = row.newlines;
      this.pendingSpace = false;
      return;
    }
    if (cells < 2) return;
    this.parts.splice(row.at, 0, '| ');
    this.pendingSpace = false;
    this.parts.push(' |');
    this.trailingNewlines = 0;
  }

  /** " | " between the cells of a row. */
  cellSeparator(): void {
    this.pendingSpace = false;
    this.parts.push(' |');
    this.trailingNewlines = 0;
    this.pendingSpace = true;
  }

  /** Separates words without breaking the line. */
  space(): void {
    if (this.trailingNewlines === 0) this.pendingSpace = true;
  }

  lineBreak(): void {
    this.pendingSpace = false;
    this.parts.push('\n');
    this.trailingNewlines += 1;
  }

  newLine(): void {
    this.breakTo(1);
  }

  paragraphBreak(): void {
    this.breakTo(2);
  }

  toString(): string {
    return this.parts.join('');
  }

  private breakTo(newlines: number): void {
    this.pendingSpace = false;
    while (this.trailingNewlines < newlines) {
      this.parts.push('\n');
      this.trailingNewlines += 1;
    }
  }

  private flushSpace(): void {
    if (this.pendingSpace && this.trailingNewlines === 0) this.parts.push(' ');
    this.pendingSpace = false;
  }
}
