/**
 * Chunker tests: fast-check properties (tiling, coverage, hard size bound, progress, determinism)
 * with two fake counters and the real cl100k counter, plus examples for the edge cases.
 */
import fc from 'fast-check';
import { createTokenCounter } from '../../lambdas/adapters/tokenizer/gpt-token-counter';
import type { TokenCounter } from '../../lambdas/core/ports';
import {
  chunkText,
  MAX_CHARS_PER_TOKEN,
  sentenceSegments,
} from '../../lambdas/core/ingestion/chunker';
import type { Chunk, ChunkingOptions } from '../../lambdas/core/ingestion/types';

/** One token per whitespace-separated word: additive over whitespace, like a real tokenizer. */
const wordCounter: TokenCounter = {
  count: (text) => text.split(/\s+/).filter((w) => w.length > 0).length,
};

/** One token per code point: forces the split of long words and whitespace runs. */
const codePointCounter: TokenCounter = { count: (text) => [...text].length };

const gptCounter = createTokenCounter();

const word = fc.stringMatching(/^[A-Za-z]{1,10}$/);
const separator = fc.constantFrom(' ', ' ', ' ', '. ', '? ', '! ', ', ', '\n', '\n\n', '\t', '  ');
const oddPiece = fc.oneof(
  fc.constantFrom('Mr. ', 'e.g. ', '。', '😀', 'naïve ', '第二句。', '\r\n', '   \n\n   ', '...'),
  fc.stringMatching(/^[a-z]{30,200}$/), // a "word" longer than most targets
  fc.string({ maxLength: 20, unit: 'binary' }), // any code points, including controls
);
const documentText = fc
  .array(
    fc.oneof(
      { arbitrary: fc.tuple(word, separator), weight: 8 },
      { arbitrary: fc.tuple(oddPiece, separator), weight: 1 },
    ),
    // Large sizes so that texts span many chunks at small targets.
    { maxLength: 400, size: 'large' },
  )
  .map((pairs) => pairs.flat().join(''));
const anyText = fc.oneof(
  { arbitrary: documentText, weight: 4 },
  { arbitrary: fc.string({ maxLength: 400 }), weight: 1 },
);

const chunkingOptions: fc.Arbitrary<ChunkingOptions> = fc
  .integer({ min: 16, max: 120 })
  .chain((targetTokens) =>
    fc.record({
      targetTokens: fc.constant(targetTokens),
      overlapTokens: fc.oneof(
        fc.constant(0),
        fc.integer({ min: 0, max: Math.ceil(targetTokens / 2) - 1 }),
      ),
    }),
  );

/**
 * Lists every broken property of a chunking of `text` (empty when all hold). Plain checks
 * rather than one `expect` per chunk keep thousands of generated cases fast.
 */
function violations(
  text: string,
  options: ChunkingOptions,
  tokens: TokenCounter,
  chunks: readonly Chunk[],
): string[] {
  if (!/\S/.test(text)) return chunks.length === 0 ? [] : ['chunks for a blank text'];
  const found: string[] = [];
  const check = (ok: boolean, what: string, i: number): void => {
    if (!ok) found.push(`chunk ${i}: ${what}`);
  };
  check(chunks.length > 0, 'no chunks for a non-blank text', 0);
  check(chunks[0]?.start === 0, 'first chunk does not start at 0', 0);
  check(chunks.at(-1)?.end === text.length, 'last chunk does not end at text.length', -1);
  chunks.forEach((c, i) => {
    check(c.index === i, `index is ${c.index}`, i);
    check(text.slice(c.start, c.end) === c.text, 'text is not text.slice(start, end)', i);
    check(c.end > c.start, 'empty', i);
    check(c.tokenCount === tokens.count(c.text), 'tokenCount differs from count(text)', i);
    check(c.tokenCount <= options.targetTokens, `${c.tokenCount} tokens > target`, i);
    check(c.text.length <= options.targetTokens * MAX_CHARS_PER_TOKEN, 'too many chars', i);
    const previous = chunks[i - 1];
    if (previous) {
      check(c.start > previous.start, 'start does not increase', i);
      check(c.end > previous.end, 'end does not increase (no progress)', i);
      check(c.start <= previous.end, 'gap after the previous chunk', i);
      if (options.overlapTokens === 0) check(c.start === previous.end, 'overlap with 0', i);
    }
  });
  return found;
}

