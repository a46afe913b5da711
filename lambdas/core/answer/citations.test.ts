import type { ContextBlock } from './context';
import { mapCitations } from './citations';

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

  it('ignores a marker for a block that does not exist', () => {
    expect(mapCitations('Something unrelated [7].', [block])).toEqual([]);
  });
});
