/**
 * `npm run bench -- cold-start` end to end with one run: every function is bundled as deployed
 * (both SDK sources) and compiled unbundled, and each build is loaded in a fresh process with a
 * dummy environment. So every Lambda's module-scope initialisation runs from its real bundle,
 * and the benchmark throws if any of them touches the network at init. Nothing here asserts on
 * time.
 */
import { benchColdStart } from '../../bench/cold-start';
import { LAMBDA_ENTRIES } from '../../lib/bundling';

jest.setTimeout(300_000);

describe('cold-start benchmark (one run)', () => {
  const printed: string[] = [];

  beforeAll(async () => {
    const capture = (chunk: unknown) => {
      printed.push(String(chunk));
      return true;
    };
    const write = jest.spyOn(process.stdout, 'write').mockImplementation(capture);
    const log = jest.spyOn(console, 'log').mockImplementation((...args: unknown[]) => {
      capture(`${args.join(' ')}\n`);
    });
    try {
      await benchColdStart({ runs: 1, sourceMaps: false });
    } finally {
      write.mockRestore();
      log.mockRestore();
    }
  });

  it('bundles, loads and initialises every function in all three builds', () => {
    const text = printed.join('');
    for (const name of Object.keys(LAMBDA_ENTRIES)) {
      // name | bundled size, target, init, ratio, target | runtime: the same | unbundled init
      const row = text.split('\n').find((line) => line.startsWith(`${name} `));
      expect(row).toMatch(
        /\|\s+\d+ KB\s+(yes|NO)\s+\d+ ms\s+[\d.]+\s+(yes|NO) \|\s+\d+ KB\s+(yes|NO)\s+\d+ ms\s+[\d.]+\s+(yes|NO) \|\s+\d+ ms$/,
      );
    }
  });
});
