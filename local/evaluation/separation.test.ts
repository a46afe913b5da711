import { DEFAULT_CALIBRATION } from '../../lambdas/core/answer/confidence';
import {
  areaUnderCurve,
  fitLogistic,
  questionSignals,
  separationReport,
  SIGNALS,
  type QuestionSignals,
  type SeparationSample,
} from './separation';

const background = { mean: 0.1, sd: 0.05 };
const hit = (text: string, score: number, title: string | null = null) => ({
  text,
  score,
  keywordCoverage: 0.5,
  title,
});
/** The signals of a question over its hits, with the defaults' calibration. */
const read = (
  question: string,
  hits: ReturnType<typeof hit>[],
  answer: string,
  bg: typeof background | null = background,
) => questionSignals(question, hits, bg, DEFAULT_CALIBRATION, answer);

describe('the signals a gate can read', () => {
  it('reads the sentence that holds the terms, the terms none holds, the kind and the names', () => {
    const hits = [
      hit('Probation lasts six months. Notice is one week during probation.', 0.45, 'Contracts'),
      hit('The office opens at nine.', 0.2),
    ];
    const s = read(
      'How long is the probation period for interns?',
      hits,
      'Probation lasts six months.',
    );
    // "probation" is held, "period" and "intern" are not: a third of the terms.
    expect(s.termsPresent).toBeCloseTo(1 / 3);
    expect(s.sentenceCoverage).toBeGreaterThan(0);
    expect(s.sentenceCoverage).toBeLessThan(1);
    expect(s.answerKind).toBe(1); // a duration for "how long"
    expect(s.cosine).toBeCloseTo(0.7); // (0.45 - 0.1) / 0.05 / 10
    expect(s.namesMentioned).toBe(1);
    expect(s.gate).toBeGreaterThan(0);

    const unnamed = read(
      'Can I pay with PayPal?',
      [hit('We accept cards and bank transfers for every payment.', 0.4)],
      'We accept cards and bank transfers.',
    );
    expect(unnamed.namesMentioned).toBe(0);
    expect(unnamed.gate).toBe(0);
    expect(unnamed.answerKind).toBe(0); // a rule asked for, none given
  });

  it('finds every term when one sentence and the one before it hold them', () => {
    const s = read(
      'How long is probation for interns?',
      [hit('Interns start in June. Probation is six months.', 0.3)],
      'Probation is six months.',
      null,
    );
    // Neither sentence holds both terms; the second with the one before it does.
    expect(s.sentenceCoverage).toBe(1);
    expect(s.termsPresent).toBe(1);
    expect(s.cosine).toBe(0.3); // no background: the raw cosine
  });
});

describe('area under the curve', () => {
  it('is 1 when every positive scores above every negative, 0 reversed, 0.5 for ties', () => {
    expect(areaUnderCurve([3, 4], [1, 2])).toBe(1);
    expect(areaUnderCurve([1, 2], [3, 4])).toBe(0);
    expect(areaUnderCurve([1, 1], [1])).toBe(0.5);
    expect(areaUnderCurve([2, 0], [1])).toBe(0.5);
    expect(areaUnderCurve([], [1])).toBe(0.5);
  });
});

describe('the logistic combination', () => {
  it('learns which input separates, and its sign', () => {
    const rows = Array.from({ length: 40 }, (_, i) => ({
      // The second input decides (lower is positive); the first is noise.
      x: [(i * 7) % 5, i % 2 === 0 ? 1 + (i % 3) : 10 + (i % 3)],
      y: i % 2 === 0,
    }));
    const model = fitLogistic(rows);
    expect(model.weights[1]!).toBeLessThan(-1);
    expect(Math.abs(model.weights[0]!)).toBeLessThan(Math.abs(model.weights[1]!));
    expect(model.score([2, 1])).toBeGreaterThan(0);
    expect(model.score([2, 11])).toBeLessThan(0);
  });
});

describe('the separation report', () => {
  const signals = (v: number): QuestionSignals =>
    Object.fromEntries(SIGNALS.map((k) => [k, k === 'gate' ? v : 0.5])) as QuestionSignals;
  const sample = (
    split: 'fit' | 'heldout',
    answerable: boolean,
    v: number,
    holdsFact = answerable,
  ): SeparationSample => ({ split, answerable, holdsFact, signals: signals(v) });

  it('reports each split, and the combination at the fit split’s 90 % refusal', () => {
    const samples = [
      ...[0.6, 0.7, 0.8, 0.9].map((v) => sample('fit', true, v)),
      ...[0.1, 0.2, 0.3, 0.65].map((v) => sample('fit', false, v)),
      ...[0.5, 0.75, 0.95].map((v) => sample('heldout', true, v)),
      sample('heldout', true, 0.99, false), // answerable, but the answer lacks the fact
      ...[0.05, 0.7].map((v) => sample('heldout', false, v)),
    ];
    const r = separationReport(samples);
    expect(r.auc.gate.fit).toBeCloseTo(15 / 16);
    expect(r.auc.gate.heldout).toBeCloseTo(5 / 6); // the one without the fact does not count
    expect(r.auc.combined.fit).toBeCloseTo(15 / 16);
    // Refusing 90 % of 4 fit unanswerable questions refuses all 4: the threshold is 0.65's score.
    expect(r.atTargetRefusal).toEqual({
      answeredWithFact: 2,
      answerable: 4,
      refused: 1,
      unanswerable: 2,
    });
    expect(r.weights).toHaveLength(SIGNALS.length + 1);
  });
});
