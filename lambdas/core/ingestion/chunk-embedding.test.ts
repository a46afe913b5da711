import { chunkEmbeddingInput } from './chunk-embedding';
import { isHeadingLine, withoutHeadingMarks } from '../text/lines';

describe('the text a chunk is embedded as', () => {
  it("reads a heading's words without its hashes, and leaves other hashes alone", () => {
    const text = '# Troubleshooting\n\n## Uploads to S3 are slow\n\nUse C# or #tags; #1 is ok.';
    const expected = 'Troubleshooting\n\nUploads to S3 are slow\n\nUse C# or #tags; #1 is ok.';
    expect(withoutHeadingMarks(text)).toBe(expected);
    expect(chunkEmbeddingInput({ embedWithTitle: false }, 'Tarn', text)).toBe(expected);
    expect(chunkEmbeddingInput({ embedWithTitle: true }, 'Tarn', text)).toBe(`Tarn\n${expected}`);
  });

  it('knows a heading line from a line that only starts with a hash', () => {
    expect(isHeadingLine('## Uploads to S3 are slow')).toBe(true);
    expect(isHeadingLine('   ###### Six')).toBe(true);
    expect(isHeadingLine('####### Seven')).toBe(false);
    expect(isHeadingLine('#hashtag')).toBe(false);
    expect(isHeadingLine('#')).toBe(false);
    expect(isHeadingLine('Use # for comments')).toBe(false);
  });
});
