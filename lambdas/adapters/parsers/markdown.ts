/**
 * Markdown to readable plain text: the words stay, the syntax that only adds noise to search
 * goes (link URLs, image markup, emphasis markers, code fence lines, HTML tags). Headings stay
 * marked as ATX headings (`## Uploads are slow`), whatever way the source wrote them, so that the
 * answerer knows a section's title from a sentence (`isHeadingAt` in lambdas/core/text/lines.ts).
 */
import type { Extracted } from './shared';

const FRONT_MATTER = /^---[ \t]*\n([\s\S]*?)\n(?:---|\.\.\.)[ \t]*(?:\n|$)/;
const FENCE_OPEN = /^ {0,3}(`{3,}|~{3,})/;
// The closing hashes and trailing blanks are cut by atxHeadingText, not here: a lazy text followed
// by optional blanks was quadratic on a long run of blanks.
const ATX_HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*))?$/;
const SETEXT_H1_UNDERLINE = /^ {0,3}=+[ \t]*$/;
const RULE_OR_SETEXT_H2 = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const LINK_DEFINITION = /^ {0,3}\[[^\]]+\]:[ \t]*\S+.*$/;
// Each run of blanks is matched by one quantifier only, so that a line that is not a delimiter
// row fails in linear time.
const TABLE_DELIMITER_ROW =
  /^[ \t]*(?:\|[ \t]*)?:?-{3,}:?[ \t]*(?:\|[ \t]*:?-{3,}:?[ \t]*)*(?:\|[ \t]*)?$/;
const BLOCKQUOTE_MARKERS = /^ {0,3}(?:>[ \t]?)+/;
/** A line that is one HTML heading element (`<h1 align="center">Zod</h1>`), as READMEs write titles. */
const HTML_HEADING = /^[ \t]*<h([1-6])(?:\s[^<>]*)?>(.*)<\/h\1>[ \t]*$/i;
/** A tag still open at the end of its line: its attributes go on over the next lines. */
const UNCLOSED_TAG = /<[A-Za-z][A-Za-z0-9-]*\s[^<>]*$/;
/** How many further lines a tag's attributes may run over before the line is read as text. */
const MAX_TAG_LINES = 10;

/**
 * Converts Markdown to plain text. The title is front matter's `title:` if any, else the first
 * `# ` heading (or `===`-underlined heading, or `<h1>` element), else a heading of any level that
 * opens the document (`## iconv-lite: Pure JS character encoding conversion`). Code blocks keep
 * their content verbatim without the fence lines; images become their alt text, except an image
 * that is all of a link's text (a badge: "Build Status", "NPM Downloads"), which goes; links
 * become their text; an HTML tag whose attributes run over several lines goes whole.
 */
export function markdownToText(source: string): Extracted {
  let body = source.replace(/\r\n?/g, '\n');
  let title: string | undefined;
  const frontMatter = FRONT_MATTER.exec(body);
  if (frontMatter) {
    title = frontMatterTitle(frontMatter[1] ?? '');
    body = body.slice(frontMatter[0].length);
  }

  const out: string[] = [];
  let fence: string | undefined;
  // Whether the open fence began inside a block quote, whose markers its lines repeat.
  let fenceQuoted = false;
  // A heading has just ended its paragraph with a blank line, which stands for the source's own.
  let afterHeading = false;
  // A heading that opens the document and has text under it (not a group of sections whose first
  // line is another heading, as a changelog's "## Branch 3.x" above "### 3.12.0"): the title when
  // nothing else names one. Undefined until the first heading or text, null when there is none.
  let opening: string | null | undefined;
  let openingHasText = false;
  const lines = body.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!;
    // A block quote's lines are read without their markers ("> ## Note" is a heading, a bare ">"
    // a blank line); a fence opened outside a quote keeps its lines as written.
    const quoted = BLOCKQUOTE_MARKERS.test(raw);
    let line = fence !== undefined && !fenceQuoted ? raw : raw.replace(BLOCKQUOTE_MARKERS, '');
    const blankAfterHeading = afterHeading && line.trim() === '';
    afterHeading = false;
    if (blankAfterHeading) continue;
    if (fence !== undefined) {
      if (closesFence(line, fence)) fence = undefined;
      else out.push(line);
      continue;
    }
    const open = FENCE_OPEN.exec(line);
    if (open) {
      fence = open[1];
      fenceQuoted = quoted;
      continue;
    }
    const joined = withTagClosed(lines, i);
    if (joined) {
      line = joined.line;
      i = joined.last;
    }
    const html = HTML_HEADING.exec(line);
    const heading = html
      ? ['', '#'.repeat(Number(html[1])), html[2] ?? '']
      : ATX_HEADING.exec(line);
    if (heading) {
      const text = inlineToText(atxHeadingText(heading[2] ?? ''));
      // A quoted heading (a note, a citation) does not name the document.
      if (title === undefined && heading[1] === '#' && text !== '' && !quoted) title = text;
      if (opening === undefined && text !== '' && !quoted) opening = text;
      else if (!openingHasText) opening = null;
      // A heading is a paragraph of its own, blank lines around it, even where the source puts
      // its text on the next line: otherwise it reads as the first words of that text.
      if ((out[out.length - 1] ?? '').trim() !== '') out.push('');
      out.push(text === '' ? '' : `${heading[1]} ${text}`, '');
      afterHeading = true;
      continue;
    }
    const previous = out[out.length - 1];
    const underlined = previous !== undefined && previous.trim() !== '';
    if (SETEXT_H1_UNDERLINE.test(line) && underlined) {
      if (!quoted) title ??= previous.trim();
      out[out.length - 1] = `# ${previous.trim()}`;
      out.push('');
      afterHeading = true;
      continue;
    }
    if (RULE_OR_SETEXT_H2.test(line) && underlined) {
      if (line.trim().startsWith('-')) out[out.length - 1] = `## ${previous.trim()}`;
      out.push('');
      afterHeading = true;
      continue;
    }
    if (RULE_OR_SETEXT_H2.test(line) || LINK_DEFINITION.test(line)) continue;

    if (TABLE_DELIMITER_ROW.test(line) && line.includes('-') && line.includes('|')) continue;
    const text = inlineToText(line);
    if (text.trim() !== '') {
      opening ??= null;
      openingHasText = true;
    }
    out.push(text);
  }
  return {
    text: out.join('\n'),
    title: title ?? (openingHasText ? (opening ?? undefined) : undefined),
  };
}

