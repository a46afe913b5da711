/**
 * How the search statement is planned from the scope's statistics (planSearch): which vector
 * scan, and whether the keyword arm may check documents only for its best chunks.
 */
import { DEFAULT_SEARCH_SQL, planSearch } from '../../lambdas/adapters/postgres/search-plan';
import type { ScopeStatistics } from '../../lambdas/core/retrieval/types';

const scope = (over: Partial<ScopeStatistics> = {}): ScopeStatistics => ({
  chunks: 10_000,
  tableChunks: 100_000,
  meanLength: 120,
  restrictedChunks: 0,
  ...over,
});

describe('planSearch', () => {
  it('reads the index once n² reaches the crossover times N, and scans exactly below', () => {
    // 300 × 100,000 = 30,000,000: the crossover lies between 5,477 and 5,478 chunks; at 1M
    // chunks between 17,320 and 17,321.
    expect(planSearch(scope({ chunks: 5_478 }), false).vectorIndex).toBe(true);
    expect(planSearch(scope({ chunks: 5_477 }), false).vectorIndex).toBe(false);
    const million = { tableChunks: 1_000_000 };
    expect(planSearch(scope({ chunks: 17_321, ...million }), false).vectorIndex).toBe(true);
    expect(planSearch(scope({ chunks: 17_320, ...million }), false).vectorIndex).toBe(false);
    expect(planSearch(scope({ chunks: 1_000, tableChunks: 1_000 }), false).vectorIndex).toBe(true);
    // An empty store plans as if it held one chunk, never dividing by zero.
    expect(planSearch(scope({ chunks: 0, tableChunks: 0 }), false).vectorIndex).toBe(false);
    expect(
      planSearch(scope({ chunks: 5_477 }), false, { ...DEFAULT_SEARCH_SQL, indexCrossover: 0 })
        .vectorIndex,
    ).toBe(true);
  });

  it('defers the document check only without filters, with few chunks the caller may not see', () => {
    expect(planSearch(scope({ restrictedChunks: 1_000 }), false).deferDocumentCheck).toBe(true);
    expect(planSearch(scope({ restrictedChunks: 1_001 }), false).deferDocumentCheck).toBe(false);
    // Too many such documents to count: not deferred.
    expect(planSearch(scope({ restrictedChunks: null }), false).deferDocumentCheck).toBe(false);
    expect(planSearch(scope(), true).deferDocumentCheck).toBe(false);
    expect(
      planSearch(scope(), false, { ...DEFAULT_SEARCH_SQL, deferDocumentCheck: false })
        .deferDocumentCheck,
    ).toBe(false);
  });
});
