/**
 * The offline answerer, used when no LLM is configured: it picks the sentences of the context
 * that best answer the question and returns them verbatim with their citation markers. Scoring:
 * idf-weighted overlap of the question's terms (without its interrogative frame) with the
 * sentence's words that it does not negate (all its words for a yes/no question, which a denial
 * answers as well as an affirmation; idf over the context's sentences), a bonus for the
 * sentence's neighbourhood matching too, a bonus for holding the kind of answer the question asks
 * for (a duration for "how long", ./answer-type.ts), and small priors for sources retrieval
 * ranked higher (by rank and by how far their cosine falls short of the best source's) and for
 * sentences early in their passage. When the best sentence names the subject but the sentence
 * next to it holds the answer, both are given, and so are two sentences of one list item (an
 * option's description and its default); a short list item is given under its section's heading
 * ("TODO: Implement DynamoDB Streams"), and so is a sentence that lacks the release or date asked
 * for when its heading holds it ("3.11.0: Added: ..."). A sentence that draws a consequence
 * ("Therefore, ...") is given after its reason to a question that asks why. A sentence said twice
 * is given once. A question (an FAQ's heading), a heading, a block of code and a line of code are
 * never given as the answer (a block's line that says something in words, an option of a command's
 * usage or a comment, may be), though
 * a question's words still count for the sentence after it (fully: it is that answer's subject),
 * a heading's for every sentence of its section and the document's title for every sentence of
 * the document. A sentence that ends with a colon is read with what it introduces, and given with
 * it, even when that is a block of code. A yes/no question's answer keeps the bare "Yes." or "No."
 * that opens it in the document, and a table row is matched and given with its table's header
 * row. It never writes text that is not in the documents.
 */
import {
  isHeadingAt,
  isTableRow,
  isTitle,
  MAX_HEADING_WORDS,
  withoutHeadingMarks,
} from '../text/lines';
import { expectedAnswerType, holdsAnswerType, type AnswerType } from './answer-type';
import type { ContextBlock } from './context';
import {
  affirmedWords,
  contentWords,
  isNegated,
  isPolar,
  questionTerms,
  sentences,
  type Sentence,
} from './text';

/** Score for holding the kind of answer the question asks for (a full match of its terms is 1). */
const ANSWER_TYPE_BONUS = 0.2;
/** Score taken from a sentence that negates when the question does not. */
const NEGATION_PENALTY = 0.05;
/**
 * Weight of the question's terms a sentence denies when the question asks no denial and it
 * affirms none: "The tool does not write log files" answers "Where are the log files?" better
 * than a sentence on another subject. A sentence that affirms a term is read by those alone:
 * "The warranty does not cover wear" says nothing of what the warranty covers.
 */
const DENIED_WEIGHT = 0.5;
/**
 * Weight of the question's terms found only in the sentence before, only in the heading of the
 * sentence's section ("## Uploads to S3 are slow" over "Raise `parallel_uploads`"), or only in
 * what a sentence that ends with a colon introduces.
 */
const NEAR_WEIGHT = 0.5;
/** A sentence that introduces what follows it: it ends with a colon. */
const INTRODUCES = /:["'”’)\]]*$/u;
/** How far after the best sentence the one holding the asked-for kind of answer may be. */
const FOLLOWING = [1, 2];
/** Added for each of the question's frame words a sentence holds (at most two). */
const FRAME_WEIGHT = 0.03;
/** Two words or more that end as a sentence does. */
const SHORT_SENTENCE = /^\S+(?:\s+\S+)+[.!?]["'”’)]*$/u;
/** A reply that answers a yes/no question by itself ("No.", "Not yet."): kept before its reason. */
const VERDICT = /^(?:yes|no|not (?:yet|directly|really))\b[.!,]?$/i;
/** A list item's bullet or number ("- ", "* ", "• ", "3. ", "b) ") before the item's words. */
const LIST_MARKER = /^\s*(?:[-*+•‣◦▪–]|\d{1,2}[.)]|[a-z][.)])\s+(?=\S)/u;
/** At most this many words: a list item that names a thing rather than says something of it. */
const SHORT_ITEM_WORDS = 8;

function isShortItem(text: string): boolean {
  return text.replace(LIST_MARKER, '').trim().split(/\s+/).length <= SHORT_ITEM_WORDS;
}

