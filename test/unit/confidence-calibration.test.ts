/**
 * The fit behind `groundwork calibrate`, on synthetic retrievals whose right answer is known:
 * in the large corpus the gold paragraph comes with weak same-article chunks, so the plain mean
 * cannot separate it from a retrieval without the article; an evidence floor can.
 */
import { fitCalibration, gateRates, groupRates, type Pair } from '../../local/commands/answer-eval';

// Relevance equals the score whatever the cosine weight: coverage is set to the same value.
const hits = (scores: number[]) => scores.map((s) => ({ score: s, keywordCoverage: s }));

const pair: Pair = {
  present: hits([0.8, 0.2, 0.2, 0.2, 0.2]), // mean 0.32
  absent: hits([0.35, 0.35, 0.35, 0.35, 0.35]), // mean 0.35
  smallPresent: hits([0.8, 0.05, 0.05, 0.05, 0.05]),
  smallAbsent: hits([0.05, 0.05, 0.05, 0.05, 0.05]),
};
const pairs = Array.from({ length: 10 }, () => pair);

describe('confidence calibration fit', () => {
  it('finds an evidence floor that separates every case', () => {
    const { calibration, fit } = fitCalibration(pairs);
    expect(fit).toEqual({ present: 1, absent: 1, smallPresent: 1, smallAbsent: 1 });
    // The weak same-article chunks (0.2) are no evidence, the gold paragraph (0.8) is.
    expect(calibration.evidenceFloor).toBeGreaterThan(0.2);
    expect(calibration.evidenceFloor).toBeLessThanOrEqual(0.8);
    expect(calibration.medium).toBeLessThanOrEqual(0.8);
    expect(calibration.high).toBeGreaterThanOrEqual(calibration.medium);
    expect(gateRates(pairs, calibration)).toEqual(fit);
  });

  it('without a floor, the plain mean gets one side of the large corpus wrong', () => {
    const { calibration, fit } = fitCalibration(pairs, {
      floors: [0],
      cases: ['present', 'absent'],
    });
    expect(calibration.evidenceFloor).toBe(0);
    expect(Math.min(fit.present, fit.absent)).toBe(0);
  });

  it('fitted on the large corpus alone, the plain mean gates the small corpus low', () => {
    const large: Pair = { ...pair, absent: hits([0.25, 0.25, 0.25, 0.25, 0.25]) };
    const { fit } = fitCalibration([large], { floors: [0], cases: ['present', 'absent'] });
    expect(fit).toMatchObject({ present: 1, absent: 1, smallPresent: 0 });
  });

  it('counts further groups (the natural sets) in the worst rate it maximises', () => {
    // Natural questions that only the cosine separates (SQuAD's synthetic hits do not care about
    // the weight): fitted on SQuAD alone the first weight tried (coverage only) gets them wrong,
    // fitted with them the weight moves to the cosine.
    const one = (score: number, keywordCoverage: number) => [{ score, keywordCoverage }];
    const natural = [
      { name: 'answerable', wantsAnswer: true, hits: [one(0.9, 0.1), one(0.85, 0.1)] },
      { name: 'unanswerable', wantsAnswer: false, hits: [one(0.1, 0.9), one(0.15, 0.9)] },
    ];
    const alone = fitCalibration(pairs);
    expect(groupRates(natural, alone.calibration).answerable).toBeLessThan(1);
    const both = fitCalibration(pairs, { groups: natural });
    expect(groupRates(natural, both.calibration)).toEqual({ answerable: 1, unanswerable: 1 });
    expect(both.fit).toEqual({ present: 1, absent: 1, smallPresent: 1, smallAbsent: 1 });
  });
});
