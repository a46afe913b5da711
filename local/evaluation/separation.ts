/**
 * How well the signals an offline gate can read separate the natural sets' answerable questions
 * from their unanswerable ones (docs/confidence.md, "What bounds the gate"). Per signal, the area
 * under the ROC curve on each split; then all signals together, a logistic regression fitted on
 * the fit split, and what it would let through held out at the score that refuses 90 % of the fit
 * split's unanswerable questions. Every signal is read so that higher means "answerable".
 */
import type { BackgroundStats } from '../../lambdas/core/answer/background';
import { expectedAnswerType, holdsAnswerType } from '../../lambdas/core/answer/answer-type';
import {
  gateQuestion,
  measuredEvidence,
  normalisedCosine,
  questionCoverage,
  TOP_FOR_CONFIDENCE,
  type ConfidenceCalibration,
} from '../../lambdas/core/answer/confidence';
import { contentWords, questionTerms, sentences } from '../../lambdas/core/answer/text';
import type { SearchHit } from '../../lambdas/core/retrieval/types';
import type { Split } from './natural';

/** What the gate sees of one retrieved chunk. */
type GateHit = Pick<SearchHit, 'score' | 'keywordCoverage' | 'text'> &
  Partial<Pick<SearchHit, 'title'>>;

export const SIGNALS = [
  'gate',
  'cosine',
  'coverage',
  'sentenceCoverage',
  'termsPresent',
  'answerKind',
  'namesMentioned',
] as const;
type Signal = (typeof SIGNALS)[number];
export type QuestionSignals = Record<Signal, number>;

/** The refusal rate on the fit split's unanswerable questions at which the combination is read. */
const TARGET_REFUSAL = 0.9;

/**
 * A question's signals from its top 5 retrieved chunks (raw cosines in `score`), its background,
 * a calibration (for the gate's own score) and the extractive answer on the same retrieval:
 *
 * - `gate`: the gate's `avg_relevance` (0 with no evidence or an unmatched name);
 * - `cosine`: the best chunk's cosine in units of the background (confidence.ts);
 * - `coverage`: the best chunk's coverage as the gate measures it;
 * - `sentenceCoverage`: the best share of the question's terms in one sentence with the sentence
 *   before it and the chunk's title;
 * - `termsPresent`: the share of the question's terms that one of the chunks holds;
 * - `answerKind`: 1 when the answer holds the kind asked for, 0 when not, 0.5 when the question
 *   asks for none (answer-type.ts);
 * - `namesMentioned`: 0 when the question names something none of the chunks mentions.
 */
export function questionSignals(
  question: string,
  hits: readonly GateHit[],
  background: BackgroundStats | null,
  calibration: ConfidenceCalibration,
  answer: string,
): QuestionSignals {
  const top = hits.slice(0, TOP_FOR_CONFIDENCE);
  const verdict = gateQuestion(question, top, background, calibration);
  // The gate's measures of each chunk, whatever the name check said.
  const evidence = measuredEvidence(question, top, background);
  const terms = questionTerms(question);
  const bags = top.map((h) => new Set(contentWords(`${h.title ?? ''}\n${h.text}`)));
  const windows = top.flatMap((h) =>
    sentences(h.text).map((s, i, all) => `${h.title ?? ''}\n${all[i - 1]?.text ?? ''}\n${s.text}`),
  );
  const kind = expectedAnswerType(question);
  return {
    gate: verdict.avgRelevance,
    cosine: Math.max(
      0,
      ...top.map((h) => (background ? normalisedCosine(h.score, background) : h.score)),
    ),
    coverage: Math.max(0, ...evidence.map((e) => e.keywordCoverage)),
    sentenceCoverage: Math.max(0, ...questionCoverage(question, windows)),
    termsPresent:
      terms.length === 0
        ? 1
        : terms.filter((t) => bags.some((b) => b.has(t))).length / terms.length,
    answerKind: kind === null ? 0.5 : holdsAnswerType(answer, kind) ? 1 : 0,
    namesMentioned: verdict.unmatchedNames.length > 0 ? 0 : 1,
  };
}

/** The probability that a positive scores above a negative (ties count half); 0.5 if either is empty. */
export function areaUnderCurve(positives: readonly number[], negatives: readonly number[]): number {
  if (positives.length === 0 || negatives.length === 0) return 0.5;
  let wins = 0;
  for (const p of positives) for (const n of negatives) wins += p > n ? 1 : p === n ? 0.5 : 0;
  return wins / (positives.length * negatives.length);
}

/** A logistic regression over standardised inputs: `score` is its log-odds. */
export interface LogisticModel {
  readonly score: (x: readonly number[]) => number;
  readonly weights: readonly number[];
}

