/**
 * `npm run bench -- search` end to end on a small corpus (5,000 chunks) on the real PostgreSQL,
 * so that the benchmark cannot rot unnoticed: every section runs and reports, and its recall
 * figures are computed against the ground truth. Nothing here asserts on time.
 */
import { benchSearch } from '../../bench/search';
import type { SearchBenchResult } from '../../bench/search-config';
import { TENANTS } from '../../bench/search-data';
import { TEST_DATABASE_URL } from '../support/databases';

jest.setTimeout(240_000);

describe('search benchmark (small corpus)', () => {
  let result: SearchBenchResult;
  const lines: string[] = [];

  beforeAll(async () => {
    result = await benchSearch({
      chunks: 5_000,
      queries: 10,
      databaseUrl: TEST_DATABASE_URL,
      latencyBudgetSeconds: 1,
      log: (line) => lines.push(line),
    });
  });

  const tenants = [TENANTS.big, TENANTS.tenPercent, TENANTS.onePercent, TENANTS.tenthPercent];

  it('loads the four tenants and measures every section', () => {
    expect(result.corpus.chunks).toBe(5_000);
    expect(result.corpus.tenants).toEqual({
      [TENANTS.big]: 4_445,
      [TENANTS.tenPercent]: 500,
      [TENANTS.onePercent]: 50,
      [TENANTS.tenthPercent]: 5,
    });
    // The sweep and the product's ef_search at 5,000 chunks (its candidates, 50).
    expect(result.vectorArm.sweep.map((r) => r.efSearch)).toEqual([40, 50, 64, 100, 200, 400]);
    expect(result.vectorArm.shippedEfSearch).toBe(50);
    expect(result.filtered.map((f) => f.tenantId)).toEqual([
      TENANTS.onePercent,
      TENANTS.tenPercent,
      TENANTS.tenthPercent,
    ]);
    expect(result.latency.map((l) => l.label)).toEqual(
      tenants.flatMap((t) =>
        [
          'hybrid',
          'keyword',
          'vector',
          'hybrid planned per search',
          'hybrid planned per search, as the owner \\(no RLS\\)',
        ].map((m) => expect.stringMatching(new RegExp(`^${m}, ${t} `))),
      ),
    );
    expect(result.budgetSweep.map((b) => b.dfBudget)).toEqual([
      250,
      500,
      1_000,
      2_000,
      5_000,
      null,
    ]);
    expect(result.selective.map((x) => x.share)).toEqual([0.002, 0.02, 0.2]);
    expect(result.plans.map((x) => x.tenantId)).toEqual(tenants);
    expect(result.halfvec.halfvecIndexBytes).toBeGreaterThan(0);
    expect(result.halfvec.halfvecIndexBytes).toBeLessThan(result.halfvec.vectorIndexBytes);
    expect(lines.some((l) => l.includes('SEARCH BENCHMARK'))).toBe(true);
  });

  it('measures recall against the exact answers, and search returns top_k rows', () => {
    // The exact scan agrees with the batched ground truth, and at ef_search 400 HNSW over 4,445
    // vectors is exact or nearly so.
    expect(result.vectorArm.exact.agreementWithTruth).toBe(1);
    expect(result.vectorArm.sweep.at(-1)!.recallAt10).toBeGreaterThan(0.9);
    for (const f of result.filtered) {
      const iterative = f.runs.find((r) => r.label === 'iterative scan on (relaxed_order)')!;
      // The 0.1 % tenant holds 5 chunks here: fewer than top_k.
      if ((result.corpus.tenants[f.tenantId] ?? 0) >= 10) expect(iterative.fullTopK).toBe(1);
    }
    // Hybrid and vector search fill top_k (8); keyword search returns only chunks holding a term.
    // (The 0.1 % tenant's 5 chunks are one document, capped at 3 chunks per source.)
    for (const run of result.latency)
      if (!run.label.startsWith('keyword') && run.tenantId !== TENANTS.tenthPercent)
        expect([run.label, run.avgHits]).toEqual([run.label, 8]);
    // The machine's stolen CPU time, read from /proc/stat on Linux (this suite's machines).
    for (const run of result.latency) {
      expect(run.stealShare).not.toBeNull();
      expect(run.stealShare).toBeGreaterThanOrEqual(0);
      expect(run.stealShare).toBeLessThanOrEqual(1);
    }
    // A budget above every lexeme's document frequency (5,000 > the 4,445-chunk tenant) scores
    // every matching chunk, so it returns what the unbounded arm returns.
    const loose = result.budgetSweep.find((b) => b.dfBudget === 5_000)!;
    expect([loose.keywordAgreement, loose.hybridAgreement]).toEqual([1, 1]);
  });

  it('answers selective metadata filters exactly, against a brute-force scan', () => {
    // On 4,445 chunks the scopes of 0.2 % and 2 % are small enough for the exact scan from their
    // documents (n_f² < 75 N); 20 % (about 890 chunks) goes through HNSW.
    for (const x of result.selective) expect(x.queries).toBe(40);
    // At 0.2 % (two documents) most chunks lie far from every query: their cosines, clamped at
    // 0, tie, and ties rank by id, not by the distance the brute-force truth orders by.
    expect(result.selective[0]!.chosen.vectorRecallAt8).toBeGreaterThan(0.8);
    expect(result.selective[1]!.chosen.vectorRecallAt8).toBe(1);
    expect(result.selective[2]!.chosen.vectorRecallAt8).toBeGreaterThan(0.8);
    expect(result.selective.at(-1)!.documents).toBeGreaterThan(0);
  });

  it("answers them with each value's filter index too, added once and kept", () => {
    // 20 % through its own graph of about 890 chunks: as exact as the whole graph.
    expect(result.selective[1]!.filterIndex.vectorRecallAt8).toBe(1);
    expect(result.selective[2]!.filterIndex.vectorRecallAt8).toBeGreaterThanOrEqual(
      result.selective[2]!.hnswForced.vectorRecallAt8,
    );
    // Added by the run that marked the documents (a reused schema keeps them).
    for (const x of result.selective)
      if (x.filterIndexBuild) expect(x.filterIndexBuild.copied).toBe(x.chunks);
    expect(lines.some((l) => /filter index/.test(l))).toBe(true);
  });

  it("reports the filtered keyword arm's agreement with the unbounded arm", () => {
    // Each filter leaves queries whose lexemes its chunks hold (at 0.2 %, two documents, not all).
    expect(result.selective.map((x) => x.agreementQueries > 0)).toEqual([true, true, true]);
    expect(result.selective.at(-1)!.agreementQueries).toBe(10);
    // A small scope's arm scores every chunk of it holding a lexeme of the question, as the
    // unbounded arm does; at 20 % the lexemes' document frequencies here are within the budget.
    for (const x of result.selective) expect(x.keywordAgreement).toBe(1);
  });

  it('times every vector plan in every tenant against the exact answers', () => {
    for (const x of result.plans) {
      // The forced exact scans are the truth's own answers; the others are measured against it.
      expect([x.tenantId, x.statement.exact.recallAt8, x.arm.exact.recallAt8]).toEqual([
        x.tenantId,
        1,
        1,
      ]);
      expect(x.statement.rule.queries).toBe(x.queries);
      expect(x.statement.hnsw.recallAt8).toBeGreaterThan(0.5);
    }
    expect(result.halfvec.halfvec.recallAt8).toBeGreaterThan(0.5);
  });
});