/**
 * A sentence that opens by drawing a consequence ("Therefore, you cannot use plain strings ..."):
 * its reason is the sentence before it.
 */
const CONSEQUENCE =
  /^(?:therefore|thus|hence|consequently|as a result|for this reason|because of this|that is why|this is why|that's why|this means)\b/i;

/**
 * The kinds of answer a section's heading may hold for every sentence under it: a changelog's
 * release ("### 3.11.0") and a meeting's or a notice's date ("## Design review, 25 March 2024").
 */
const HEADED_TYPES: ReadonlySet<AnswerType> = new Set(['version', 'date']);

/** A sentence that opens by referring to the one before it ("This is ...", "It means ..."). */
const REFERS_BACK = /^(?:this|that|these|those|it)\b/i;

/** A list item's number or letter alone ("3.", "b)"). */
const BARE_NUMBER = /^\s*(?:\d{1,2}|[a-z])[.)]\s*$/u;
/** Score taken per rank of the sentence's source below the first. */
const SOURCE_RANK_PENALTY = 0.05;
/**
 * Score taken per unit of cosine by which the sentence's source falls short of the best source:
 * a source retrieval ranked second by a hair competes with the first, one far behind does not.
 */
const SOURCE_COSINE_PENALTY = 0.5;
/** Score taken per sentence before this one in its passage (up to 5): a passage states its subject first. */
const POSITION_PENALTY = 0.005;
/** A further sentence is kept when it scores at least this share of the best (a default). */
export const MIN_RELATIVE_SCORE = 0.6;

export const EXTRACTIVE_MODEL_ID = 'extractive';

export interface ExtractiveOptions {
  /** Sentences in the answer. */
  readonly maxSentences: number;
  /** A sentence after the best one is kept only when it scores at least this share of the best. */
  readonly minRelativeScore: number;
}

interface Candidate {
  readonly block: ContextBlock;
  readonly text: string;
  readonly words: string[];
  /** The words it denies, when the question asks no denial (else they are among `words`). */
  readonly denied: ReadonlySet<string>;
  readonly passage: number;
  readonly order: number;
  /** Position of the sentence in its passage, from 0. */
  readonly position: number;
  /** The list item it is a sentence of (its passage and the item's line there), if any. */
  readonly item: string | null;
  /** The text of the marked heading above it in its passage, if any (not the document's title). */
  readonly heading: string | null;
  readonly typed: boolean;
  /** Whether it may be given as the answer ({@link mayAnswer}). */
  readonly answers: boolean;
  /** Whether it is a question: its words are the subject of the sentence after it. */
  readonly asks: boolean;
  /** A bare "Yes." or "No." just before it in its passage, too short to be a sentence here. */
  readonly verdict: string | null;
  /** The words of the heading of its section in its passage, if any (none for a heading). */
  readonly section: ReadonlySet<string> | null;
  /** For a table row, its table's header row: the names of its columns. */
  readonly header: { readonly text: string; readonly words: ReadonlySet<string> } | null;
  /** Whether it is a line of a block of code ({@link codeLines}), which follows its block. */
  readonly line: boolean;
  /** Its place among the sentences as written (the lines of blocks aside); -1 for a line. */
  readonly seq: number;
  score: number;
  /** The part of `score` its table's header gave it. */
  named: number;
  /** The idf-weighted share of the question's terms in the sentence itself. */
  matched: number;
}

/**
 * A line of program code, which a README's examples are full of: a declaration that assigns or an
 * import (lower case, as no sentence starts), or a `require`. `const busboy = require('busboy');`
 * matches a question about busboy's requirements word for word and says nothing. Commands (`npm
 * install busboy`) and comments still answer: they often hold an option's name.
 */