/**
 * Fits a logistic regression by full-batch gradient descent (L2 0.01 on the weights, not the
 * intercept), each input standardised on the rows given. Deterministic.
 */
export function fitLogistic(
  rows: readonly { readonly x: readonly number[]; readonly y: boolean }[],
  iterations = 3000,
): LogisticModel {
  const k = rows[0]?.x.length ?? 0;
  const mean = Array.from(
    { length: k },
    (_, j) => rows.reduce((s, r) => s + r.x[j]!, 0) / rows.length,
  );
  const sd = mean.map((m, j) =>
    Math.max(1e-6, Math.sqrt(rows.reduce((s, r) => s + (r.x[j]! - m) ** 2, 0) / rows.length)),
  );
  const z = (x: readonly number[]) => x.map((v, j) => (v - mean[j]!) / sd[j]!);
  const data = rows.map((r) => ({ x: z(r.x), y: r.y ? 1 : 0 }));
  const w = new Array<number>(k + 1).fill(0); // w[k] is the intercept
  const logit = (x: readonly number[]) => x.reduce((s, v, j) => s + v * w[j]!, w[k]!);
  for (let it = 0; it < iterations; it++) {
    const grad = new Array<number>(k + 1).fill(0);
    for (const d of data) {
      const err = 1 / (1 + Math.exp(-logit(d.x))) - d.y;
      d.x.forEach((v, j) => (grad[j]! += err * v));
      grad[k]! += err;
    }
    for (let j = 0; j <= k; j++)
      w[j]! -= 0.5 * (grad[j]! / data.length + (j < k ? 0.01 * w[j]! : 0));
  }
  return { score: (x) => logit(z(x)), weights: [...w] };
}

/** One natural question: its signals, whether the corpus answers it and whether the answer holds the fact. */
export interface SeparationSample {
  readonly split: Split;
  readonly answerable: boolean;
  /** The extractive answer, gate aside, holds the fact (always false when not answerable). */
  readonly holdsFact: boolean;
  readonly signals: QuestionSignals;
}

export interface SeparationReport {
  /**
   * Per signal and split, the area under the ROC curve: answerable questions whose answer holds
   * the fact (those a gate should let through) against unanswerable ones.
   */
  readonly auc: Record<Signal | 'combined', Record<Split, number>>;
  /** The combination's weights, per signal in {@link SIGNALS} order, then the intercept. */
  readonly weights: readonly number[];
  /**
   * Held out, at the combination's score that refuses 90 % of the fit split's unanswerable
   * questions: answerable ones let through whose answer holds the fact, and unanswerable refused.
   */
  readonly atTargetRefusal: {
    readonly answeredWithFact: number;
    readonly answerable: number;
    readonly refused: number;
    readonly unanswerable: number;
  };
}

export function separationReport(samples: readonly SeparationSample[]): SeparationReport {
  const vector = (s: SeparationSample) => SIGNALS.map((k) => s.signals[k]);
  const of = (split: Split) => samples.filter((s) => s.split === split);
  const aucOf = (split: Split, score: (s: SeparationSample) => number) => {
    const rows = of(split);
    return areaUnderCurve(
      rows.filter((s) => s.holdsFact).map(score),
      rows.filter((s) => !s.answerable).map(score),
    );
  };
  const model = fitLogistic(
    of('fit')
      .filter((s) => s.holdsFact || !s.answerable)
      .map((s) => ({ x: vector(s), y: s.answerable })),
  );
  const combined = (s: SeparationSample) => model.score(vector(s));
  const auc = {} as SeparationReport['auc'];
  for (const k of SIGNALS)
    auc[k] = {
      fit: aucOf('fit', (s) => s.signals[k]),
      heldout: aucOf('heldout', (s) => s.signals[k]),
    };
  auc.combined = { fit: aucOf('fit', combined), heldout: aucOf('heldout', combined) };
  // The lowest score that still refuses the target share of the fit split's unanswerable questions.
  const refusedScores = of('fit')
    .filter((s) => !s.answerable)
    .map(combined)
    .sort((a, b) => a - b);
  const threshold =
    refusedScores[
      Math.min(refusedScores.length - 1, Math.ceil(refusedScores.length * TARGET_REFUSAL) - 1)
    ] ?? Infinity;
  const held = of('heldout');
  return {
    auc,
    weights: model.weights,
    atTargetRefusal: {
      answeredWithFact: held.filter((s) => s.holdsFact && combined(s) > threshold).length,
      answerable: held.filter((s) => s.answerable).length,
      refused: held.filter((s) => !s.answerable && combined(s) <= threshold).length,
      unanswerable: held.filter((s) => !s.answerable).length,
    },
  };
}