/** Asserts every structural property of a chunking of `text`. */
function expectValidChunks(
  text: string,
  options: ChunkingOptions,
  tokens: TokenCounter,
  chunks: readonly Chunk[],
): void {
  expect(violations(text, options, tokens, chunks)).toEqual([]);
}

/** Overlap holds at most `overlapTokens` tokens for counters that are additive at unit cuts. */
function expectBoundedOverlap(
  text: string,
  options: ChunkingOptions,
  tokens: TokenCounter,
  chunks: readonly Chunk[],
): void {
  const overlaps = chunks.slice(1).map((c, i) => tokens.count(text.slice(c.start, chunks[i]?.end)));
  expect(overlaps.filter((n) => n > options.overlapTokens)).toEqual([]);
}

describe('chunkText properties', () => {
  it.each([
    ['a word counter', wordCounter],
    ['a code point counter', codePointCounter],
  ])('tiles, covers and bounds chunks with %s', (_name, tokens) => {
    fc.assert(
      fc.property(anyText, chunkingOptions, (text, options) => {
        const chunks = chunkText(text, options, tokens);
        expectValidChunks(text, options, tokens, chunks);
        expectBoundedOverlap(text, options, tokens, chunks);
      }),
      { numRuns: 200 },
    );
  });

  it('tiles, covers and bounds chunks with the real cl100k counter', () => {
    fc.assert(
      fc.property(anyText, chunkingOptions, (text, options) => {
        expectValidChunks(text, options, gptCounter, chunkText(text, options, gptCounter));
      }),
      { numRuns: 120 },
    );
  });

  it('is deterministic', () => {
    fc.assert(
      fc.property(anyText, chunkingOptions, (text, options) => {
        expect(chunkText(text, options, gptCounter)).toEqual(chunkText(text, options, gptCounter));
      }),
      { numRuns: 40 },
    );
  });
});