const CODE_STATEMENT =
  /^\s*(?:const|let|var|import|export)\s[^.!?]*(?:=|\bfrom\b)|\brequire\(\s*['"]/u;

/**
 * Share of a block's characters that are code punctuation at and above which it is read as code;
 * prose has well under 1 % (a parenthesis now and then), code several per cent.
 */
const CODE_PUNCTUATION_SHARE = 0.03;

/**
 * Whether a sentence can answer a question: not a question itself (an FAQ repeats the asker's
 * words in its headings, so one would otherwise be answered with itself), and not a block of
 * code (several lines that the sentence splitter leaves whole, which match many of a question's
 * words at once).
 */
function isQuestion(text: string): boolean {
  return /\?["'”’)]*$/.test(text);
}

function mayAnswer(text: string): boolean {
  if (isQuestion(text)) return false;
  if (CODE_STATEMENT.test(text.replace(LIST_MARKER, ''))) return false;
  return !isCodeBlock(text);
}

/** A block of code: three lines or more, at least CODE_PUNCTUATION_SHARE code punctuation. */
function isCodeBlock(text: string): boolean {
  if (text.split('\n').length < 3) return false;
  const code = text.match(/[{}();=<>[\]]/g)?.length ?? 0;
  return code / text.length >= CODE_PUNCTUATION_SHARE;
}

/** What opens a line of code that may say something: an option's flag or a comment's mark. */
const OPTION_OR_COMMENT = /^(?:-{1,2}[a-z][\w-]*|\/\/|#)/i;

/**
 * Whether a line of a block of code says something in words: an option of a command's usage, with
 * what it does ("--port <port>   The port to listen on (default: 4567)"), or a comment ("// Listen
 * on port 4567"), with two words in a row after its flag or mark. Other lines are program text,
 * and match a question's words by accident. Read by splitting on spaces, in linear time.
 */
function saysSomething(line: string): boolean {
  const opening = OPTION_OR_COMMENT.exec(line);
  if (!opening) return false;
  const words = line.slice(opening[0].length).split(/\s+/);
  return words.some(
    (w, i) => i > 0 && /^\p{L}{2,}$/u.test(w) && /^\p{L}{2,}$/u.test(words[i - 1]!),
  );
}

/**
 * The lines of a block of code, each read as a sentence of its own: a command's usage lists its
 * options one to a line, and a comment says what the line under it does. Only those answer
 * ({@link saysSomething}).
 */
function codeLines(text: string, start: number): Sentence[] {
  const lines: Sentence[] = [];
  let offset = 0;
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    if (trimmed !== '') {
      const at = start + offset + line.indexOf(trimmed);
      lines.push({ text: trimmed, start: at, end: at + trimmed.length });
    }
    offset += line.length + 1;
  }
  return lines;
}

/**
 * Whether sentence `s` of `text` is a heading ("The confidence gate and its calibration"): a
 * paragraph of one short line, followed by more text, that does not end as a sentence does and
 * holds no figure, colon or list marker; or, directly above its paragraph, a plain-text title
 * (`isTitle`, which also keeps it a line of its own when lines are unwrapped). It names a subject
 * and says nothing about it, yet it matches a question about that subject better than any
 * sentence does. A label with a figure
 * ("Weight: 7.2 kg"), a list item and a lone line at the end of a passage may still answer.
 */
function isHeading(text: string, s: Sentence): boolean {
  const line = s.text;
  if (line.includes('\n') || /[\d:]/.test(line) || /[.!?;,…]["'”’)\]]*$/.test(line)) return false;
  if (/^(?:[-*+•–]|\p{L}[.)])\s/u.test(line)) return false;
  if (line.split(/\s+/).length > MAX_HEADING_WORDS) return false;
  const lead = text.slice(Math.max(0, s.start - 100), s.start);
  const startsParagraph = (s.start <= 100 && lead.trim() === '') || /\n[^\S\n]*\n\s*$/.test(lead);
  if (!startsParagraph) return false;
  const after = text.slice(s.end, s.end + 300);
  if (/^[^\S\n]*\n[^\S\n]*\n\s*\S/.test(after)) return true;
  // Directly above its paragraph, a line is a heading only as a plain-text title.
  const next = /^[^\S\n]*\n([^\n]*)/.exec(after)?.[1];
  return next !== undefined && isTitle(line, next);
}

/**
 * The list item that the sentence starting at `start` belongs to, as a key (its passage and the
 * start of the item's line), or null when its line is not a list item. A list item is read on one
 * line (the parsers write it so).
 */
function listItemOf(text: string, start: number, passage: number): string | null {
  const lineStart = text.lastIndexOf('\n', start - 1) + 1;
  const lineEnd = text.indexOf('\n', lineStart);
  const line = text.slice(lineStart, lineEnd === -1 ? undefined : lineEnd);
  return LIST_MARKER.test(line) ? `${passage}:${lineStart}` : null;
}

/**
 * A sentence's words as the question reads them: all of them when it accepts a denial, else
 * those it affirms, with those it denies apart.
 */
function sentenceWords(
  text: string,
  acceptsDenial: boolean,
): { words: string[]; denied: Set<string> } {
  if (acceptsDenial) return { words: contentWords(text), denied: new Set() };
  const words = affirmedWords(text);
  const affirmed = new Set(words);
  return { words, denied: new Set(contentWords(text).filter((w) => !affirmed.has(w))) };
}

/**
 * The sentence `k` places from `c` (before it when negative): among the sentences as written for
 * a sentence, so that a block's lines do not come between it and its neighbours; among all, the
 * block and its other lines included, for a line of a block.
 */
function neighbour(
  candidates: readonly Candidate[],
  written: readonly Candidate[],
  c: Candidate,
  k: number,
): Candidate | undefined {
  return c.line ? candidates[c.order + k] : written[c.seq + k];
}

/** The context's sentences scored against the question, in context order, with the expected type. */
function scoreSentences(
  question: string,
  blocks: readonly ContextBlock[],
): { candidates: Candidate[]; written: Candidate[]; type: AnswerType | null } {
  const type = expectedAnswerType(question);
  // A yes/no question is answered by a denial as well as by an affirmation ("Is descaling damage
  // covered?" by "The warranty does not cover damage caused by limescale").
  const acceptsDenial = isNegated(question) || isPolar(question);
  const candidates: Candidate[] = [];
  let order = 0;
  let seq = 0;
  let passage = 0;
  for (const block of blocks) {
    // A document's title names the subject of every sentence in it, wherever its sections begin.
    const title = contentWords(block.title ?? '');
    for (const p of block.passages) {
      passage += 1;
      let position = 0;
      let verdict: string | null = null;
      let header: Candidate['header'] = null;
      let section: ReadonlySet<string> | null = title.length > 0 ? new Set(title) : null;
      let sectionHeading: string | null = null;
      const all = sentences(p.text);
      for (const [i, s] of all.entries()) {
        const heading = isHeadingAt(p.text, s.start, s.end);
        // A table's first row names its columns: never an answer, it is what each row's cells
        // are (the question's "default" is in the header, the value in the row).
        const row = isTableRow(s.text);
        if (!row) header = null;
        else if (!isTableRow(all[i - 1]?.text ?? '') && isTableRow(all[i + 1]?.text ?? '')) {
          header = { text: s.text, words: new Set(contentWords(s.text)) };
          continue;
        }
        // A numbered list item's number, which the segmenter may cut off as a sentence ("3."),
        // says nothing.
        if (BARE_NUMBER.test(s.text)) continue;
        // Headings and fragments carry no answer; a short line with a figure may ("Weight: 7.2 kg."),
        // and so may a short sentence ("Closed on Mondays.") or an FAQ's short question
        // ("Damaged in transit?"), whose words the answer below it is read with.
        if (
          !heading &&
          s.text.length < 20 &&
          !/\d/.test(s.text) &&
          (VERDICT.test(s.text) || !SHORT_SENTENCE.test(s.text))
        ) {
          verdict = VERDICT.test(s.text) ? s.text : null;
          continue;
        }
        const code = isCodeBlock(s.text);
        candidates.push({
          block,
          text: s.text,
          // What a sentence denies does not answer a question that does not ask about a denial.
          ...sentenceWords(s.text, acceptsDenial),
          passage,
          order: order++,
          position: position++,
          item: listItemOf(p.text, s.start, passage),
          heading: heading ? null : sectionHeading,
          typed: type !== null && holdsAnswerType(s.text, type),
          answers: mayAnswer(s.text) && !heading && !isHeading(p.text, s),
          asks: isQuestion(s.text),
          verdict,
          section: heading ? null : section,
          header: row ? header : null,
          line: false,
          seq: seq++,
          score: 0,
          named: 0,
          matched: 0,
        });
        verdict = null;
        // After a block of code, its lines, each a sentence of the same section.
        if (code)
          for (const l of codeLines(s.text, s.start))
            candidates.push({
              block,
              text: l.text,
              ...sentenceWords(l.text, acceptsDenial),
              passage,
              order: order++,
              position,
              item: null,
              heading: sectionHeading,
              typed: type !== null && holdsAnswerType(l.text, type),
              answers: saysSomething(l.text),
              asks: false,
              verdict: null,
              section,
              header: null,
              line: true,
              seq: -1,
              score: 0,
              named: 0,
              matched: 0,
            });
        if (heading) {
          section = new Set([...title, ...contentWords(s.text)]);
          sectionHeading = withoutHeadingMarks(s.text).trim();
        }
      }
    }
  }
  // Idf over the sentences as written: a block's lines repeat its words.
  const written = candidates.filter((c) => !c.line);
  if (candidates.length === 0) return { candidates, written, type };
  const df = new Map<string, number>();
  for (const c of written) for (const w of new Set(c.words)) df.set(w, (df.get(w) ?? 0) + 1);
  const idf = (w: string) => Math.log(1 + (written.length + 0.5) / ((df.get(w) ?? 0) + 0.5));
  const terms = questionTerms(question);
  const q = terms.length > 0 ? terms : [...new Set(contentWords(question))];
  const qWeight = q.reduce((s, w) => s + idf(w), 0) || 1;
  // The frame's words ("take" in "How long does delivery take?") tell sentences apart that match
  // the question's terms equally ("Delivery takes three days" against "30 days of delivery").
  const frame = [...new Set(contentWords(question))].filter((w) => !q.includes(w));
  const bestSource = Math.max(...blocks.map((b) => b.score));
  for (const c of candidates) {
    const words = new Set(c.words);
    const affirmed = q.filter((w) => words.has(w)).reduce((s, w) => s + idf(w), 0);
    const denied = q.filter((w) => c.denied.has(w)).reduce((s, w) => s + idf(w), 0);
    const matched = (affirmed > 0 ? affirmed : DENIED_WEIGHT * denied) / qWeight;
    // A question's words that a sentence does not contain are often in the sentence just before.
    const prev = neighbour(candidates, written, c, -1);
    // Not for a table's row: what precedes a table (a question above an FAQ's table, the row
    // before) is said of every row alike, and its header's words are counted apart (`named`).
    // Nor for a block's first line, which the block itself precedes.
    const context =
      prev && prev.block === c.block && !c.header && !(c.line && !prev.line)
        ? new Set(prev.words)
        : null;
    // A sentence that ends with a colon says what follows it (a block of code, a list, a row):
    // "Use exclude, a list of glob patterns, to skip files:" above `exclude = ["node_modules/"]`,
    // all of whose words count, whatever it negates ("exclude" is a negator in prose, not in code).
    const next = neighbour(candidates, written, c, 1);
    const introduced =
      INTRODUCES.test(c.text) && next?.passage === c.passage
        ? new Set([...next.words, ...next.denied])
        : null;
    // Each term the sentence lacks counts once, for the first of these that holds it: the sentence
    // before, the table's header, what the sentence introduces, its section's heading.
    let unclaimed = q.filter((w) => !words.has(w));
    const claim = (source: ReadonlySet<string> | null | undefined): number => {
      if (!source) return 0;
      const found = unclaimed.filter((w) => source.has(w));
      unclaimed = unclaimed.filter((w) => !source.has(w));
      return found.reduce((s, w) => s + idf(w), 0) / qWeight;
    };
    const near = claim(context);
    const named = claim(c.header?.words);
    const ahead = claim(introduced);
    const sectioned = claim(c.section);
    c.named = named;
    c.matched = matched;
    const framed = frame.filter((w) => words.has(w)).length;
    c.score =
      matched +
      FRAME_WEIGHT * Math.min(framed, 2) +
      (prev?.asks && prev.block === c.block ? 1 : NEAR_WEIGHT) * near +
      named +
      NEAR_WEIGHT * (sectioned + ahead) +
      (c.typed ? ANSWER_TYPE_BONUS * matched : 0) -
      (!acceptsDenial && isNegated(c.text) ? NEGATION_PENALTY : 0) -
      SOURCE_RANK_PENALTY * (c.block.index - 1) -
      SOURCE_COSINE_PENALTY * (bestSource - c.block.score) -
      POSITION_PENALTY * Math.min(c.position, 5) -
      (0.002 * Math.min(c.words.length, 60)) / 6;
  }
  return { candidates, written, type };
}

export function extractiveAnswer(
  question: string,
  blocks: readonly ContextBlock[],
  options: ExtractiveOptions = { maxSentences: 2, minRelativeScore: MIN_RELATIVE_SCORE },
): string {
  const { candidates, written, type } = scoreSentences(question, blocks);
  const near = (c: Candidate, k: number) => neighbour(candidates, written, c, k);
  // A sentence repeated (in the overlap of two chunks, or said twice) is given once.
  const seen = new Set<string>();
  const ranked = candidates
    .filter((c) => c.answers)
    .sort((a, b) => b.score - a.score)
    .filter((c) => {
      const key = c.text.replace(/\s+/g, ' ');
      return !seen.has(key) && Boolean(seen.add(key));
    });
  const top = ranked[0];
  if (!top) return '';
  const best = top.score;
  // Further sentences only when they answer nearly as well as the best one, or when the best
  // names the subject without the kind of answer asked for and one of the next two sentences of
  // its passage holds it: the next one, or the one after, if it also holds a term of the question
  // ("The Harbour Light Hotel is ... Double rooms cost ... Check-out is by 11:00").
  // A best sentence that ends with a colon is given with what it introduces, even a block of code.
  const next = near(top, 1);
  const introduced =
    options.maxSentences >= 2 && INTRODUCES.test(top.text) && next?.passage === top.passage
      ? next
      : null;
  const adjacent =
    introduced ??
    (options.maxSentences >= 2 && type !== null && !top.typed
      ? (FOLLOWING.map((k) => near(top, k)).find(
          (c, i) =>
            c?.passage === top.passage && c.answers && c.typed && (i === 0 || c.matched > 0),
        ) ?? null)
      : null);
  // The best sentence in a list item is given with the rest of the item, the next sentence or
  // else the one before: an option's description and its "Default: 1048576 (1MB)." are one answer.
  const itemmate =
    options.maxSentences >= 2 && top.item !== null
      ? ([near(top, 1), near(top, -1)].find((c) => c?.item === top.item && c.answers) ?? null)
      : null;
  // A reason asked for, and the best sentence draws a consequence: its reason is the sentence
  // before, or the one before that when the sentence between only refers back to it ("... are
  // represented in UTF-16. This is a fundamental aspect of the language. Therefore, ...").
  const quotable = (c: Candidate | undefined) =>
    c?.passage === top.passage && c.answers ? c : null;
  const before = near(top, -1);
  const cause =
    options.maxSentences >= 2 && type === 'reason' && CONSEQUENCE.test(top.text)
      ? ((REFERS_BACK.test(before?.text ?? '') ? quotable(near(top, -2)) : null) ??
        quotable(before))
      : null;
  const pair = adjacent ?? cause ?? itemmate;
  const chosen = (pair ? [top, pair] : ranked.slice(0, options.maxSentences)).filter(
    // Every row of a table matches its header's words: a further row must match by its own.
    (c, i) => i === 0 || pair || c.score - c.named >= (best - top.named) * options.minRelativeScore,
  );
  // The best first, unless they are one passage's consecutive sentences, which read in order.
  const inOrder = [...chosen].sort((a, b) => a.order - b.order);
  const consecutive = inOrder.every(
    (c, i) => i === 0 || (c.block === inOrder[0]!.block && c.order === inOrder[i - 1]!.order + 1),
  );
  if (consecutive || (cause && pair === cause)) chosen.splice(0, chosen.length, ...inOrder);
  const polar = isPolar(question);
  const headed = new Set<Candidate['header']>();
  return chosen
    .map((c, i) => {
      // A table row is given under its header, which says what its cells are (once per table).
      const header = c.header && !headed.has(c.header) ? c.header : null;
      headed.add(c.header);
      // A short list item is given under its section's heading, which says what the list is
      // ("TODO: Implement DynamoDB Streams", "Not accepted: Tyres"); so is a sentence that lacks
      // the release or date asked for when its heading holds it ("3.11.0: Added: log() ...").
      const listed =
        i === 0 &&
        c.heading !== null &&
        ((c.item !== null && isShortItem(c.text)) ||
          (type !== null &&
            HEADED_TYPES.has(type) &&
            !c.typed &&
            holdsAnswerType(c.heading, type)));
      const text = header
        ? `${header.text} ${c.text}`
        : listed
          ? `${c.heading}: ${c.text.replace(LIST_MARKER, '')}`
          : polar && c.verdict
            ? `${c.verdict} ${c.text}`
            : c.text;
      // A sentence wrapped over lines, or a table's cells padded to line up, read as one line;
      // a list item is quoted without its bullet or number.
      return `${text.replace(/\s+/g, ' ').replace(LIST_MARKER, '')} [${c.block.index}]`;
    })
    .join(' ');
}
