/**
 * The `groundwork` command line run in-process, as a test reads it: its exit code and what it
 * printed to stdout and stderr.
 */
import { main } from '../../local/cli';

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `groundwork <argv>`, capturing console.log and console.error while it runs. */
export async function runCli(argv: string[]): Promise<CliRun> {
  const out: string[] = [];
  const err: string[] = [];
  const log = jest.spyOn(console, 'log').mockImplementation((...a) => void out.push(a.join(' ')));
  const error = jest
    .spyOn(console, 'error')
    .mockImplementation((...a) => void err.push(a.join(' ')));
  try {
    return { code: await main(argv), stdout: out.join('\n'), stderr: err.join('\n') };
  } finally {
    log.mockRestore();
    error.mockRestore();
  }
}
