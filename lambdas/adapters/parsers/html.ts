/**
 * HTML to plain text with node-html-parser: navigation, scripts and styles are dropped, block
 * elements become line breaks, entities are decoded, and whitespace collapses the way a
 * browser shows it (except inside <pre>). Also used for DOCX, which mammoth turns into HTML.
 */
import type { HTMLElement, Node } from 'node-html-parser';
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
  'dt',
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

/** Converts an HTML document or fragment to text, collecting title candidates. */
export async function htmlToText(html: string): Promise<HtmlText> {
  const { parse, NodeType } = await loadLibrary(
    'node-html-parser',
    () => import('node-html-parser'),
  );
  // Script, style and noscript bodies stay raw (not parsed as markup); <pre> is parsed so
  // that the elements inside it are walked like any others.
  const root = parse(html.replace(/<!doctype[^>]*>|<\?xml[^>]*\?>/gi, ''), {
    comment: false,
    blockTextElements: { script: true, noscript: true, style: true },
  });
  const out = new TextBuilder();
  let firstH1: string | undefined;
  let firstHeading: string | undefined;

  const walk = (node: Node, inPre: boolean, inCell: boolean): void => {
    if (node.nodeType === NodeType.TEXT_NODE) {
      out.inline(node.text, inPre);
      return;
    }
    if (node.nodeType !== NodeType.ELEMENT_NODE) return;
    const element = node as HTMLElement;
    const tag = element.rawTagName?.toLowerCase() ?? '';
    if (SKIPPED.has(tag)) return;
    if (HEADINGS.has(tag)) {
      const text = collapse(element.text);
      if (text !== '') {
        firstHeading ??= text;
        if (tag === 'h1') firstH1 ??= text;
      }
    }
    // Inside a table cell, blocks (Word wraps cell text in paragraphs) only separate words,
    // so that a row stays on one line.
    const separate = (): void => {
      if (inCell && (tag === 'br' || PARAGRAPHS.has(tag) || LINES.has(tag))) out.space();
      else if (tag === 'br') out.lineBreak();
      else if (PARAGRAPHS.has(tag)) out.paragraphBreak();
      else if (LINES.has(tag)) out.newLine();
    };
    separate();
    if (tag === 'br') return;
    let cell = 0;
    for (const child of element.childNodes) {
      const childTag =
        child.nodeType === NodeType.ELEMENT_NODE
          ? (child as HTMLElement).rawTagName?.toLowerCase()
          : '';
      const isCell = childTag !== undefined && CELLS.has(childTag);
      if (tag === 'tr' && isCell) {
        if (cell > 0) out.cellSeparator();
        cell += 1;
      }
      walk(child, inPre || tag === 'pre', inCell || isCell);
    }
    separate();
  };
  walk(root, false, false);

  // The document's <title>, not the <title> of an inline SVG image.
  const titleElement = root
    .querySelectorAll('title')
    .find((element) => element.closest('svg') === null);
  const titleTag = titleElement ? collapse(titleElement.text) : '';
  return {
    text: out.toString(),
    ...(titleTag !== '' ? { titleTag } : {}),
    ...(firstH1 !== undefined ? { firstH1 } : {}),
    ...(firstHeading !== undefined ? { firstHeading } : {}),
  };
}

function collapse(text: string): string {
  return text.replace(/[\s\u00a0]+/g, ' ').trim();
}

/** Accumulates text, collapsing inline whitespace and merging consecutive breaks. */
class TextBuilder {
  private readonly parts: string[] = [];
  /** Newlines at the end of the output so far (0, 1 or 2); 2 at the very start. */
  private trailingNewlines = 2;
  private pendingSpace = false;

  inline(text: string, preserve: boolean): void {
    if (preserve) {
      if (text === '') return;
      this.flushSpace();
      this.parts.push(text);
      const trailing = /\n*$/.exec(text)?.[0].length ?? 0;
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
    this.parts.push(core);
    this.trailingNewlines = 0;
    this.pendingSpace = trailing;
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
