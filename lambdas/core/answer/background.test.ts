import { backgroundStats, createBackground } from './background';

describe('query background', () => {
  it('is the mean and sample standard deviation of the cosines to the background', () => {
    const stats = backgroundStats(
      [1, 0],
      [
        [1, 0],
        [0, 1],
        [0.5, 0.5],
      ],
    );
    expect(stats.mean).toBeCloseTo(0.5, 10);
    expect(stats.sd).toBeCloseTo(0.5, 10);
  });

  it('embeds the background once, and again after a failure', async () => {
    let calls = 0;
    let fail = true;
    const background = createBackground(
      {
        embed: async (texts) => {
          calls += 1;
          if (fail) throw new Error('model down');
          return texts.map((_, i) => (i % 2 === 0 ? [1, 0] : [0, 1]));
        },
      },
      ['a', 'b'],
    );
    await expect(background.of([1, 0])).rejects.toThrow('model down');
    fail = false;
    expect(await background.of([1, 0])).toEqual({ mean: 0.5, sd: expect.closeTo(0.7071, 3) });
    await background.of([0, 1]);
    expect(calls).toBe(2);
  });
});
