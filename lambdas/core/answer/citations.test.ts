import type { ContextBlock } from './context';
import { mapCitations, storedCitation } from './citations';

const block: ContextBlock = {
  index: 1,
  documentId: 'd1',
  title: 'Travel policy',
  sourceUri: 's3://b/travel.md',
  sourceType: 'doc',
  metadata: {},
  score: 0.5,
  tokens: 20,
  passages: [
    {
      chunkIds: ['c1'],
      start: 100,
      end: 180,
      text: 'Flights are booked early. Hotel costs are reimbursed up to 180 euros per night.',
    },
  ],
};

describe('mapCitations', () => {
  it.each([
    ['before the full stop', 'Hotels are reimbursed up to 180 euros per night [1].'],
    ['after the full stop', 'Hotels are reimbursed up to 180 euros per night. [1]'],
  ])('maps a marker %s to the supporting sentence', (_, answer) => {
    const [citation] = mapCitations(answer, [block]);
    const hotel = 'Hotel costs are reimbursed up to 180 euros per night.';
    const at = 100 + block.passages[0]!.text.indexOf(hotel);
    expect(citation?.sentences).toEqual([{ start: at, end: at + hotel.length }]);
  });

  it('gives a marker written after a full stop to the sentence before it, not the next', () => {
    const other: ContextBlock = {
      ...block,
      index: 2,
      documentId: 'd2',
      passages: [{ chunkIds: ['c2'], start: 0, end: 40, text: 'Taxis are not reimbursed at all.' }],
    };
    // The segmenter reads "[1] Taxis are ..." as the second sentence.
    const answer = 'Flights are booked early. [1] Taxis are not reimbursed at all. [2]';
    const [flights, taxis] = mapCitations(answer, [block, other]);
    expect(flights?.sentences).toEqual([{ start: 100, end: 125 }]);
    expect(flights?.markers).toEqual([1]);
    expect(taxis?.sentences).toEqual([{ start: 0, end: 32 }]);
    expect(taxis?.markers).toEqual([2]);
  });

  it('gives markers written before each sentence to the sentence they open', () => {
    const refunds: ContextBlock = {
      ...block,
      index: 1,
      documentId: 'refunds',
      passages: [{ chunkIds: ['r'], start: 0, end: 30, text: 'Refunds take 14 days to arrive.' }],
    };
    const returns: ContextBlock = {
      ...block,
      index: 2,
      documentId: 'returns',
      passages: [
        { chunkIds: ['s'], start: 0, end: 36, text: 'Returns are accepted within 30 days.' },
      ],
    };
    const answer = '[1] Refunds take 14 days to arrive. [2] Returns are accepted within 30 days.';
    const [r1, r2] = mapCitations(answer, [refunds, returns]);
    expect(r1).toMatchObject({ markers: [1], sentences: [{ start: 0, end: 31 }] });
    expect(r2).toMatchObject({ markers: [2], sentences: [{ start: 0, end: 36 }] });
  });

  it('starts the snippet at the first sentence that supports a claim citing the source', () => {
    const policy: ContextBlock = {
      ...block,
      passages: [
        {
          chunkIds: ['p'],
          start: 0,
          end: 51,
          text: 'Intro text here. Refunds take 14 days to arrive.',
        },
      ],
    };
    // The first claim citing it is supported by none of its sentences, the second is.
    const answer =
      'See the policy for everything about money [1]. Refunds take 14 days to arrive [1].';
    const [citation] = mapCitations(answer, [policy]);
    expect(storedCitation(citation!, 16).snippet).toBe('Refunds take 14 ');
  });

  it('supports a quoted sentence by itself, and starts the snippet there', () => {
    const card: ContextBlock = {
      ...block,
      passages: [
        {
          chunkIds: ['c1'],
          start: 0,
          end: 82,
          text: 'You can buy the Port Ellery Card there. Tap water in Port Ellery is safe to drink.',
        },
      ],
    };
    const [citation] = mapCitations('Tap water in Port Ellery is safe to drink. [1]', [card]);
    expect(citation?.sentences).toEqual([{ start: 40, end: 82 }]);
    expect(storedCitation(citation!, 20).snippet).toBe('Tap water in Port El');
  });

  it('keeps the numbers that cite each source, one source cited under two', () => {
    const second: ContextBlock = { ...block, index: 4 };
    const answer = 'Flights are booked early [4]. Hotel costs are reimbursed up to 180 euros [1].';
    const citations = mapCitations(answer, [block, second]);
    expect(citations).toHaveLength(1);
    expect(citations[0]?.markers).toEqual([4, 1]);
    expect(storedCitation(citations[0]!, 50).markers).toEqual([4, 1]);
  });

  it('ignores a marker for a block that does not exist', () => {
    expect(mapCitations('Something unrelated [7].', [block])).toEqual([]);
  });
});
