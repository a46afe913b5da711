/**
 * The confidence gate. `avg_relevance` is the mean relevance of the top 5 retrieved chunks that
 * count as evidence; a chunk's relevance is a weighted mix of two measures that mean the same
 * whatever the embedding model:
 *
 * - its cosine to the question in standard deviations above the question's own background (its
 *   cosine to unrelated text, ./background.ts), divided by 10 and clamped to [0, 1];
 * - its coverage of the question: the mean of the search's keyword coverage (the idf-weighted
 *   share of the question's words in the chunk, idf over the corpus) and the share of the
 *   question's terms, less its interrogative frame ("how long", "can I"), found in the chunk
 *   after the same normalisation on both sides, each term weighted by its idf among the top 5.
 *
 * A chunk below the evidence floor is not evidence: it is left out of the mean, so a small
 * corpus, whose top 5 always holds unrelated chunks, is not gated low for that alone. No evidence
 * at all is `low`. The weight, the floor and the two thresholds are calibrated per embedding
 * model (`groundwork calibrate`, docs/confidence.md); a model without a calibration uses the
 * defaults below, which are stated in standard deviations of the background and so mean the same
 * for every model.
 */
import { distance } from 'fastest-levenshtein';
import type { SearchHit } from '../retrieval/types';
import type { BackgroundStats } from './background';
import { contentWords, namedTerms, questionTerms, unaccentedWords } from './text';

export type ConfidenceLevel = 'high' | 'medium' | 'low';

export interface ConfidenceCalibration {
  /** Weight of the background-normalised cosine in the relevance estimate; the rest is coverage. */
  readonly cosineWeight: number;
  /**
   * Relevance below which a chunk of the top 5 is not evidence and is not averaged.
   * @default 0 (every chunk of the top 5 counts: the plain mean)
   */
  readonly evidenceFloor?: number;
  /** `avg_relevance` at or above which the level is `high`. */
  readonly high: number;
  /** `avg_relevance` at or above which the level is `medium`; below it, `low` (no LLM call). */
  readonly medium: number;
}

/**
 * The defaults, for models without a calibration of their own, set from what the units mean
 * rather than fitted: cosine and coverage weigh the same (coverage does not depend on the model);
 * a chunk is evidence at relevance 0.3 (e.g. a cosine 3 standard deviations above the question's
 * background with 30 % coverage), `medium` when the evidence averages 0.4, `high` 0.6
 * (docs/decisions/0133-background-normalised-confidence.md).
 */
export const DEFAULT_CALIBRATION: ConfidenceCalibration = {
  cosineWeight: 0.5,
  evidenceFloor: 0.3,
  high: 0.6,
  medium: 0.4,
};

/** Standard deviations of the background that make a normalised cosine of 1. */
const BACKGROUND_SCALE = 10;

/** How many of the retrieved chunks, in retrieval order, the gate reads. */
export const TOP_FOR_CONFIDENCE = 5;

export interface ConfidenceAssessment {
  /** Mean relevance of the evidence chunks; 0 when none of the top 5 reaches the floor. */
  readonly avgRelevance: number;
  readonly level: ConfidenceLevel;
  /** How many of the top 5 chunks reached the evidence floor (and were averaged). */
  readonly evidenceChunks: number;
}

export function relevanceOf(
  hit: Pick<SearchHit, 'score' | 'keywordCoverage'>,
  calibration: ConfidenceCalibration,
): number {
  const w = calibration.cosineWeight;
  return w * hit.score + (1 - w) * hit.keywordCoverage;
}

/** Gates retrieved hits (in retrieval order) with a model's calibration. */
export function assessConfidence(
  hits: readonly Pick<SearchHit, 'score' | 'keywordCoverage'>[],
  calibration: ConfidenceCalibration,
): ConfidenceAssessment {
  const floor = calibration.evidenceFloor ?? 0;
  // The top 5 in retrieval order, as ranked for the caller; then only those that are evidence.
  const evidence = hits
    .slice(0, TOP_FOR_CONFIDENCE)
    .map((h) => relevanceOf(h, calibration))
    .filter((r) => r >= floor);
  const avgRelevance =
    evidence.length === 0 ? 0 : evidence.reduce((s, x) => s + x, 0) / evidence.length;
  const level: ConfidenceLevel =
    evidence.length === 0
      ? 'low'
      : avgRelevance >= calibration.high
        ? 'high'
        : avgRelevance >= calibration.medium
          ? 'medium'
          : 'low';
  return { avgRelevance, level, evidenceChunks: evidence.length };
}

/** The gate's verdict on a question, with the names that made it refuse, if any. */
export interface GateVerdict extends ConfidenceAssessment {
  /** The question's names that none of the top 5 mentions ({@link unmatchedNames}). */
  readonly unmatchedNames: readonly string[];
}

