import { runCli } from '../test/support/cli';
import { usageOf } from './cli';

describe('groundwork <command> --help', () => {
  it.each([
    'start',
    'ingest',
    'search',
    'ask',
    'harness',
    'token',
    'eval',
    'calibrate',
    'eval-answers',
    'reembed',
    'training',
  ])('prints the usage of %s and exits 0, starting nothing', async (command) => {
    for (const flag of ['--help', '-h']) {
      const run = await runCli([command, 'a question', flag]);
      expect(run).toEqual({ code: 0, stdout: usageOf(command), stderr: '' });
      expect(run.stdout).toContain(`\n  ${command}`);
    }
  });

  it('lists only the command asked about, with its continuation lines', () => {
    const eval_ = usageOf('eval')!;
    expect(eval_).toContain('[--chunk-tokens N]');
    expect(eval_).not.toContain('eval-answers');
    expect(
      usageOf('training')!
        .split('\n')
        .filter((l) => l.startsWith('  training')),
    ).toHaveLength(2);
    expect(usageOf('nonsense')).toBeNull();
  });

  it('reads a --help after -- as an argument, not a request for help', async () => {
    const run = await runCli(['nonsense', '--', '--help']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('Unknown command "nonsense"');
  });
});