describe('chunkText examples', () => {
  const sentences = Array.from(
    { length: 40 },
    (_, i) => `Sentence number ${i + 1} talks about topic ${i % 7} in plain words.`,
  ).join(' ');

  it('returns no chunks for empty or whitespace-only text', () => {
    expect(chunkText('', { targetTokens: 64, overlapTokens: 8 }, gptCounter)).toEqual([]);
    expect(chunkText(' \n\t\r\n  ', { targetTokens: 64, overlapTokens: 8 }, gptCounter)).toEqual(
      [],
    );
  });

  it('returns one chunk for a text that fits', () => {
    const text = 'Hello world. This is short.\n';
    expect(chunkText(text, { targetTokens: 64, overlapTokens: 8 }, gptCounter)).toEqual([
      { index: 0, text, start: 0, end: text.length, tokenCount: gptCounter.count(text) },
    ]);
  });

  it('cuts at sentence boundaries and repeats the previous tail as overlap', () => {
    const chunks = chunkText(sentences, { targetTokens: 64, overlapTokens: 20 }, gptCounter);
    expect(chunks.length).toBeGreaterThan(5);
    for (const [i, c] of chunks.entries()) {
      expect(c.text).toMatch(/^Sentence number \d+/);
      if (i < chunks.length - 1) expect(c.text).toMatch(/words\. $/);
      const previous = chunks[i - 1];
      if (previous) {
        expect(c.start).toBeLessThan(previous.end);
        const repeated = sentences.slice(c.start, previous.end);
        expect(gptCounter.count(repeated)).toBeLessThanOrEqual(20 + 1);
      }
    }
  });

  it('cuts a hard-wrapped paragraph between its sentences, not at its line ends', () => {
    // The same sentences, wrapped at 50 columns as plain-text e-mail and Markdown often are.
    const wrapped = sentences.replace(/(.{1,50})( |$)/g, (_, line: string, sep: string) =>
      sep ? `${line}\n` : line,
    );
    expect(wrapped.split('\n').length).toBeGreaterThan(40);
    const chunks = chunkText(wrapped, { targetTokens: 64, overlapTokens: 0 }, gptCounter);
    expect(chunks.length).toBeGreaterThan(5);
    for (const c of chunks) {
      expect(c.text).toBe(wrapped.slice(c.start, c.end));
      expect(c.text).toMatch(/^Sentence\snumber\s\d+/);
    }
    for (const c of chunks.slice(0, -1)) expect(c.text).toMatch(/words\.\s$/);
  });

  it('starts a chunk at a section heading once the chunk is half full, without overlap', () => {
    const section = (name: string, n: number) =>
      `## ${name}\n\n` +
      Array.from({ length: n }, (_, i) => `The ${name} section says thing ${i + 1} plainly.`).join(
        ' ',
      ) +
      '\n\n';
    // About 11 tokens a sentence: at "Setup" the chunk is under half of 64 tokens, at "Install"
    // and "Usage" over it.
    const text = `# Manual\n\n${section('Intro', 1)}${section('Setup', 2)}${section('Install', 4)}${section('Usage', 4)}`;
    const chunks = chunkText(text, { targetTokens: 64, overlapTokens: 20 }, gptCounter);
    expect(chunks.map((c) => c.text.split('\n')[0])).toEqual([
      '# Manual',
      '## Install',
      '## Usage',
    ]);
    expect(chunks[0]!.text).toContain('## Setup');
    // A comment that opens a block of code is no heading: the chunk goes on through it.
    const code = `${section('Build', 4)}# compile the assets\nnpm run build\n\n${section('Usage', 1)}`;
    const built = chunkText(code, { targetTokens: 64, overlapTokens: 20 }, gptCounter);
    expect(built.map((c) => c.text.split('\n')[0])).toEqual(['## Build', '## Usage']);
    // Tiled with no overlap at a section's start.
    for (let i = 1; i < chunks.length; i += 1) expect(chunks[i]?.start).toBe(chunks[i - 1]?.end);
    // A section longer than a chunk is still cut between its sentences, with overlap.
    const long = chunkText(
      section('Long', 20),
      { targetTokens: 64, overlapTokens: 20 },
      gptCounter,
    );
    expect(long.length).toBeGreaterThan(3);
    expect(long[1]!.start).toBeLessThan(long[0]!.end);
  });

  it('makes adjacent chunks when the overlap is 0, filling them close to the target', () => {
    const chunks = chunkText(sentences, { targetTokens: 64, overlapTokens: 0 }, gptCounter);
    for (let i = 1; i < chunks.length; i += 1) expect(chunks[i]?.start).toBe(chunks[i - 1]?.end);
    // Each sentence is about 14 tokens, so a full chunk holds four of them.
    for (const c of chunks.slice(0, -1)) expect(c.tokenCount).toBeGreaterThanOrEqual(48);
  });

  it('splits a sentence longer than the target at word boundaries', () => {
    const text = Array.from({ length: 300 }, (_, i) => `word${i}`).join(' ');
    const chunks = chunkText(text, { targetTokens: 32, overlapTokens: 0 }, gptCounter);
    expect(chunks.length).toBeGreaterThan(5);
    for (const c of chunks) {
      expect(c.tokenCount).toBeLessThanOrEqual(32);
      expect(c.text).toMatch(/^\s?word\d+/); // starts at a word (with the space before it)
      expect(c.text).toMatch(/word\d+$/); // ends after a whole word
    }
  });

  it('splits a word longer than the target by characters, keeping surrogate pairs whole', () => {
    const text = `x${'😀'.repeat(100)}${'x'.repeat(5000)}`; // pairs at odd offsets
    const chunks = chunkText(text, { targetTokens: 16, overlapTokens: 4 }, gptCounter);
    expectValidChunks(text, { targetTokens: 16, overlapTokens: 4 }, gptCounter, chunks);
    for (const c of chunks) {
      expect(c.text).not.toMatch(/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/);
    }
  });

  it('caps a chunk at targetTokens * MAX_CHARS_PER_TOKEN characters', () => {
    const text = '='.repeat(20_000); // about 64 characters a token in cl100k
    const options = { targetTokens: 512, overlapTokens: 0 };
    const chunks = chunkText(text, options, gptCounter);
    expectValidChunks(text, options, gptCounter, chunks);
    expect(chunks.length).toBe(Math.ceil(20_000 / (512 * MAX_CHARS_PER_TOKEN)));
  });

  it('still makes progress when a counter gives one character more than the target', () => {
    const heavy: TokenCounter = { count: (text) => 100 * [...text].length };
    const chunks = chunkText('ab c', { targetTokens: 16, overlapTokens: 4 }, heavy);
    // The documented exception to the bound: one character a chunk.
    expect(chunks.map((c) => c.text)).toEqual(['a', 'b', ' ', 'c']);
  });

  it('keeps blank lines with the sentence before them rather than in chunks of their own', () => {
    const first = 'The first paragraph has exactly ten words in it, see.\n\n\n\n';
    const second = 'The second paragraph also has ten words in it, see.\n\n';
    const chunks = chunkText(first + second, { targetTokens: 16, overlapTokens: 0 }, wordCounter);
    expect(chunks.map((c) => c.text)).toEqual([first, second]);
  });

  it('counts special-token strings as plain text', () => {
    expect(gptCounter.count('hello world')).toBe(2);
    expect(gptCounter.count('before <|endoftext|> after')).toBeGreaterThan(3);
  });

  it.each([
    [{ targetTokens: 15, overlapTokens: 0 }, /targetTokens/],
    [{ targetTokens: 64.5, overlapTokens: 0 }, /targetTokens/],
    [{ targetTokens: Number.NaN, overlapTokens: 0 }, /targetTokens/],
    [{ targetTokens: 64, overlapTokens: 32 }, /overlapTokens/],
    [{ targetTokens: 64, overlapTokens: -1 }, /overlapTokens/],
  ])('rejects invalid options %j with a RangeError naming the option', (options, name) => {
    expect(() => chunkText('Some text.', options, gptCounter)).toThrow(RangeError);
    expect(() => chunkText('Some text.', options, gptCounter)).toThrow(name);
  });

  it('chunks a 3,000-word text with the real counter in a few milliseconds', () => {
    const vocabulary =
      'the index stores every chunk with its vector and cites the source page when it answers'.split(
        ' ',
      );
    const words = Array.from(
      { length: 3000 },
      (_, i) => vocabulary[(i * 7) % vocabulary.length] as string,
    );
    const text = words.map((w, i) => (i % 17 === 16 ? `${w}.` : w)).join(' ');
    chunkText(text, { targetTokens: 512, overlapTokens: 64 }, gptCounter); // warm the merge cache
    const started = performance.now();
    const chunks = chunkText(text, { targetTokens: 512, overlapTokens: 64 }, gptCounter);
    const elapsed = performance.now() - started;
    expectValidChunks(text, { targetTokens: 512, overlapTokens: 64 }, gptCounter, chunks);
    // A few ms in practice; the bound is loose so that a busy CI machine does not flake.
    expect(elapsed).toBeLessThan(100);
  });

  it('stays fast on a long run without spaces, which is costly for BPE', () => {
    const text = 'x'.repeat(100_000);
    const started = performance.now();
    const chunks = chunkText(text, { targetTokens: 512, overlapTokens: 64 }, gptCounter);
    expect(performance.now() - started).toBeLessThan(2000);
    expectValidChunks(text, { targetTokens: 512, overlapTokens: 64 }, gptCounter, chunks);
  });
});

