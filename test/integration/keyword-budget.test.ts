/**
 * The bounded keyword arm on both databases: chunks to score are chosen from the question's
 * rarest lexemes up to a document-frequency budget, so a chunk that matches only a rare term
 * must still be found among many chunks that match the common ones, and the arm must score no
 * more chunks than its budget whatever the question.
 */
import { createSearchRepository } from '../../lambdas/adapters/postgres/search-repository';
import type { SearchMode } from '../../lambdas/core/retrieval/types';
import { createSearch } from '../../lambdas/core/retrieval/search';
import { ENGINES, seededTestDatabase } from '../support/databases';
import { createHashEmbedder } from '../support/hash-embedder';
import type { SeedDoc } from '../support/seed';

const embedder = createHashEmbedder();
const COMMON_DOCS = 40;
/** Far below the common terms' document frequency (40), above the rare term's (1). */
const SMALL_BUDGET = 10;

const DOCS: SeedDoc[] = [
  ...Array.from({ length: COMMON_DOCS }, (_, i): SeedDoc => ({
    tenantId: 'budget',
    key: `budget/common-${i}`,
    // Every one matches the common terms, several times over, in a short chunk: each would
    // outscore a long chunk on any one of them.
    texts: [`Customer refund policy ${i}: the customer refund policy covers refund requests.`],
  })),
  {
    tenantId: 'budget',
    key: 'budget/rare',
    texts: ['Zeppelin hangars were built from riveted steel girders in the nineteen twenties.'],
  },
  // Another tenant where the rare term is common: its postings must not count against this
  // tenant's budget, nor ever be returned.
  ...Array.from({ length: 5 }, (_, i): SeedDoc => ({
    tenantId: 'airships',
    key: `airships/doc-${i}`,
    texts: [`Zeppelin ${i}: the zeppelin fleet and the customer refund policy for zeppelin rides.`],
  })),
];

describe.each(ENGINES)('bounded keyword arm on %s', (engine) => {
  const db = seededTestDatabase(engine, DOCS, embedder);
  const who = { tenantId: 'budget', userId: 'u1' };

  const searchWith = (dfBudget: number) =>
    createSearch({ store: createSearchRepository(db(), { dfBudget }), embedder });
  const keys = (hits: { sourceUri: string }[]) =>
    hits.map((h) => h.sourceUri.replace('s3://bucket/', ''));

  it.each<SearchMode>(['keyword', 'hybrid'])(
    'finds the chunk matching only a rare term among many matching the common terms (%s)',
    async (mode) => {
      for (const budget of [SMALL_BUDGET, 1_000]) {
        const { hits } = await searchWith(budget).search(who, {
          queryText: 'customer refund policy for zeppelin hangars',
          topK: 5,
          mode,
          filters: {},
        });
        // Keyword mode ranks it first (its terms' idf dwarfs the common ones'); hybrid keeps it
        // in the top 5 whatever the vectors think of it.
        if (mode === 'keyword') expect(keys(hits)[0]).toBe('budget/rare');
        else expect(keys(hits)).toContain('budget/rare');
        expect(keys(hits).every((k) => k.startsWith('budget/'))).toBe(true);
      }
    },
  );

  it('scores every lexeme of the question, not only the rare ones it selected chunks by', async () => {
    const { hits } = await searchWith(SMALL_BUDGET).search(who, {
      queryText: 'zeppelin hangars girders customer',
      topK: 5,
      mode: 'keyword',
      filters: {},
    });
    const unbounded = await searchWith(1_000_000).search(who, {
      queryText: 'zeppelin hangars girders customer',
      topK: 5,
      mode: 'keyword',
      filters: {},
    });
    // The rare chunk's score is the same BM25 either way: the common term, absent from it,
    // adds nothing, and the rare terms' statistics do not depend on the budget.
    expect(hits[0]?.keywordScore).toBeCloseTo(unbounded.hits[0]!.keywordScore, 6);
    expect(keys(unbounded.hits)[0]).toBe('budget/rare');
  });

  it('scores at most the budget of chunks when even the rarest term is common', async () => {
    const { hits } = await searchWith(SMALL_BUDGET).search(who, {
      queryText: 'customer refund policy',
      topK: 50,
      mode: 'keyword',
      filters: {},
    });
    expect(hits.length).toBeGreaterThan(0);
    expect(hits.length).toBeLessThanOrEqual(SMALL_BUDGET);
    const unbounded = await searchWith(1_000_000).search(who, {
      queryText: 'customer refund policy',
      topK: 50,
      mode: 'keyword',
      filters: {},
    });
    expect(unbounded.hits).toHaveLength(COMMON_DOCS);
  });
});

/**
 * The keyword arm's document check. Without filters it is deferred to the best-scored chunks
 * when the caller can see nearly all of the scope; it must still keep out every document the
 * caller may not see, and where private documents are common it must not be deferred, or they
 * would take the budget and leave the visible matches unscored.
 */
