/**
 * Sentence-aware chunking. The text is cut into sentences (Intl.Segmenter), sentences longer
 * than the target are cut at word boundaries, and words longer than the target are cut between
 * code points; these pieces ("units") tile the text exactly. Consecutive units are packed
 * greedily into chunks of at most `targetTokens` tokens, and each next chunk starts early enough
 * to repeat up to `overlapTokens` tokens of the previous chunk's tail.
 *
 * A marked heading (`## Uploads are slow`, lambdas/core/text/lines.ts) closes a chunk that is at
 * least half full, and the next chunk starts at it with no overlap: a long page's later sections
 * are then chunks of their own, whose vectors and terms are those of the section.
 *
 * Every unit is counted once; packing sums those counts. Because a tokenizer is not exactly
 * additive, each chunk's own text is counted once more, and a chunk is trimmed in the rare case
 * that count exceeds the target, so the bound is hard.
 */
import { isHeadingAt, unwrapLines } from '../text/lines';
import type { TokenCounter } from '../ports';
import type { Chunk, ChunkingOptions } from './types';

/** Smallest accepted `targetTokens`. */
const MIN_TARGET_TOKENS = 16;

/**
 * A chunk also holds at most `targetTokens * MAX_CHARS_PER_TOKEN` characters. Prose is about
 * 4 characters a token, so this only bites on odd text (say, a long run of "=" signs, 64 to a
 * token) and it bounds the tokenizer's work per chunk.
 */
export const MAX_CHARS_PER_TOKEN = 12;

/** Longest piece a word without spaces is cut into before packing. */
const MAX_PIECE_CODE_POINTS = 64;

/** A piece of the text [start, end) that is never split further, with its token count. */
interface Unit {
  readonly start: number;
  readonly end: number;
  readonly tokens: number;
}

// One segmenter for the process: construction loads ICU break rules. A fixed locale keeps the
// output identical across machines whatever their default locale.
const sentences = new Intl.Segmenter('en', { granularity: 'sentence' });

/**
 * V8's sentence iterator slows down with the length of the string it walks: each segment it
 * yields carries a fresh copy of the whole string as its `input` (27 s for 20,000 sentences of a
 * 1.2 MB text, 0.15 s in windows; `npm run bench -- chunker`), so
 * long texts are segmented a window at a time. A window's segments are kept up to the last one
 * that ends at least {@link SEGMENT_MARGIN} characters before the window's end, whose boundaries
 * the rules decide with all the context they read; the next window starts where the first segment
 * not kept starts, which is a boundary. A sentence longer than a window is cut before the last
 * whitespace ahead of the margin (at the margin when it has none). The cost is the window's
 * length for each segment, so a smaller window is faster while segments are shorter than it: a
 * megabyte of one-word sentences took 2.8 s in windows of 32,768 characters, 0.8 s in 8,192
 * (prose 72 and 27 ms).
 */
const SEGMENT_WINDOW = 8_192;
const SEGMENT_MARGIN = 512;

/** The sentences of `text` with their offsets, as `Intl.Segmenter` gives them, in windows. */
export function* sentenceSegments(
  text: string,
  window = SEGMENT_WINDOW,
  margin = SEGMENT_MARGIN,
): Generator<{ segment: string; index: number }> {
  let offset = 0;
  while (offset < text.length) {
    const end = Math.min(text.length, offset + window);
    const last = end === text.length;
    let next = offset;
    for (const { segment, index } of sentences.segment(text.slice(offset, end))) {
      const at = offset + index;
      if (!last && at + segment.length > end - margin) break;
      yield { segment, index: at };
      next = at + segment.length;
    }
    if (last) return;
    if (next === offset) {
      // One sentence fills the window: cut it before a word, at the margin if it has none.
      next = cutBeforeWord(text, offset, end - margin);
      yield { segment: text.slice(offset, next), index: offset };
    }
    offset = next;
  }
}

/**
 * Where to cut [offset, limit): after the last whitespace that follows a non-space character in
 * it, so that the next piece starts with a word; `limit` when there is none.
 */
function cutBeforeWord(text: string, offset: number, limit: number): number {
  for (let at = limit; at > offset + 1; at--) {
    if (/\s/.test(text[at - 1]!) && !/\s/.test(text[at - 2]!)) return at;
  }
  return limit;
}

const NON_SPACE = /\S/;
// A word with the whitespace before it: tokenizers attach a leading space to the next word
// (" word" is one token), so counting pieces this way keeps the sum close to the real count. A
// match starts only where a run of whitespace starts: from inside a trailing run, every start
// would rescan it to its end.
const WORD_WITH_LEADING_SPACE = /(?<!\s)\s*\S+/g;