describe('sentences segmented a window at a time', () => {
  const whole = (text: string) =>
    [...new Intl.Segmenter('en', { granularity: 'sentence' }).segment(text)].map(
      ({ segment, index }) => ({ segment, index }),
    );

  it("are the whole text's sentences when none is longer than a window", () => {
    fc.assert(
      fc.property(documentText, (text) => {
        const expected = whole(text);
        fc.pre(expected.every((s) => s.segment.length < 250));
        expect([...sentenceSegments(text, 400, 100)]).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });

  it('tile the text, in order, whatever it holds (a sentence longer than a window is cut)', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const segments = [...sentenceSegments(text, 60, 10)];
        expect(segments.map((s) => s.segment).join('')).toBe(text);
        let at = 0;
        for (const s of segments) {
          expect(s.index).toBe(at);
          expect(s.segment.length).toBeGreaterThan(0);
          at += s.segment.length;
        }
      }),
      { numRuns: 300 },
    );
  });

  it('cut a sentence longer than a window before a word, and between characters only without one', () => {
    const words = 'abcdefg '.repeat(40);
    const pieces = [...sentenceSegments(words, 60, 10)].map((s) => s.segment);
    expect(pieces.join('')).toBe(words);
    for (const piece of pieces) expect(piece).toMatch(/^(abcdefg )+$/);
    const letters = 'x'.repeat(200);
    expect([...sentenceSegments(letters, 60, 10)].map((s) => s.segment.length)).toEqual([
      50, 50, 50, 50,
    ]);
  });

  it('split a 1.2 MB text of 20,000 sentences into those 20,000 sentences', () => {
    const sentence = (i: number) => `Sentence number ${i} is about the river and the town. `;
    const text = Array.from({ length: 20_000 }, (_, i) => sentence(i)).join('');
    const segments = [...sentenceSegments(text)];
    expect(segments).toHaveLength(20_000);
    expect(segments[12_345]).toEqual({
      segment: sentence(12_345),
      index: text.indexOf(sentence(12_345)),
    });
  });
});