/**
 * When line `i` ends inside a tag (`<img src="https://...badge.svg` with `?branch=main" alt="CI">`
 * on the next line), that line joined with the lines up to the one that closes the tag, and the
 * index of that last line; null when no tag is left open, or when it is not closed within
 * MAX_TAG_LINES lines of text (then it is prose with a "<" in it).
 */
function withTagClosed(lines: readonly string[], i: number): { line: string; last: number } | null {
  let line = lines[i]!;
  if (!UNCLOSED_TAG.test(line)) return null;
  for (let j = i + 1; j < lines.length && j <= i + MAX_TAG_LINES; j++) {
    const next = lines[j]!;
    if (next.trim() === '') return null;
    line = `${line} ${next.trim()}`;
    if (!UNCLOSED_TAG.test(line)) return { line, last: j };
  }
  return null;
}

/**
 * An ATX heading's text without its closing sequence (blanks, then hashes) and trailing blanks;
 * a text of hashes alone is empty. Linear in the line's length.
 */
function atxHeadingText(rest: string): string {
  const text = rest.trim();
  let end = text.length;
  while (end > 0 && text[end - 1] === '#') end -= 1;
  if (end === 0) return '';
  if (end === text.length) return text;
  const before = text[end - 1];
  return before === ' ' || before === '\t' ? text.slice(0, end).trimEnd() : text;
}