/**
 * Splits `text` into chunks of at most `options.targetTokens` tokens (as counted by `tokens`),
 * cutting at sentence boundaries when possible, then at whitespace, then between characters.
 *
 * Guarantees, for a text with at least one non-whitespace character:
 * - `text.slice(c.start, c.end) === c.text`, indices are 0..n-1, starts strictly increase;
 * - the chunks cover the text: the first starts at 0, the last ends at `text.length`, and each
 *   chunk starts at or before the previous one's end (exactly at it when `overlapTokens` is 0);
 * - `c.tokenCount === tokens.count(c.text) <= targetTokens`. The only exception is a counter
 *   that gives a single character more than `targetTokens` tokens (impossible for cl100k, which
 *   needs at most 4 tokens per code point); such a character becomes a chunk of its own;
 * - each chunk ends further into the text than the previous one, so chunking always finishes;
 * - the output depends only on the inputs.
 *
 * Overlap is made of whole units (usually sentences) and never exceeds `overlapTokens` by the
 * units' counts, so it is 0 when the previous chunk's last sentence alone is longer than that.
 * Chunks keep the whitespace between sentences so that they tile the text; a chunk made only of
 * whitespace can appear only if the text holds a whitespace run longer than the target.
 *
 * @returns `[]` for an empty or whitespace-only text (there is nothing to index).
 * @throws RangeError naming the option when `targetTokens` is not an integer >= 16 or
 *   `overlapTokens` is not an integer with 0 <= overlapTokens < targetTokens / 2.
 */
export function chunkText(text: string, options: ChunkingOptions, tokens: TokenCounter): Chunk[] {
  validateOptions(options);
  if (!NON_SPACE.test(text)) return [];
  const { targetTokens: target, overlapTokens: overlap } = options;
  const maxChars = target * MAX_CHARS_PER_TOKEN;
  const units = splitIntoUnits(text, target, maxChars, tokens);

  const chunks: Chunk[] = [];
  let first = 0;
  // The first unit no earlier chunk covered: every chunk must include it, which is what
  // guarantees progress whatever the overlap.
  let fresh = 0;
  for (;;) {
    const start = unitAt(units, first).start;
    let last = first;
    let sum = 0;
    let atHeading = false;
    while (last < units.length) {
      const unit = unitAt(units, last);
      const fits = sum + unit.tokens <= target && unit.end - start <= maxChars;
      if (last > fresh && !fits) break;
      // A section starts a chunk of its own, without overlap, once the chunk is half full
      // (docs/decisions/0168-sections-start-chunks.md).
      if (last > fresh && 2 * sum >= target && isHeadingAt(text, unit.start, unit.end)) {
        atHeading = true;
        break;
      }
      sum += unit.tokens;
      last += 1;
    }

    let chunk = text.slice(start, unitAt(units, last - 1).end);
    let count = tokens.count(chunk);
    // Sums of unit counts almost always overestimate a chunk, so this loop rarely runs. When it
    // does, shed tail units in proportion to the excess, then overlap units, and recount.
    while (count > target) {
      const budget = (sum * target) / count;
      let shed = false;
      while (last - 1 > fresh && (!shed || sum > budget)) {
        last -= 1;
        sum -= unitAt(units, last).tokens;
        shed = true;
      }
      if (!shed && first < fresh) {
        sum -= unitAt(units, first).tokens;
        first += 1;
        shed = true;
      }
      if (!shed) break; // a single character worth more than the target: nothing left to cut
      chunk = text.slice(unitAt(units, first).start, unitAt(units, last - 1).end);
      count = tokens.count(chunk);
    }
    const chunkStart = unitAt(units, first).start;
    chunks.push({
      index: chunks.length,
      text: chunk,
      start: chunkStart,
      end: chunkStart + chunk.length,
      tokenCount: count,
    });
    if (last >= units.length) return chunks;

    // Step back over whole units of the tail while they fit in the overlap and still leave
    // room for the next fresh unit; never back to `first`, so starts strictly increase.
    const nextUnit = unitAt(units, last);
    let next = last;
    let tail = 0;
    while (overlap > 0 && !atHeading && next - 1 > first) {
      const candidate = unitAt(units, next - 1);
      const withCandidate = tail + candidate.tokens;
      if (
        withCandidate > overlap ||
        withCandidate + nextUnit.tokens > target ||
        nextUnit.end - candidate.start > maxChars
      ) {
        break;
      }
      tail = withCandidate;
      next -= 1;
    }
    first = next;
    fresh = last;
  }
}

