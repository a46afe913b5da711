/**
 * The `groundwork` command line: one binary, several subcommands, all running the same
 * handlers and core as the Lambdas, on the embedded default.
 */
import { parseArgs } from 'node:util';
import { loadLocalEnv } from './config';
import { askCommand } from './commands/ask';
import { calibrateCommand, evalAnswersCommand } from './commands/answer-eval';
import { evalCommand } from './commands/eval';
import { harnessCommand } from './commands/harness';
import { formatReport, ingestFolder } from './commands/ingest';
import { reembedCommand } from './commands/reembed';
import { searchCommand } from './commands/search';
import { startCommand } from './commands/start';
import { tokenCommand } from './commands/token';
import { trainingCommand } from './commands/training';
import { openApiSession } from './client';

const USAGE = `Usage: groundwork <command> [options]

Commands:
  start [--no-samples]                            run the embedded default (API, S3 emulator, ingestion)
  ingest <folder> --tenant <id> [--prefix <p>] [--prune]
                                                  upload a folder, wait for indexing, report (--prune:
                                                  remove documents no longer in the folder)
  search "<question>" [--tenant <id>] [--user <id>] [--mode m] [--top-k N] [--json]
                                                  ranked results with scores and snippets
  ask "<question>" [--tenant <id>] [--user <id>] [--thread <id>] [--profile p] [--json]
                                                  a cited answer with its confidence
  harness "<question>" [--tenant <id>] [--profile p] [--top-k N] [--source-type t] [--json]
                                                  what an answer would be made of (chunks, context,
                                                  evidence, gate, prompt), without calling the LLM
  token --user <id> --tenant <id> [--plan p] [--admin]
                                                  print a development token (only the token)
  eval <dataset-dir> [--mode m]... [--sample N] [--top-k N] [--candidates N] [--dense-weight w]...
       [--chunk-tokens N] [--overlap-tokens N] [--embed-window N] [--json]
                                                  retrieval quality on a BEIR dataset
  calibrate <squad-dir> [--sample N] [--natural <dir>] [--json]
                                                  fit the confidence gate for the embedding model
  eval-answers <squad-dir> [--sample N] [--seed N] [--sentences N] [--json]
                                                  extractive gold-span rate and /api/rag/answer latency
  reembed                                         switch the index to the configured embedding model in the foreground
  training consent --tenant <id> [--user <id>] on|off
  training export [--tenant <id>] [--out f.jsonl]  opted-in answers with feedback, as JSONL
  help                                            this text (<command> --help: one command's usage)

Environment: GROUNDWORK_DATA_DIR (default .groundwork), PORT (default 3000), GROUNDWORK_LOG_LEVEL.`;

async function ingestCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      tenant: { type: 'string' },
      prefix: { type: 'string' },
      user: { type: 'string' },
      prune: { type: 'boolean' },
    },
  });
  const folder = positionals[0];
  if (!folder || !values.tenant) {
    console.error('Usage: groundwork ingest <folder> --tenant <id> [--prefix <p>] [--prune]');
    return 2;
  }
  const env = loadLocalEnv();
  const session = await openApiSession(env, 'ingest');
  try {
    const t0 = Date.now();
    const report = await ingestFolder(session, env.GROUNDWORK_BUCKET, folder, values.tenant, {
      ...(values.prefix ? { prefix: values.prefix } : {}),
      ...(values.user ? { userId: values.user } : {}),
      prune: values.prune === true,
      progress: process.stderr.isTTY === true,
    });
    console.log(formatReport(report));
    console.log(`done in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    return report.failed.length > 0 ? 1 : 0;
  } finally {
    await session.close();
  }
}

/**
 * The usage lines of one command (its entries in USAGE, with their continuation lines), or null
 * for a name USAGE does not list.
 */
export function usageOf(command: string): string | null {
  const lines = USAGE.split('\n');
  const out: string[] = [];
  for (const [i, line] of lines.entries()) {
    if (!line.startsWith(`  ${command} `) && line !== `  ${command}`) continue;
    out.push(line);
    for (const next of lines.slice(i + 1)) {
      if (!/^ {3,}\S/.test(next)) break;
      out.push(next);
    }
  }
  return out.length > 0 ? `Usage: groundwork ${command} [options]\n\n${out.join('\n')}` : null;
}

/** Whether the arguments ask for help (`--help` or `-h` before any `--`). */
function asksHelp(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).some((a) => a === '--help' || a === '-h');
}

/** Runs one subcommand; returns the process exit code. */
export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const help = command !== undefined && asksHelp(rest) ? usageOf(command) : null;
  if (help !== null) {
    console.log(help);
    return 0;
  }
  switch (command) {
    case 'start':
      return startCommand(rest, loadLocalEnv());
    case 'ingest':
      return ingestCommand(rest);
    case 'search':
      return searchCommand(rest, loadLocalEnv());
    case 'token':
      return tokenCommand(rest, { dataDir: loadLocalEnv().dataDir });
    case 'ask':
      return askCommand(rest, loadLocalEnv());
    case 'harness':
      return harnessCommand(rest, loadLocalEnv());
    case 'reembed':
      return reembedCommand(loadLocalEnv());
    case 'training':
      return trainingCommand(rest, loadLocalEnv());
    case 'calibrate':
      return calibrateCommand(rest, loadLocalEnv());
    case 'eval-answers':
      return evalAnswersCommand(rest, loadLocalEnv());
    case 'eval':
      return evalCommand(rest, loadLocalEnv());
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
