/**
 * `npm run bench -- model-switch`: vector search latency on PostgreSQL while no switch runs, and
 * while a model switch re-embeds in the background of the serving process at its default
 * throttle (batches of 64 chunks, 200 ms apart), with the job's rate. The models are the tests'
 * hash embedders (512 then 256 dimensions), which cost almost nothing: the figures are the
 * database's share, the part the throttle protects (a real model adds its own time per batch,
 * which only spaces the batches further). Nothing here asserts on time.
 */
import { randomBytes } from 'node:crypto';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { Client } from 'pg';
import { APP_GROUP_ROLE } from '../lambdas/adapters/postgres/app-role';
import { createPgDatabase } from '../lambdas/adapters/postgres/pg-database';
import { startLocalStack, type LocalStack } from '../local/stack';
import { createHashEmbedder } from '../test/support/hash-embedder';
import { BENCH_DATABASE_URL } from './search-config';

export interface ModelSwitchBenchOptions {
  /** Documents of about 12 chunks each. @default 1000 */
  readonly documents?: number;
  /** Searches per measurement. @default 300 */
  readonly queries?: number;
  readonly databaseUrl?: string;
  readonly log?: (line: string) => void;
}

const WORDS = (
  'refund shipping invoice password laptop holiday contract payroll audit backup network ' +
  'printer badge parking travel expense budget report meeting policy security training ' +
  'customer supplier warehouse delivery return warranty license server account'
).split(' ');

function documentText(i: number): string {
  const sentences = Array.from({ length: 36 }, (_, k) => {
    const w = (n: number) => WORDS[(i * 7 + k * 3 + n) % WORDS.length];
    return `The ${w(0)} rule ${k} says how the ${w(1)} and the ${w(2)} are handled by the ${w(3)} team.`;
  });
  return `# Document ${i}\n\n${sentences.join(' ')}`;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

async function searchLatencies(
  stack: LocalStack,
  queries: number,
  until: () => boolean = () => false,
): Promise<number[]> {
  const times: number[] = [];
  for (let q = 0; q < queries && !until(); q++) {
    const t0 = performance.now();
    await stack.search.search(
      { tenantId: 'bench', userId: 'u' },
      {
        queryText: `${WORDS[q % WORDS.length]} ${WORDS[(q * 5) % WORDS.length]} rules`,
        topK: 8,
        mode: 'vector',
        filters: {},
      },
    );
    times.push(performance.now() - t0);
  }
  return times.sort((a, b) => a - b);
}

export async function benchModelSwitch(options: ModelSwitchBenchOptions = {}): Promise<void> {
  const documents = options.documents ?? 1000;
  const queries = options.queries ?? 300;
  const log = options.log ?? ((line: string) => console.log(line));
  const url = options.databaseUrl ?? BENCH_DATABASE_URL;
  const schema = `bench_switch_${randomBytes(4).toString('hex')}`;
  const admin = new Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  const db = createPgDatabase(
    { connectionString: url, options: `-c search_path=${schema},public`, max: 4 },
    { requestRole: APP_GROUP_ROLE },
  );
  const settings = {
    db,
    logLevel: 'SILENT' as const,
    ingestion: { chunking: { targetTokens: 64, overlapTokens: 0 } },
    reconcile: false,
  };
  try {
    const modelA = createHashEmbedder(512, 'bench/a');
    const first = await startLocalStack({ ...settings, embedder: modelA });
    for (let i = 0; i < documents; i++)
      await first.s3.client.send(
        new PutObjectCommand({
          Bucket: first.s3.bucket,
          Key: `tenants/bench/doc-${i}.md`,
          Body: documentText(i),
        }),
      );
    await first.queue.idle();
    await db.exec('ANALYZE');
    const { rows } = await db.query<{ n: string }>('SELECT count(*) AS n FROM chunks');
    const chunks = Number(rows[0]?.n);
    const idle = await searchLatencies(first, queries);
    await first.stop();

    const t0 = performance.now();
    const second = await startLocalStack({
      ...settings,
      embedder: createHashEmbedder(256, 'bench/b'),
      recordedEmbedder: async () => modelA,
    });
    let done = false;
    void second.switchJob.then(() => (done = true));
    const during = await searchLatencies(second, queries, () => done);
    await second.switchJob;
    const switchSeconds = (performance.now() - t0) / 1000;
    const after = await searchLatencies(second, queries);
    await second.stop();

    const line = (label: string, t: readonly number[]) =>
      `  ${label.padEnd(34)} ${String(t.length).padStart(4)} searches  p50 ${percentile(t, 50).toFixed(1).padStart(6)} ms  p95 ${percentile(t, 95).toFixed(1).padStart(6)} ms`;
    log(
      `model switch on PostgreSQL: ${documents} documents, ${chunks} chunks, 512 -> 256 dimensions`,
    );
    log(line('vector search, no switch (512)', idle));
    log(line('vector search during the switch', during));
    log(line('vector search after the swap (256)', after));
    log(
      `  switch: ${switchSeconds.toFixed(1)} s from start to swap, ${(chunks / switchSeconds).toFixed(0)} chunks/s at the default throttle`,
    );
  } finally {
    await db.close();
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end();
  }
}