function validateOptions({ targetTokens, overlapTokens }: ChunkingOptions): void {
  if (!Number.isInteger(targetTokens) || targetTokens < MIN_TARGET_TOKENS) {
    throw new RangeError(
      `targetTokens must be an integer >= ${MIN_TARGET_TOKENS} (got ${String(targetTokens)})`,
    );
  }
  if (!Number.isInteger(overlapTokens) || overlapTokens < 0 || overlapTokens >= targetTokens / 2) {
    throw new RangeError(
      `overlapTokens must be an integer with 0 <= overlapTokens < targetTokens / 2 ` +
        `(got ${String(overlapTokens)} with targetTokens ${targetTokens})`,
    );
  }
}

function unitAt(units: readonly Unit[], i: number): Unit {
  const unit = units[i];
  if (unit === undefined) throw new Error(`chunker: unit ${i} out of range`);
  return unit;
}

/** Tiles `text` with units of at most `target` tokens and `maxChars` characters, in order. */
function splitIntoUnits(
  text: string,
  target: number,
  maxChars: number,
  tokens: TokenCounter,
): Unit[] {
  const units: Unit[] = [];
  const add = (from: number, to: number): void => {
    addSentence(text, from, to, target, maxChars, tokens, units);
  };
  // Whitespace-only segments (blank lines) join the sentence before them, so that no unit,
  // and hence no chunk, is just whitespace; leading whitespace joins the first sentence.
  let start = 0;
  let pendingHasText = false;
  // Segmented with line breaks inside paragraphs read as spaces (same length, same offsets), so
  // that a hard-wrapped paragraph is cut between its sentences, not at its line ends.
  for (const { segment, index } of sentenceSegments(unwrapLines(text))) {
    const hasText = NON_SPACE.test(segment);
    if (hasText && pendingHasText) {
      add(start, index);
      start = index;
    }
    pendingHasText ||= hasText;
  }
  if (text.length > start) add(start, text.length);
  return units;
}

function addSentence(
  text: string,
  start: number,
  end: number,
  target: number,
  maxChars: number,
  tokens: TokenCounter,
  units: Unit[],
): void {
  if (end - start <= maxChars) {
    const count = tokens.count(text.slice(start, end));
    if (count <= target) {
      units.push({ start, end, tokens: count });
      return;
    }
  }
  // Too long: cut before each word (a word keeps the whitespace in front of it); whitespace
  // after the last word stays with it.
  const sentence = text.slice(start, end);
  const cuts: number[] = [];
  WORD_WITH_LEADING_SPACE.lastIndex = 0;
  for (
    let m = WORD_WITH_LEADING_SPACE.exec(sentence);
    m !== null;
    m = WORD_WITH_LEADING_SPACE.exec(sentence)
  ) {
    if (m.index > 0) cuts.push(start + m.index);
  }
  cuts.push(end);
  let from = start;
  for (const to of cuts) {
    const count = to - from <= maxChars ? tokens.count(text.slice(from, to)) : Infinity;
    if (count <= target) units.push({ start: from, end: to, tokens: count });
    else addByCharacters(text, from, to, target, tokens, units);
    from = to;
  }
}

/**
 * Cuts [start, end) between code points (never inside a surrogate pair) into short pieces.
 * Short pieces keep every count cheap (BPE cost grows quadratically with the length of a run
 * without spaces); the packer then joins them back up to the target.
 */
function addByCharacters(
  text: string,
  start: number,
  end: number,
  target: number,
  tokens: TokenCounter,
  units: Unit[],
): void {
  // A code point is at most 4 tokens in byte-level BPE, so a piece this long fits the target.
  const pieceCodePoints = Math.min(MAX_PIECE_CODE_POINTS, Math.floor(target / 4));
  let from = start;
  while (from < end) {
    let size = pieceCodePoints;
    let to = advanceCodePoints(text, from, end, size);
    let count = tokens.count(text.slice(from, to));
    // Only for a counter that gives a code point more than a quarter of the target.
    while (count > target && size > 1) {
      size = Math.floor(size / 2);
      to = advanceCodePoints(text, from, end, size);
      count = tokens.count(text.slice(from, to));
    }
    units.push({ start: from, end: to, tokens: count });
    from = to;
  }
}

/** The index `n` code points after `from`, or `end` if that comes first. */
function advanceCodePoints(text: string, from: number, end: number, n: number): number {
  let i = from;
  for (let k = 0; k < n && i < end; k += 1) {
    const pair =
      i + 1 < end && isHighSurrogate(text.charCodeAt(i)) && isLowSurrogate(text.charCodeAt(i + 1));
    i += pair ? 2 : 1;
  }
  return i;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
