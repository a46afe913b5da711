/** Small text helpers shared by the answer pipeline: sentences with offsets and content words. */

import { isTableRow, unwrapLines } from '../text/lines';

const segmenter = new Intl.Segmenter('en', { granularity: 'sentence' });

export interface Sentence {
  readonly text: string;
  /** Offsets into the string that was segmented. */
  readonly start: number;
  readonly end: number;
}

/**
 * An initial ("Nicholas E.") or an abbreviation that comes before a name ("St.", "Dr.", "Rep.",
 * "v."): a full stop that does not end the sentence.
 */
const ENDS_WITH_INITIAL =
  /(?:^|[\s(])(?:\p{Lu}|St|Mt|Mr|Mrs|Ms|Dr|Prof|Rev|Gen|Col|Lt|Sgt|Capt|Gov|Sen|Rep|Ft|vs?)\.$/u;

/** Sentences of `text`, trimmed, with their offsets; empty ones dropped. */
export function sentences(text: string): Sentence[] {
  const spans: { start: number; end: number }[] = [];
  // Whether the last span ends with an initial or a title ("assistant Nicholas E."): it runs on.
  let runsOn = false;
  for (const seg of segmenter.segment(unwrapLines(text))) {
    const raw = seg.segment;
    const trimmed = raw.trim();
    if (trimmed === '') continue;
    const start = seg.index + raw.length - raw.trimStart().length;
    const end = start + trimmed.length;
    const last = spans[spans.length - 1];
    if (last && runsOn) last.end = end;
    else spans.push({ start, end });
    runsOn = ENDS_WITH_INITIAL.test(trimmed);
  }
  // A table row (`| a | b. c |`, as the parsers write rows) is one sentence, whatever full
  // stops its cells hold.
  const merged: { start: number; end: number }[] = [];
  // The line the last span ends on, found once per line: spans come in order.
  let line = { end: -1, row: false };
  for (const span of spans) {
    const last = merged[merged.length - 1];
    if (last && last.end > line.end) {
      const start = text.lastIndexOf('\n', last.end - 1) + 1;
      const next = text.indexOf('\n', last.end);
      const end = next === -1 ? text.length : next;
      line = { end, row: isTableRow(text.slice(start, end)) };
    }
    if (last && line.row && span.start <= line.end) last.end = span.end;
    else merged.push({ ...span });
  }
  // The text as written (line breaks kept), at the same offsets.
  return merged.map(({ start, end }) => ({ text: text.slice(start, end), start, end }));
}

const STOP = new Set(
  (
    'a am an and are as at be been but by can could did do does for from had has have how i if in into is it its ' +
    'me my of on or our she he so than that the their them then there these they this to was we were what when ' +
    'where which who whom whose why will with would you your about after also any all more most not no only other ' +
    // The tails of contractions ("it's", "don't", "I'm", "you're", "we've", "we'll").
    'over such some same up out just may might must should shall own very too really being having doing ' +
    's t m re ve ll'
  ).split(' '),
);

/**
 * A noun of action ("investigation", "locations"): at least three letters before "-ation", so that
 * "station" and "nation" stay whole.
 */
const NOUN_OF_ACTION = /^\p{L}{3,}ations?$/u;
/** Nouns whose cut stem is another word ("formation" is not "format"). */
const NOT_AN_ACTION = new Set(['format', 'reformat', 'habitat']);

/** A noun of action meets its verb: "investigation" and "investigated" read "investigat". */
function actionStem(word: string): string {
  const cut = word.replace(/ions?$/, '');
  return NOT_AN_ACTION.has(cut) ? word.replace(/s$/, '') : cut;
}

/**
 * A light stemmer: enough to match plurals and common suffixes across question and text
 * ("shipping" and "ship", "refunds" and "refund", "addresses" and "address").
 */
function stem(word: string): string {
  return withoutAte(suffixStem(word));
}

/**
 * A stem of five letters or more before a final "at" loses it, so that a noun of action meets a
 * verb without "-ate" ("invitation" and "invite" read "invit", "installation" and "install",
 * "configuration" and "configure") as one with it does ("investigation" and "investigate" read
 * "investig"). Shorter stems keep it ("locat", "updat", "format").
 */
function withoutAte(stemmed: string): string {
  return stemmed.length >= 7 && stemmed.endsWith('at') && !NOT_AN_ACTION.has(stemmed)
    ? stemmed.slice(0, -2)
    : stemmed;
}

function suffixStem(word: string): string {
  let w = word;
  if (w.length > 4 && w.endsWith('ies')) return `${w.slice(0, -3)}y`;
  if (w.length > 5 && w.endsWith('sses')) return w.slice(0, -2);
  if (NOUN_OF_ACTION.test(w)) return actionStem(w);
  if (w.length > 5 && (w.endsWith('ing') || w.endsWith('ed'))) {
    w = w.replace(/(ing|ed)$/, '');
    // A doubled final consonant is the suffix's ("shipped", "planning"), not the word's.
    if (/([b-df-hj-np-tv-z])\1$/.test(w) && !/(ll|ss|zz|ff)$/.test(w)) w = w.slice(0, -1);
    // "vacationing" meets "vacation".
    return NOUN_OF_ACTION.test(w) ? actionStem(w) : w;
  }
  if (w.length > 3 && w.endsWith('s') && !w.endsWith('ss')) w = w.slice(0, -1);
  return withoutSilentE(w);
}

/**
 * A word of six letters or more loses a final "e" after a consonant or "u", as its "-ed" and
 * "-ing" forms do: "delete", "deletes", "deleted" and "deleting" all read "delet", "continue" and
 * "continued" read "continu". Shorter words keep it ("plane" is not "plan").
 */
function withoutSilentE(word: string): string {
  return word.length >= 6 && /[b-df-hj-np-tv-z]e$|ue$/.test(word) ? word.slice(0, -1) : word;
}

/**
 * A word: letters and figures, or figures joined by dots, which are one number or version
 * ("7.2", "2.3.0"), as PostgreSQL's parser reads them on the search side: "3.0" is not "3" and "0".
 */
const WORD = /\p{N}+(?:\.\p{N}+)+|[\p{L}\p{N}]+/gu;

/**
 * The text with negative contractions written out ("doesn't" as "does not", "can't" as "can
 * not", "won't" as "will not"), so that "doesn" is no term and the negation is read as one.
 */
function withoutContractions(text: string): string {
  return text
    .replace(/\b(ca)n['’]t\b/giu, '$1n not')
    .replace(/\bwon['’]t\b/giu, 'will not')
    .replace(/\bshan['’]t\b/giu, 'shall not')
    .replace(/n['’]t\b/giu, ' not');
}

/** Lower-cased, stemmed words without stop words. */
export function contentWords(text: string): string[] {
  return (withoutContractions(text).toLowerCase().match(WORD) ?? [])
    .filter((w) => !STOP.has(w))
    .map(stem);
}

/**
 * Words that say what kind of answer a question wants ("how long", "how much", "can I get"),
 * not what it is about: a passage that answers the question rarely contains them.
 */
const QUESTION_FRAME = new Set(
  (
    'long much many often far soon big get take need happen mean allow allowed there kind way tell know want go goes like please use ' +
    // Indefinite pronouns stand for the thing asked about; they name no subject.
    'something anything someone anyone somebody anybody everything everyone everybody'
  )
    .split(' ')
    .map(stem),
);

/** The content words of a question without its interrogative frame, normalised as `contentWords`. */
export function questionTerms(question: string): string[] {
  return [...new Set(contentWords(question).filter((w) => !QUESTION_FRAME.has(w)))];
}

/** Letters without their accents, so that "Beyonce" matches "Beyoncé". */
function unaccented(text: string): string {
  return text.normalize('NFD').replace(/\p{M}+/gu, '');
}

/**
 * A capitalised adjective of a people or a region ("European", "English", "Eastern", "French"):
 * no name. The endings are narrowed where places end the same way ("Zurich", "Bern"), and a
 * country's name is always a name ("Japan", "Pakistan", "Oman").
 */
const DEMONYM = /(?:an|ish|ese|[st]h?ern|[nt]ch|ech|ic)$/;

/** The one-word names of countries and regions (ICU's English names), lower case, unaccented. */
let countries: ReadonlySet<string> | null = null;
function isCountry(word: string): boolean {
  if (!countries) {
    const names = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });
    const found = new Set<string>();
    for (let a = 65; a <= 90; a++)
      for (let b = 65; b <= 90; b++) {
        const name = names.of(String.fromCharCode(a, b));
        if (name && /^\p{L}+$/u.test(name)) found.add(unaccented(name).toLowerCase());
      }
    countries = found;
  }
  return countries.has(word.toLowerCase());
}

/** A capitalised word that says which people or region, not which thing ("European"). */
function isDemonym(word: string): boolean {
  return DEMONYM.test(word) && !isCountry(word);
}

/**
 * The words of a question that name something in particular, normalised as `contentWords`
 * (accents dropped, hyphens and apostrophes inside a name removed: "Wi-Fi" is "wifi"): a word
 * with letters then figures ("E7", "X200"), or a capitalised word of three letters or more that
 * opens neither the question nor one of its sentences ("PayPal", "Canada", "Harbour Light") and
 * is not an adjective of a people or region. All-capital words ("EU", "CMS") are left out, since
 * documents often spell them out, and so is a question written in title case, where capitals
 * name nothing.
 */
export function namedTerms(question: string): string[] {
  const text = unaccented(question);
  const tokens = [...text.matchAll(/[\p{L}\p{N}]+(?:[-'’][\p{L}\p{N}]+)*/gu)];
  const rest = tokens.slice(1).filter((m) => m[0] !== 'I');
  const capitalised = rest.filter((m) => /^\p{Lu}/u.test(m[0])).length;
  if (rest.length >= 3 && capitalised * 2 > rest.length) return [];
  const named = tokens
    .filter((m, i) => {
      const word = m[0].replace(/['’]s$/i, '');
      if (/^\p{L}+\p{N}/u.test(word)) return true;
      if (i === 0 || !/^\p{Lu}/u.test(word) || !/\p{Ll}/u.test(word) || /^I['’]/.test(word)) {
        return false;
      }
      const opensSentence = /[.!?:][^\p{L}\p{N}]*$/u.test(
        text.slice(Math.max(0, m.index - 4), m.index),
      );
      return !opensSentence && word.length >= 3 && !isDemonym(word);
    })
    .map((m) => m[0].replace(/['’]s$/i, '').replace(/[-'’]/g, ''));
  return [...new Set(contentWords(named.join(' ')))];
}

/** Content words of a text with accents dropped, to match {@link namedTerms}. */
export function unaccentedWords(text: string): string[] {
  return contentWords(unaccented(text));
}

/** Words that negate what follows them ("does not cover", "no refund", "never", "except"). */
const NEGATORS = new Set(
  'not no never cannot nor without except excluding excludes exclude neither none'.split(' '),
);
/** How many words after a negator it reaches. */
const NEGATION_SCOPE = 3;

/** True for a yes/no question: it opens with an auxiliary ("Is ...", "Can I ...", "Does it ..."). */
export function isPolar(question: string): boolean {
  return /^\s*(?:is|are|am|was|were|do|does|did|can|could|may|might|will|would|shall|should|must|has|have|had)\b/i.test(
    question,
  );
}

/** True when the text negates something: "not", "no", "never", "n't", "except" ... */
export function isNegated(text: string): boolean {
  return (
    withoutContractions(text)
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? []
  ).some((w) => NEGATORS.has(w));
}

/**
 * The content words of a text that are not negated: "The warranty does not cover wear" affirms
 * "warranty" but not "cover" or "wear". Normalised as `contentWords`.
 */
export function affirmedWords(text: string): string[] {
  const out: string[] = [];
  let scope = 0;
  for (const w of withoutContractions(text).toLowerCase().match(WORD) ?? []) {
    if (NEGATORS.has(w)) {
      scope = NEGATION_SCOPE;
      continue;
    }
    if (scope > 0) {
      scope -= 1;
      continue;
    }
    if (!STOP.has(w)) out.push(stem(w));
  }
  return out;
}
