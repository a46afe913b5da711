/**
 * Markdown to readable plain text: the words stay, the syntax that only adds noise to search
 * goes (link URLs, image markup, emphasis markers, code fence lines, heading hashes, HTML tags).
 */
import type { Extracted } from './shared';

const FRONT_MATTER = /^---[ \t]*\n([\s\S]*?)\n(?:---|\.\.\.)[ \t]*(?:\n|$)/;
const FENCE_OPEN = /^ {0,3}(`{3,}|~{3,})/;
const ATX_HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const SETEXT_H1_UNDERLINE = /^ {0,3}=+[ \t]*$/;
const RULE_OR_SETEXT_H2 = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const LINK_DEFINITION = /^ {0,3}\[[^\]]+\]:[ \t]*\S+.*$/;
// Each run of blanks is matched by one quantifier only, so that a line that is not a delimiter
// row fails in linear time.
const TABLE_DELIMITER_ROW =
  /^[ \t]*(?:\|[ \t]*)?:?-{3,}:?[ \t]*(?:\|[ \t]*:?-{3,}:?[ \t]*)*(?:\|[ \t]*)?$/;
const BLOCKQUOTE_MARKERS = /^ {0,3}(?:>[ \t]?)+/;

/**
 * Converts Markdown to plain text. The title is front matter's `title:` if any, else the first
 * `# ` heading (or `===`-underlined heading). Code blocks keep their content verbatim without
 * the fence lines; images become their alt text; links become their text.
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
  // A heading has just ended its paragraph with a blank line, which stands for the source's own.
  let afterHeading = false;
  for (const line of body.split('\n')) {
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
      continue;
    }
    // A heading inside a block quote ("> ## Note") is a heading too.
    const heading = ATX_HEADING.exec(line.replace(BLOCKQUOTE_MARKERS, ''));
    if (heading) {
      const text = inlineToText(heading[2] ?? '');
      if (title === undefined && heading[1] === '#' && text !== '') title = text;
      // A heading is a paragraph of its own, blank lines around it, even where the source puts
      // its text on the next line: otherwise it reads as the first words of that text.
      if ((out[out.length - 1] ?? '').trim() !== '') out.push('');
      out.push(text, '');
      afterHeading = true;
      continue;
    }
    const previous = out[out.length - 1];
    const underlined = previous !== undefined && previous.trim() !== '';
    if (SETEXT_H1_UNDERLINE.test(line) && underlined) {
      title ??= previous.trim();
      out.push('');
      afterHeading = true;
      continue;
    }
    if (RULE_OR_SETEXT_H2.test(line) && underlined) {
      out.push('');
      afterHeading = true;
      continue;
    }
    if (RULE_OR_SETEXT_H2.test(line) || LINK_DEFINITION.test(line)) continue;

    if (TABLE_DELIMITER_ROW.test(line) && line.includes('-') && line.includes('|')) continue;
    out.push(inlineToText(line.replace(BLOCKQUOTE_MARKERS, '')));
  }
  return { text: out.join('\n'), title };
}

function frontMatterTitle(yaml: string): string | undefined {
  const match = /^title:[ \t]*(.*?)[ \t]*$/m.exec(yaml);
  if (!match) return undefined;
  const value = (match[1] ?? '').replace(/^(["'])(.*)\1$/, '$2').trim();
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

/** Strips inline Markdown from one line. */
function inlineToText(line: string): string {
  const held: string[] = [];
  const hold = (text: string): string => `${HOLD_OPEN}${held.push(text) - 1}${HOLD_CLOSE}`;
  return (
    line
      .replace(/(`+)(.+?)\1/g, (_m, _ticks: string, code: string) => hold(code.trim()))
      .replace(/\\([!-/:-@[-`{-~])/g, (_m, c: string) => hold(c))
      .replace(/<!--(?:(?!<!--).)*?-->/g, '')
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
