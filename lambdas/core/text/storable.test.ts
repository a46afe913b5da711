import fc from 'fast-check';
import { findUnstorable, isStorableText, toStorableText } from './storable';

describe('text PostgreSQL can store', () => {
  it.each([
    ['plain text', 'warranty claim', true],
    ['a paired surrogate (an emoji)', 'ok \u{1F600}', true],
    ['a NUL', 'a\u0000b', false],
    ['a lone high surrogate', 'a\uD800b', false],
    ['a lone high surrogate at the end', 'a\uD83D', false],
    ['a lone low surrogate', '\uDC00a', false],
    ['two high surrogates', '\uD800\uD800\uDC00', false],
  ])('%s: %s', (_case, text, storable) => {
    expect(isStorableText(text)).toBe(storable);
  });

  it('cleans any string into one that is storable and keeps storable strings as they are', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        const clean = toStorableText(text);
        expect(isStorableText(clean)).toBe(true);
        // Exactly the strings that survive a UTF-8 round trip and hold no NUL.
        const roundTrips = Buffer.from(text, 'utf8').toString('utf8') === text;
        expect(isStorableText(text)).toBe(roundTrips && !text.includes('\u0000'));
        if (isStorableText(text)) expect(clean).toBe(text);
      }),
    );
  });

  it('names the first unstorable value or key by its path', () => {
    expect(findUnstorable({ a: [1, 'ok', { b: 'x\u0000' }] })).toEqual({
      path: 'a.2.b',
      reason: 'unstorable_text',
    });
    expect(findUnstorable({ meta: { 'ke\uDC00y': 1 } })).toEqual({
      path: 'meta.ke\uDC00y',
      reason: 'unstorable_text',
    });
    expect(findUnstorable('\u0000')).toEqual({ path: '', reason: 'unstorable_text' });
    expect(findUnstorable({ a: ['fine', 2, null, true] })).toBeNull();
  });

  it('walks a value nested a million levels deep without the call stack', () => {
    const deep = JSON.parse('['.repeat(1_000_000) + ']'.repeat(1_000_000)) as unknown;

    expect(findUnstorable(deep, 32)).toEqual({
      path: Array.from({ length: 32 }, () => '0').join('.'),
      reason: 'too_deep',
    });
  });
});