const PRIVATE_HEAVY: SeedDoc[] = [
  // Written first, so they come first in the table and in a bitmap scan of the index.
  ...Array.from({ length: 20 }, (_, i): SeedDoc => ({
    tenantId: 'private-heavy',
    key: `private-heavy/private-${i}`,
    visibility: 'user',
    owner: 'someone-else',
    texts: [`Zeppelin ${i}: zeppelin zeppelin notes kept private by someone else.`],
  })),
  ...Array.from({ length: 5 }, (_, i): SeedDoc => ({
    tenantId: 'private-heavy',
    key: `private-heavy/shared-${i}`,
    texts: [`Shared note ${i} on the history of the zeppelin and of airship travel in general.`],
  })),
];
const MOSTLY_SHARED: SeedDoc[] = [
  {
    tenantId: 'mostly-shared',
    key: 'mostly-shared/private',
    visibility: 'user',
    owner: 'someone-else',
    // The best BM25 match of all: the term several times in a short chunk.
    texts: ['Zeppelin zeppelin zeppelin zeppelin.'],
  },
  ...Array.from({ length: 30 }, (_, i): SeedDoc => ({
    tenantId: 'mostly-shared',
    key: `mostly-shared/shared-${i}`,
    texts: [`Shared note ${i} on the history of the zeppelin and of airship travel in general.`],
  })),
];

// A publishing tenant's own (`tenant`) documents are in every reader's scope, but not visible.
const PUBLISHER: SeedDoc[] = [
  ...Array.from({ length: 20 }, (_, i): SeedDoc => ({
    tenantId: 'publisher',
    key: `publisher/internal-${i}`,
    texts: [`Zeppelin ${i}: zeppelin zeppelin notes internal to the publisher.`],
  })),
  ...Array.from({ length: 5 }, (_, i): SeedDoc => ({
    tenantId: 'reader',
    key: `reader/note-${i}`,
    texts: [`Reader note ${i} on the history of the zeppelin and of airship travel in general.`],
  })),
];

describe.each(ENGINES)('keyword arm document check on %s', (engine) => {
  const db = seededTestDatabase(
    engine,
    [...PRIVATE_HEAVY, ...MOSTLY_SHARED, ...PUBLISHER],
    embedder,
  );

  const keyword = async (
    tenantId: string,
    userId: string,
    options: { dfBudget?: number; deferDocumentCheck?: boolean } = {},
    globalTenants: string[] = ['global'],
  ) => {
    const search = createSearch({
      store: createSearchRepository(db(), options),
      embedder,
      settings: { globalTenants },
    });
    const { hits } = await search.search(
      { tenantId, userId },
      { queryText: 'zeppelin', topK: 50, mode: 'keyword', filters: {} },
    );
    return hits.map((h) => h.sourceUri.replace('s3://bucket/', ''));
  };

  it('keeps out the documents the caller may not see, though they score best', async () => {
    const found = await keyword('mostly-shared', 'u1');
    expect(found).toHaveLength(30);
    expect(found.every((k) => k.startsWith('mostly-shared/shared-'))).toBe(true);
    // Their owner sees them, first.
    expect((await keyword('mostly-shared', 'someone-else'))[0]).toBe('mostly-shared/private');
    // The same answer as checking every chunk.
    expect(await keyword('mostly-shared', 'u1', { deferDocumentCheck: false })).toEqual(found);
  });

  it('checks every chunk where private documents are common, so the budget finds the visible ones', async () => {
    // A budget of 10 chunks, 25 matching: 20 private ones first. Deferred, the check would see
    // 10 private chunks and find nothing.
    const found = await keyword('private-heavy', 'u1', { dfBudget: 10 });
    expect([...found].sort()).toEqual(
      Array.from({ length: 5 }, (_, i) => `private-heavy/shared-${i}`).sort(),
    );
  });

  it('counts a publishing tenant unpublished documents among those the caller may not see', async () => {
    const found = await keyword('reader', 'u1', { dfBudget: 10 }, ['publisher']);
    expect([...found].sort()).toEqual(
      Array.from({ length: 5 }, (_, i) => `reader/note-${i}`).sort(),
    );
  });
});

/**
 * Under a selective filter the keyword arm reads the filtered scope's chunks with any of the
 * question's lexemes. Chosen by their frequency in the whole tenant, the rarest lexemes can all
 * lie outside the filter, and the budget would then find nothing the filter keeps.
 */
const FILTERED: SeedDoc[] = [
  ...Array.from({ length: 30 }, (_, i): SeedDoc => ({
    tenantId: 'filtered',
    key: `filtered/red-${i}`,
    metadata: { team: 'red' },
    texts: [`Red note ${i}: the zeppelin schedule for this week.`],
  })),
  {
    tenantId: 'filtered',
    key: 'filtered/red-hangar',
    metadata: { team: 'red' },
    texts: ['Red note: the zeppelin hangar doors were repaired.'],
  },
  ...Array.from({ length: 2 }, (_, i): SeedDoc => ({
    tenantId: 'filtered',
    key: `filtered/blue-${i}`,
    metadata: { team: 'blue' },
    texts: [`Blue note ${i}: the zeppelin crew changed shifts.`],
  })),
];

describe.each(ENGINES)('keyword arm under a selective filter on %s', (engine) => {
  const db = seededTestDatabase(engine, FILTERED, embedder);

  it('finds the filtered scope chunks holding only the common lexemes', async () => {
    // `hangar` (1 chunk) is taken within the budget of 10, `zeppelin` (33) is not.
    const search = createSearch({
      store: createSearchRepository(db(), { dfBudget: 10 }),
      embedder,
    });
    const { hits } = await search.search(
      { tenantId: 'filtered', userId: 'u1' },
      {
        queryText: 'zeppelin hangar',
        topK: 10,
        mode: 'keyword',
        filters: { metadata: { equals: { key: 'team', value: 'blue' } } },
      },
    );
    expect(hits.map((h) => h.sourceUri.replace('s3://bucket/', '')).sort()).toEqual([
      'filtered/blue-0',
      'filtered/blue-1',
    ]);
  });
});
