/** Line handling shared by chunking (ingestion) and citation sentences (answers). */

/** A line that starts a list item, a heading, a quote or a table row. */
const STARTS_BLOCK = /^[^\S\n]*(?:[-*+#>|]|\d+[.)])\s/;

/** A Setext heading's underline, or a rule: `=====`, `-----`. */
const UNDERLINE = /^[^\S\n]*(?:={3,}|-{3,})[^\S\n]*$/;

/** Words at most in a line that heads a block of plain text. */
const MAX_TITLE_WORDS = 12;
const MAX_TITLE_LENGTH = 120;

/**
 * A line break inside a paragraph (hard-wrapped Markdown, plain text, e-mail) becomes a space,
 * so that the segmenter, which ends a sentence at every line break, sees whole sentences. These
 * breaks stay:
 * - at a blank line, and before a line that starts a list item, a heading, a quote or a table row;
 * - after a table row (a line that ends with `|`), and around an underline (`=====`);
 * - after a plain-text title: the first line of a block, of at most 12 words, that starts with a
 *   capital or a figure and does not end as a sentence or a clause does, followed by a line that
 *   starts with a capital or a figure ("Returns and refunds" above "Unused items can be…").
 *
 * The length is unchanged, so offsets stay valid for the original text.
 */
export function unwrapLines(text: string): string {
  const lines = text.split('\n');
  const out: string[] = [lines[0]!];
  for (let i = 1; i < lines.length; i += 1) {
    out.push(joins(lines[i - 1]!, lines[i]!, i === 1 || isBlank(lines[i - 2]!)) ? ' ' : '\n');
    out.push(lines[i]!);
  }
  return out.join('');
}

/** Whether the break between `line` and `next` is inside a paragraph. */
function joins(line: string, next: string, startsBlock: boolean): boolean {
  if (isBlank(line) || isBlank(next) || STARTS_BLOCK.test(next)) return false;
  if (/\|[^\S\n]*$/.test(line) || UNDERLINE.test(line) || UNDERLINE.test(next)) return false;
  return !(startsBlock && isTitle(line, next));
}

/** Whether `line`, the first of its block, is a title over `next` rather than wrapped prose. */
function isTitle(line: string, next: string): boolean {
  const title = line.trim();
  if (title.length > MAX_TITLE_LENGTH) return false;
  if (!/^[\p{Lu}\p{N}]/u.test(title) || !/^[\p{Lu}\p{N}]/u.test(next.trim())) return false;
  if (/[.!?;:,…\-–—(/&]["'”’)\]]*$/u.test(title)) return false;
  return title.split(/\s+/).length <= MAX_TITLE_WORDS && title.length < next.trim().length;
}

function isBlank(line: string): boolean {
  return line.trim() === '';
}

/** Whether a line is a table row as the parsers write one: `| cell | cell |`. */
export function isTableRow(line: string): boolean {
  const row = line.trim();
  return row.length > 1 && row.startsWith('|') && row.endsWith('|');
}
