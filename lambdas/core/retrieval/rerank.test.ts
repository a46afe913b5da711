import { noMetrics, silentLog } from '../ports';
import { rerankHits, type Reranker, type RerankScore } from './rerank';
import type { SearchHit } from './types';

function hit(i: number): SearchHit {
  return {
    chunkId: `c${i}`,
    documentId: `d${i}`,
    chunkIndex: 0,
    text: `text ${i}`,
    score: 0.5,
    keywordScore: 0,
    keywordCoverage: 0,
    fusedScore: 1 - i / 10,
    sourceType: 'md',
    title: null,
    sourceUri: `s3://b/${i}`,
    language: 'en',
    metadata: {},
    startOffset: 0,
    endOffset: 6,
  };
}

const HITS = [0, 1, 2, 3, 4].map(hit);
const DEPS = { log: silentLog, metrics: noMetrics };
const SETTINGS = { candidates: 5, timeoutMs: 50 };

function reranker(rerank: Reranker['rerank']): Reranker {
  return { modelId: 'test/reranker', rerank };
}

describe('rerankHits', () => {
  it('orders by relevance, best first, and keeps top_k', async () => {
    const scores: RerankScore[] = [
      { index: 1, relevance: 0.2 },
      { index: 3, relevance: 0.9 },
      { index: 0, relevance: 0.5 },
    ];
    const { hits, outcome } = await rerankHits(
      reranker(async (_q, docs, { topN }) => {
        expect(docs).toEqual(HITS.map((h) => h.text));
        expect(topN).toBe(3);
        return scores;
      }),
      'q',
      HITS,
      3,
      SETTINGS,
      DEPS,
    );
    expect(hits.map((h) => [h.chunkId, h.rerankScore])).toEqual([
      ['c3', 0.9],
      ['c0', 0.5],
      ['c1', 0.2],
    ]);
    expect(outcome).toMatchObject({ model: 'test/reranker', status: 'applied', candidates: 5 });
  });

  it('fills up with the rest in fused order when the reranker returns fewer than top_k', async () => {
    const { hits } = await rerankHits(
      reranker(async () => [{ index: 4, relevance: 1 }]),
      'q',
      HITS,
      3,
      SETTINGS,
      DEPS,
    );
    expect(hits.map((h) => h.chunkId)).toEqual(['c4', 'c0', 'c1']);
  });

  it.each([
    ['an index past the candidates', [{ index: 5, relevance: 1 }]],
    [
      'a repeated index',
      [
        { index: 1, relevance: 1 },
        { index: 1, relevance: 0.5 },
      ],
    ],
    ['a score that is not a number', [{ index: 1, relevance: Number.NaN }]],
  ])('keeps the fused order after %s', async (_, scores) => {
    const { hits, outcome } = await rerankHits(
      reranker(async () => scores),
      'q',
      HITS,
      3,
      SETTINGS,
      DEPS,
    );
    expect(outcome.status).toBe('failed');
    expect(hits).toEqual(HITS.slice(0, 3));
  });

  it('stops waiting at the timeout, aborts the call and keeps the fused order', async () => {
    let signal: AbortSignal | undefined;
    const { hits, outcome } = await rerankHits(
      reranker((_q, _d, options) => {
        signal = options.signal;
        return new Promise<RerankScore[]>(() => undefined);
      }),
      'q',
      HITS,
      2,
      SETTINGS,
      DEPS,
    );
    expect(outcome.status).toBe('timed_out');
    expect(signal?.aborted).toBe(true);
    expect(hits).toEqual(HITS.slice(0, 2));
  });

  it('counts failures and timeouts as metrics', async () => {
    const counted: string[] = [];
    const metrics = { count: (name: string) => counted.push(name), timing: () => undefined };
    await rerankHits(
      reranker(() => Promise.reject(new Error('down'))),
      'q',
      HITS,
      2,
      SETTINGS,
      {
        log: silentLog,
        metrics,
      },
    );
    await rerankHits(
      reranker(() => new Promise(() => undefined)),
      'q',
      HITS,
      2,
      SETTINGS,
      {
        log: silentLog,
        metrics,
      },
    );
    expect(counted).toEqual(['RerankErrors', 'RerankTimeouts']);
  });
});
