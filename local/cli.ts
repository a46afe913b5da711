/**
 * The `groundwork` command line: one binary, several subcommands, all running the same
 * handlers and core as the Lambdas, on the embedded default.
 */
import { parseArgs } from 'node:util';
import { loadLocalEnv } from './config';
import { acquireLock } from './data-dir-lock';
import { evalCommand } from './commands/eval';
import { formatReport, ingestFolderLocally } from './commands/ingest';
import { startLocalStack } from './stack';

const USAGE = `Usage: groundwork <command> [options]

Commands:
  ingest <folder> --tenant <id> [--prefix <p>]   upload a folder, wait for indexing, report
  eval <dataset-dir> [--mode m]... [--sample N] [--json]
                                                  retrieval quality on a BEIR dataset
  help                                            this text

Environment: GROUNDWORK_DATA_DIR (default .groundwork), PORT (default 3000), GROUNDWORK_LOG_LEVEL.`;

async function ingestCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { tenant: { type: 'string' }, prefix: { type: 'string' } },
  });
  const folder = positionals[0];
  if (!folder || !values.tenant) {
    console.error('Usage: groundwork ingest <folder> --tenant <id> [--prefix <p>]');
    return 2;
  }
  const env = loadLocalEnv();
  const lock = await acquireLock(env.dataDir, { command: 'ingest' });
  const stack = await startLocalStack({
    dataDir: env.dataDir,
    bucket: env.GROUNDWORK_BUCKET,
    logLevel: env.GROUNDWORK_LOG_LEVEL,
    ...(env.GROUNDWORK_EMBED_THREADS === undefined ? {} : { embedThreads: env.GROUNDWORK_EMBED_THREADS }),
  });
  try {
    const t0 = Date.now();
    const report = await ingestFolderLocally(stack, folder, values.tenant, {
      ...(values.prefix ? { prefix: values.prefix } : {}),
      progress: process.stderr.isTTY === true,
    });
    console.log(formatReport(report));
    console.log(`done in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    return report.failed.length > 0 ? 1 : 0;
  } finally {
    await stack.stop();
    await lock.release();
  }
}

/** Runs one subcommand; returns the process exit code. */
export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'ingest':
      return ingestCommand(rest);
    case 'eval':
      return evalCommand(rest, loadLocalEnv().dataDir);
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      console.log(USAGE);
      return 0;
    default:
      console.error(`Unknown command "${command}".\n\n${USAGE}`);
      return 2;
  }
}
