import { ownerFirst } from './owner-first';
import type { SearchHit } from './types';

const hit = (chunkId: string, ownerUserId: string | null | undefined): SearchHit => ({
  chunkId,
  documentId: chunkId,
  chunkIndex: 0,
  text: chunkId,
  score: 0.5,
  keywordScore: 0,
  keywordCoverage: 0,
  fusedScore: 0.5,
  sourceType: 'doc',
  title: null,
  sourceUri: chunkId,
  language: 'en',
  metadata: {},
  startOffset: 0,
  endOffset: 1,
  ...(ownerUserId === undefined ? {} : { ownerUserId }),
});

describe('owner-first ordering', () => {
  it("puts the caller's own hits first, each group in its relevance order", () => {
    const hits = [
      hit('a', 'bob'),
      hit('b', 'alice'),
      hit('c', null),
      hit('d', 'alice'),
      hit('e', undefined),
    ];
    expect(ownerFirst(hits, 'alice').map((h) => h.chunkId)).toEqual(['b', 'd', 'a', 'c', 'e']);
    expect(ownerFirst(hits, 'bob').map((h) => h.chunkId)).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(ownerFirst(hits, 'carol').map((h) => h.chunkId)).toEqual(['a', 'b', 'c', 'd', 'e']);
  });
});
