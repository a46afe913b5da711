/** `npm run bench -- chunker` on a small text, so that the benchmark cannot rot unnoticed. */
import { benchChunker } from '../../bench/chunker';

it('chunks the generated text and segments it the same way a window at a time and whole', async () => {
  const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
  try {
    const report = await benchChunker({ sentences: 300 });
    expect(report.sentences).toBe(300);
    expect(report.chunks).toBeGreaterThan(0);
    expect(log).toHaveBeenCalledWith(expect.stringMatching(/300 sentences: \d+ chunks in/));
  } finally {
    log.mockRestore();
  }
});
