/** Line handling shared by chunking (ingestion) and citation sentences (answers). */

/** A line that starts a list item, a heading, a quote or a table row. */
const STARTS_BLOCK = /^[^\S\n]*(?:[-*+#>|]|\d+[.)])\s/;

/** A Setext heading's underline, or a rule: `=====`, `-----`. */
const UNDERLINE = /^[^\S\n]*(?:={3,}|-{3,})[^\S\n]*$/;

/** Words at most in a heading or title: a longer line is a sentence, finished or not. */
export const MAX_HEADING_WORDS = 12;
/** Words at most in a title in sentence case. */
const SHORT_TITLE_WORDS = 4;
const MAX_TITLE_LENGTH = 120;

/** How a sentence or clause ends, or a line that goes on in the next: no title ends so. */
const ENDS_AS_PROSE =
  /(?:[.!?;:,…\-–—(/&]["'”’)\]]*|\b(?:a|an|the|and|or|but|nor|of|to|in|on|at|by|for|with|from|as|into|onto|than|that|which|who|is|are|was|were|be|been|has|have|had|will|can|may|must|should|would|could|not|no|our|your|their|its|his|her|my|this|these|those|per|via|if|when|while|where))$/iu;

/**
 * A line break inside a paragraph (hard-wrapped Markdown, plain text, e-mail) becomes a space,
 * so that the segmenter, which ends a sentence at every line break, sees whole sentences. These
 * breaks stay:
 * - at a blank (or whitespace-only) line, and before a line that starts a list item, a heading, a
 *   quote or a table row;
 * - after a table row (a line that ends with `|`), and around an underline (`=====`);
 * - after a plain-text title ({@link isTitle}): "Returns and refunds" above "Unused items can be…";
 * - between two `Label: value` lines ("Hybrid: $35 a day" above "Road bike: $55 a day").
 *
 * The length is unchanged, so offsets stay valid for the original text. The text is read line by
 * line without an array of its lines, so a file of millions of short lines costs two bytes a
 * character more, at most.
 */
export function unwrapLines(text: string): string {
  let out: Uint16Array | null = null;
  let start = 0;
  // Whether the line before the current one ends a block (a blank line, an underline, none).
  let afterBlock = true;
  // Whether the current line starts a line of the result or a sentence, and whether the line or
  // sentence it continues opened with a label.
  let startsLine = true;
  let labelled = false;
  for (let br = text.indexOf('\n'); br !== -1; br = text.indexOf('\n', br + 1)) {
    const line = text.slice(start, br);
    const end = text.indexOf('\n', br + 1);
    const next = text.slice(br + 1, end === -1 ? text.length : end);
    if (startsLine) labelled = LABEL_LINE.test(line);
    const joined = joins(line, next, afterBlock, labelled);
    if (joined) {
      out ??= codeUnits(text);
      out[br] = 0x20;
    }
    startsLine = !joined || ENDS_SENTENCE.test(line);
    afterBlock = isBlank(line) || UNDERLINE.test(line);
    start = br + 1;
  }
  return out ? fromCodeUnits(out) : text;
}

/**
 * A `Label: value` line ("Road bike: $55 per day", "Database owner: Priya Raman"): a label of at
 * most three words that starts with a capital, a colon and a value.
 */
const LABEL_LINE =
  /^[^\S\n]*\p{Lu}[\p{L}\p{N}'’&/-]{0,30}(?:[^\S\n][\p{L}\p{N}'’&/-]{1,30}){0,2}:[^\S\n]+\S/u;

/** How a sentence ends, at the end of a line. */
const ENDS_SENTENCE = /[.!?]["'”’)\]]*[^\S\n]*$/u;

/**
 * Whether the break between `line` and `next` is inside a paragraph; `labelled`: the line or
 * sentence it continues opened with a label.
 */
function joins(line: string, next: string, startsBlock: boolean, labelled: boolean): boolean {
  if (isBlank(line) || isBlank(next) || STARTS_BLOCK.test(next)) return false;
  // Label lines one under the other are a list of values, each a line of its own; a value wraps
  // onto a next line that is no label ("…, $50 for" above "a full day").
  if (labelled && LABEL_LINE.test(next)) return false;
  if (/\|[^\S\n]*$/.test(line) || UNDERLINE.test(line) || UNDERLINE.test(next)) return false;
  return !(startsBlock && isTitle(line, next));
}

/**
 * Whether `line`, the first line of a block, is a title over `next` rather than the start of a
 * wrapped paragraph: both start with a capital or a figure, the title holds no bracket, colon or
 * comma and does not end as a sentence or a clause does nor on a word that needs more after it
 * ("to", "the", "and"), and it is either at most 4 words and shorter than `next` ("Returns and
 * refunds"), or at most 12 words in capitals or with every word of 4 letters or more capitalised
 * ("WARRANTY", "Walking and Hiking Around Kestrel Bay").
 */
export function isTitle(line: string, next: string): boolean {
  const title = line.trim();
  const following = next.trim();
  if (title.length > MAX_TITLE_LENGTH || !/^[\p{Lu}\p{N}]/u.test(title)) return false;
  if (!/^[\p{Lu}\p{N}]/u.test(following) || ENDS_AS_PROSE.test(title)) return false;
  if (/[[\](){}:;,]/.test(title)) return false;
  const words = title.split(/\s+/);
  if (words.length <= SHORT_TITLE_WORDS && title.length < following.length) return true;
  const capitalised =
    !/\p{Ll}/u.test(title) || words.every((w) => w.length < 4 || /^[\p{Lu}\p{N}]/u.test(w));
  return capitalised && words.length <= MAX_HEADING_WORDS;
}

/**
 * The text's first line when it is a title over the line after it ({@link isTitle}): what a plain
 * text file or a PDF without a recorded title is called ("Returns and refunds" above "Unused
 * items can be returned within 30 days."). Reads only as far as its second non-blank line.
 */
export function leadingTitle(text: string): string | undefined {
  const lines: string[] = [];
  for (let start = 0; lines.length < 2 && start < text.length;) {
    const end = text.indexOf('\n', start);
    const line = text.slice(start, end === -1 ? text.length : end).trim();
    if (line !== '') lines.push(line);
    if (end === -1) break;
    start = end + 1;
  }
  // A first line marked as a heading (a PDF's larger text) is read by its words.
  const first = lines[0] === undefined ? undefined : withoutHeadingMarks(lines[0]);
  const next = lines[1];
  return first !== undefined && next !== undefined && isTitle(first, next) ? first : undefined;
}

function isBlank(line: string): boolean {
  return line.trim() === '';
}

function codeUnits(text: string): Uint16Array {
  const units = new Uint16Array(text.length);
  for (let i = 0; i < text.length; i += 1) units[i] = text.charCodeAt(i);
  return units;
}

/** The string of `units`, built a slice at a time (an argument list has a bounded length). */
function fromCodeUnits(units: Uint16Array): string {
  const parts: string[] = [];
  for (let i = 0; i < units.length; i += 8192) {
    parts.push(String.fromCharCode(...units.subarray(i, i + 8192)));
  }
  return parts.join('');
}

/** A line of hashes, a blank and its text: `## Uploads are slow` (Markdown's ATX heading). */
const ATX_HEADING = /^[^\S\n]{0,3}#{1,6}[^\S\n]+\S[^\n]*$/;

/**
 * Whether `text[start, end)` is a heading as the parsers write one: a line of hashes, a blank and
 * its text, in a paragraph of its own (a blank line or the text's start before it, a blank line or
 * the text's end after it). A `# comment` in a block of code has code under it, so it is none.
 */
export function isHeadingAt(text: string, start: number, end: number): boolean {
  let last = end;
  while (last > start && /\s/.test(text[last - 1] ?? '')) last -= 1;
  if (!ATX_HEADING.test(text.slice(start, last))) return false;
  return blankLineOrEdge(text, start, -1) && blankLineOrEdge(text, last, 1);
}

/**
 * Whether, from `at` in `step`'s direction, whitespace holding two line breaks (a blank line) or
 * only whitespace up to the text's edge comes before any other character.
 */
function blankLineOrEdge(text: string, at: number, step: 1 | -1): boolean {
  let breaks = 0;
  for (let i = step === 1 ? at : at - 1; i >= 0 && i < text.length; i += step) {
    const c = text[i]!;
    if (c === '\n') breaks += 1;
    else if (!/\s/.test(c)) return breaks >= 2;
    if (breaks >= 2) return true;
  }
  return true;
}

/** The text with each heading's hashes removed: `## Uploads are slow` reads `Uploads are slow`. */
export function withoutHeadingMarks(text: string): string {
  return text.replace(/^([^\S\n]{0,3})#{1,6}[^\S\n]+(?=\S)/gm, '$1');
}

/** Whether a line is a table row as the parsers write one: `| cell | cell |`. */
export function isTableRow(line: string): boolean {
  const row = line.trim();
  return row.length > 1 && row.startsWith('|') && row.endsWith('|');
}
