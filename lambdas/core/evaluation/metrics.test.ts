import { mrrAt, ndcgAt, recallAt, scoreRun } from './metrics';

describe('retrieval metrics', () => {
  const rel = new Map([
    ['a', 2],
    ['b', 1],
  ]);

  it('nDCG is 1 for the ideal ranking and uses linear gains with a log2 discount', () => {
    expect(ndcgAt(10, ['a', 'b', 'x'], rel)).toBeCloseTo(1, 10);
    const dcg = 1 / Math.log2(2) + 2 / Math.log2(3);
    const idcg = 2 / Math.log2(2) + 1 / Math.log2(3);
    expect(ndcgAt(10, ['b', 'a'], rel)).toBeCloseTo(dcg / idcg, 10);
    expect(ndcgAt(1, ['x', 'a'], rel)).toBe(0);
  });

  it('recall counts relevant documents found within k', () => {
    expect(recallAt(100, ['x', 'b'], rel)).toBe(0.5);
    expect(recallAt(1, ['x', 'a', 'b'], rel)).toBe(0);
  });

  it('MRR is the reciprocal rank of the first relevant document within k', () => {
    expect(mrrAt(10, ['x', 'y', 'b'], rel)).toBeCloseTo(1 / 3, 10);
    expect(mrrAt(2, ['x', 'y', 'b'], rel)).toBe(0);
  });

  it('averages only over queries with a relevant document; a missing run scores 0', () => {
    const qrels = new Map([
      ['q1', rel],
      ['q2', new Map([['c', 1]])],
      ['q3', new Map([['d', 0]])],
    ]);
    const scores = scoreRun(new Map([['q1', ['a', 'b']]]), qrels);
    expect(scores.queries).toBe(2);
    expect(scores.ndcg10).toBeCloseTo(0.5, 10);
    expect(scores.recall100).toBeCloseTo(0.5, 10);
  });
});
