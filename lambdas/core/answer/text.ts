/** Small text helpers shared by the answer pipeline: sentences with offsets and content words. */

import { unwrapLines } from '../text/lines';

const segmenter = new Intl.Segmenter('en', { granularity: 'sentence' });

export interface Sentence {
  readonly text: string;
  /** Offsets into the string that was segmented. */
  readonly start: number;
  readonly end: number;
}

/** Sentences of `text`, trimmed, with their offsets; empty ones dropped. */
export function sentences(text: string): Sentence[] {
  const out: Sentence[] = [];
  const unwrapped = unwrapLines(text);
  for (const seg of segmenter.segment(unwrapped)) {
    const raw = seg.segment;
    const lead = raw.length - raw.trimStart().length;
    const trimmed = raw.trim();
    if (trimmed === '') continue;
    const start = seg.index + lead;
    // The text as written (line breaks kept), at the same offsets.
    out.push({
      text: text.slice(start, start + trimmed.length),
      start,
      end: start + trimmed.length,
    });
  }
  return out;
}

const STOP = new Set(
  (
    'a an and are as at be been but by can could did do does for from had has have how i if in into is it its ' +
    'me my of on or our she he so than that the their them then there these they this to was we were what when ' +
    'where which who whom whose why will with would you your about after also any all more most not no only other ' +
    'over such some same up out just may might must should shall own very too s t'
  ).split(' '),
);

/** A light stemmer: enough to match plurals and common suffixes across question and text. */
export function stem(word: string): string {
  let w = word;
  if (w.length > 4 && w.endsWith('ies')) return `${w.slice(0, -3)}y`;
  if (w.length > 5 && (w.endsWith('ing') || w.endsWith('ed'))) w = w.replace(/(ing|ed)$/, '');
  if (w.length > 3 && w.endsWith('s') && !w.endsWith('ss')) w = w.slice(0, -1);
  return w;
}

/** Lower-cased, stemmed words without stop words. */
export function contentWords(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => !STOP.has(w)).map(stem);
}
