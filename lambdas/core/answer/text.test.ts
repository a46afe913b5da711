import { unwrapLines } from '../text/lines';
import { sentences } from './text';

describe('sentences', () => {
  it('keeps a sentence that a hard line break wraps whole, with offsets into the original', () => {
    const text =
      'Clothing carries a two-year warranty. The warranty does not cover normal\nwear and tear.\n\nNext paragraph.';
    const found = sentences(text);
    expect(found.map((s) => s.text)).toEqual([
      'Clothing carries a two-year warranty.',
      'The warranty does not cover normal\nwear and tear.',
      'Next paragraph.',
    ]);
    for (const s of found) expect(text.slice(s.start, s.end)).toBe(s.text);
  });

  it('still breaks before list items, headings, quotes and table rows', () => {
    const text = 'Options:\n- first\n- second\n1. third\n# Heading\n> quote\n| a | b |';
    expect(unwrapLines(text)).toBe(text);
  });

  it('does not change the length of the text', () => {
    const text = 'a\nb\n\nc\r\nd';
    expect(unwrapLines(text)).toHaveLength(text.length);
  });
});