function frontMatterTitle(yaml: string): string | undefined {
  // Trimmed after the match: a lazy value before optional blanks was quadratic on a long run.
  const match = /^title:(.*)$/m.exec(yaml);
  if (!match) return undefined;
  const value = (match[1] ?? '')
    .trim()
    .replace(/^(["'])(.*)\1$/, '$2')
    .trim();
  return value === '' ? undefined : value;
}

function closesFence(line: string, fence: string): boolean {
  const trimmed = line.trim();
  const marker = fence[0] ?? '`';
  return trimmed.length >= fence.length && [...trimmed].every((c) => c === marker);
}

// Placeholders for text that must come through untouched (code spans, escaped characters):
// private-use characters cannot clash with the syntax being stripped.
const HOLD_OPEN = '\uE000';
const HOLD_CLOSE = '\uE001';
const HELD = /\uE000(\d+)\uE001/g;

const ENTITIES: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
};

/** An image, inline or by reference, that is all of a link's text, with the link. */
const LINKED_IMAGE =
  /\[\s*!\[[^[\]]*\](?:\((?:[^()]|\([^()]*\))*\)|\[[^[\]]*\])\s*\](?:\((?:[^()]|\([^()]*\))*\)|\[[^[\]]*\])/g;

/** Strips inline Markdown from one line. */
function inlineToText(line: string): string {
  const held: string[] = [];
  const hold = (text: string): string => `${HOLD_OPEN}${held.push(text) - 1}${HOLD_CLOSE}`;
  return (
    line
      .replace(/(`+)(.+?)\1/g, (_m, _ticks: string, code: string) => hold(code.trim()))
      .replace(/\\([!-/:-@[-`{-~])/g, (_m, c: string) => hold(c))
      .replace(/<!--(?:(?!<!--).)*?-->/g, '')
      // A link whose text is an image alone is a badge or a logo: its alt text is no content.
      .replace(LINKED_IMAGE, '')
      // Images (inline and by reference) become their alt text; links become their text.
      .replace(/!\[([^[\]]*)\]\((?:[^()]|\([^()]*\))*\)/g, '$1')
      .replace(/!\[([^[\]]*)\]\[[^[\]]*\]/g, '$1')
      .replace(/\[([^[\]]+)\]\((?:[^()]|\([^()]*\))*\)/g, '$1')
      .replace(/\[([^[\]]+)\]\[[^[\]]*\]/g, '$1')
      .replace(/<((?:https?|ftp|mailto):[^<>\s]+|[^<>\s@]+@[^<>\s@]+)>/g, '$1')
      .replace(/<\/?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?\/?>/g, '')
      .replace(/(\*\*|__)(?=\S)(.{1,500}?)(?<=\S)\1/g, '$2')
      .replace(/(?<![\w*])\*(?=[^\s*])(.{1,500}?)(?<=[^\s*])\*(?![\w*])/g, '$1')
      .replace(/(?<![\w_])_(?=[^\s_])(.{1,500}?)(?<=[^\s_])_(?![\w_])/g, '$1')
      .replace(/~~(?=\S)(.{1,500}?)(?<=\S)~~/g, '$1')
      // What is left of bold that runs over a line break: its marker at the start or end of a word.
      .replace(/(^|[\s(])\*\*(?=\S)|(?<=\S)\*\*(?=[\s.,;:!?)]|$)/g, '$1')
      .replace(/&(#\d+|#x[0-9a-f]+|[a-z]+);/gi, decodeEntity)
      .replace(HELD, (_m, i: string) => held[Number(i)] ?? '')
  );
}

function decodeEntity(entity: string, name: string): string {
  if (name.startsWith('#')) {
    const code =
      name[1] === 'x' || name[1] === 'X'
        ? parseInt(name.slice(2), 16)
        : parseInt(name.slice(1), 10);
    return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : entity;
  }
  return ENTITIES[name.toLowerCase()] ?? entity;
}