/** Gates a question's retrieved hits (in retrieval order) with a model's calibration. */
export function gateQuestion(
  question: string,
  hits: readonly (Pick<SearchHit, 'score' | 'keywordCoverage' | 'text'> &
    Partial<Pick<SearchHit, 'title'>>)[],
  background: BackgroundStats | null,
  calibration: ConfidenceCalibration,
): GateVerdict {
  const top = hits.slice(0, TOP_FOR_CONFIDENCE);
  const names = unmatchedNames(question, top);
  const evidence = names.length > 0 ? [] : measuredEvidence(question, top, background);
  return { ...assessConfidence(evidence, calibration), unmatchedNames: names };
}

/** A chunk's cosine in standard deviations above the question's background, / 10, in [0, 1]. */
export function normalisedCosine(cosine: number, background: BackgroundStats): number {
  const z = (cosine - background.mean) / Math.max(background.sd, 1e-3);
  return Math.min(1, Math.max(0, z / BACKGROUND_SCALE));
}

/**
 * Per text, the idf-weighted share of the question's terms (without its interrogative frame) that
 * it contains; idf over the texts given. A question with no such terms covers nothing.
 */
export function questionCoverage(question: string, texts: readonly string[]): number[] {
  const terms = questionTerms(question);
  const bags = texts.map((t) => new Set(contentWords(t)));
  const n = bags.length;
  const idf = new Map(
    terms.map((w) => [w, Math.log(1 + (n + 0.5) / (bags.filter((b) => b.has(w)).length + 0.5))]),
  );
  const total = terms.reduce((s, w) => s + idf.get(w)!, 0);
  return bags.map((b) =>
    total === 0 ? 0 : terms.filter((w) => b.has(w)).reduce((s, w) => s + idf.get(w)!, 0) / total,
  );
}

/**
 * The names of the question ({@link namedTerms}: "PayPal", "E7") that none of the top 5 hits
 * holds, in its text or its document's title.
 */
export function unmatchedNames(
  question: string,
  hits: readonly (Pick<SearchHit, 'text'> & Partial<Pick<SearchHit, 'title'>>)[],
): string[] {
  const names = namedTerms(question);
  if (names.length === 0) return [];
  const found = new Set<string>();
  for (const h of hits.slice(0, TOP_FOR_CONFIDENCE)) {
    const words = unaccentedWords(`${h.title ?? ''}\n${h.text}`);
    // Two words written as one ("Superbowl" for "Super Bowl") name the same thing.
    words.forEach((w, i) => found.add(w).add(`${w}${words[i + 1] ?? ''}`));
  }
  const words = [...found];
  return names.filter((n) => !found.has(n) && !words.some((w) => mayName(n, w)));
}

/**
 * Whether `word` of a source may be `name` written otherwise: misspelt, by one edit in a name of
 * 4 or 5 letters and two in a longer one ("Ghengis" for "Genghis", "Counil" for "Council"), or
 * as the start or end of a longer word ("Corp" in "corporation", "Bowl" in "Superbowl"). A name
 * of fewer than 3 letters must match exactly (E7 is not E2).
 */
function mayName(name: string, word: string): boolean {
  if (name.length < 3) return false;
  if (word.length > name.length && (word.startsWith(name) || word.endsWith(name))) return true;
  const edits = name.length >= 6 ? 2 : name.length >= 4 ? 1 : 0;
  return edits > 0 && Math.abs(name.length - word.length) <= edits && distance(name, word) <= edits;
}

/**
 * The top 5 hits as the gate measures them: `score` the background-normalised cosine (the raw
 * cosine if the background is unknown) and `keywordCoverage` the mean of the search's coverage
 * (every word of the question, idf over the corpus) and the question's coverage above (without
 * its interrogative frame, idf over the top 5). None is evidence when the question names
 * something none of them mentions ({@link unmatchedNames}): "Can I pay with PayPal?" against
 * pages on payment that never name PayPal is not answered by them, however close they are.
 */
export function gateEvidence(
  question: string,
  hits: readonly (Pick<SearchHit, 'score' | 'keywordCoverage' | 'text'> &
    Partial<Pick<SearchHit, 'title'>>)[],
  background: BackgroundStats | null,
): Pick<SearchHit, 'score' | 'keywordCoverage'>[] {
  const top = hits.slice(0, TOP_FOR_CONFIDENCE);
  return unmatchedNames(question, top).length > 0
    ? []
    : measuredEvidence(question, top, background);
}

/** The top 5 hits' normalised cosine and coverage ({@link gateEvidence}), names aside. */
export function measuredEvidence(
  question: string,
  top: readonly Pick<SearchHit, 'score' | 'keywordCoverage' | 'text'>[],
  background: BackgroundStats | null,
): Pick<SearchHit, 'score' | 'keywordCoverage'>[] {
  const coverage = questionCoverage(
    question,
    top.map((h) => h.text),
  );
  return top.map((h, i) => ({
    score: background ? normalisedCosine(h.score, background) : h.score,
    keywordCoverage: (h.keywordCoverage + (coverage[i] ?? 0)) / 2,
  }));
}
