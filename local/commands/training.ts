/**
 * `groundwork training consent --tenant <id> [--user <id>] on|off` and
 * `groundwork training export [--tenant <id>] [--out file.jsonl]`: consent to keep answers as
 * training data, and the export of eligible prompt / answer / sources / feedback as JSONL.
 */
import { createWriteStream } from 'node:fs';
import { parseArgs } from 'node:util';
import {
  setTrainingConsent,
  trainingExamples,
} from '../../lambdas/adapters/postgres/training-queries';
import { TENANT_ID_PATTERN } from '../../lambdas/core/ingestion/object-attributes';
import { stackOptionsFromEnv, type LocalEnv } from '../config';
import { acquireLock } from '../data-dir-lock';
import { startLocalStack } from '../stack';

const USAGE = `Usage:
  groundwork training consent --tenant <id> [--user <id>] on|off
  groundwork training export [--tenant <id>] [--out file.jsonl]`;

export async function trainingCommand(
  args: string[],
  env: LocalEnv & { dataDir: string },
): Promise<number> {
  const [sub, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { tenant: { type: 'string' }, user: { type: 'string' }, out: { type: 'string' } },
  });
  if (
    (sub !== 'consent' && sub !== 'export') ||
    (values.tenant !== undefined && !TENANT_ID_PATTERN.test(values.tenant))
  ) {
    console.error(USAGE);
    return 2;
  }
  if (sub === 'consent' && (!values.tenant || !['on', 'off'].includes(positionals[0] ?? ''))) {
    console.error(USAGE);
    return 2;
  }
  const lock = await acquireLock(env.dataDir, { command: `training ${sub}` });
  const stack = await startLocalStack(await stackOptionsFromEnv(env));
  try {
    if (sub === 'consent') {
      await setTrainingConsent(
        stack.db,
        values.tenant!,
        values.user ?? '*',
        positionals[0] === 'on',
      );
      console.log(
        `training consent ${positionals[0]} for tenant ${values.tenant}${values.user ? `, user ${values.user}` : ' (all users)'}`,
      );
      return 0;
    }
    const rows = await trainingExamples(stack.db, values.tenant ?? null);
    const out = values.out ? createWriteStream(values.out) : process.stdout;
    for (const r of rows)
      out.write(`${JSON.stringify({ ...r, created_at: r.created_at.toISOString() })}\n`);
    if (values.out) {
      await new Promise<void>((resolve) =>
        (out as ReturnType<typeof createWriteStream>).end(resolve),
      );
      console.error(`${rows.length} examples written to ${values.out}`);
    }
    return 0;
  } finally {
    await stack.stop();
    await lock.release();
  }
}
