import { chunkEmbeddingInput } from './chunk-embedding';
import { isHeadingAt, withoutHeadingMarks } from '../text/lines';

describe('the text a chunk is embedded as', () => {
  it("reads a heading's words without its hashes, and leaves other hashes alone", () => {
    const text = '# Troubleshooting\n\n## Uploads to S3 are slow\n\nUse C# or #tags; #1 is ok.';
    const expected = 'Troubleshooting\n\nUploads to S3 are slow\n\nUse C# or #tags; #1 is ok.';
    expect(withoutHeadingMarks(text)).toBe(expected);
    expect(chunkEmbeddingInput({ embedWithTitle: false }, 'Tarn', text)).toBe(expected);
    expect(chunkEmbeddingInput({ embedWithTitle: true }, 'Tarn', text)).toBe(`Tarn\n${expected}`);
  });

  it('knows a heading as the parsers write one from a line that only starts with a hash', () => {
    const at = (text: string, line: string) => {
      const start = text.indexOf(line);
      return isHeadingAt(text, start, start + line.length);
    };
    const page = '## Uploads to S3 are slow\n\nRaise it.\n\n   ###### Six\n\nText.\n\n# Last';
    expect(at(page, '## Uploads to S3 are slow')).toBe(true);
    expect(at(page, '###### Six')).toBe(true);
    expect(at(page, '# Last')).toBe(true);
    // A comment in a block of code has code under it (or above it): no paragraph of its own.
    const code = 'Install:\n\n# install the deps\nnpm ci\n# then build\n\nDone.';
    expect(at(code, '# install the deps')).toBe(false);
    expect(at(code, '# then build')).toBe(false);
    for (const line of ['####### Seven', '#hashtag', '#', 'Use # for comments'])
      expect(at(`Intro.\n\n${line}\n\nText.`, line)).toBe(false);
  });
});
