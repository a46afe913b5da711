/**
 * Load on the embedded default: 50 concurrent clients for 60 s over POST /api/rag/search, POST /api/rag/answer
 * and the documents routes (POST /api/documents with the presigned PUT of the file, and GET
 * /api/documents), against the local API and S3 emulator started in this process (PGlite, the local
 * embedding model, the offline extractive answerer, the limiter on dynalite). Prints throughput,
 * p50/p95 per route, responses by status, and whether every uploaded document was indexed.
 *
 * The tenant's plan lifts the quotas and the per-user rate limit (the limiter still runs every
 * check): the figure is the stack's, not the plan's 60 requests per minute.
 * Run: `npm run bench -- load` (BENCH_LOAD_SECONDS, BENCH_LOAD_CLIENTS to change the defaults).
 * All traffic goes to 127.0.0.1. Nothing here asserts on time.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { parseLimitsConfig } from '../lambdas/core/limits/config';
import { startLocalApi } from '../local/api';
import { startLocalStack } from '../local/stack';
import { createPrng } from '../test/support/prng';

const HANDBOOK = path.join(__dirname, '..', 'samples', 'handbook');
const TENANT = 'load';

const QUESTIONS = [
  'How long do refunds take?',
  'Can I return a sale item?',
  'How much does express shipping cost?',
  'Do you ship internationally?',
  'How do I contact customer support?',
  'What are the support hours?',
  'What does the warranty cover?',
  'How long is the warranty?',
  'Is the packaging recyclable?',
  'What happens to returned products?',
];

/** The share of each client's requests per route (the rest of the documents traffic: list). */
const MIX = { search: 0.55, answer: 0.25, upload: 0.1, list: 0.1 } as const;
type Route = keyof typeof MIX;

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export async function benchLoad(
  options: { seconds?: number; clients?: number } = {},
): Promise<void> {
  const seconds = options.seconds ?? 60;
  const clients = options.clients ?? 50;
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'groundwork-load-'));
  const stack = await startLocalStack({
    dataDir,
    logLevel: 'ERROR',
    limits: parseLimitsConfig({
      plans: {
        load: { answersPerMonth: null, searchesPerMonth: null, requestsPerMinute: 1_000_000 },
      },
      defaultPlan: 'load',
      costCaps: { globalUsdPerDay: null, tenantUsdPerDay: null },
    }),
  });
  const api = await startLocalApi(stack);
  try {
    const files = (await readdir(HANDBOOK)).filter((f) => f.endsWith('.md'));
    for (const f of files) {
      await stack.s3.client.send(
        new PutObjectCommand({
          Bucket: stack.s3.bucket,
          Key: `tenants/${TENANT}/handbook/${f}`,
          Body: await readFile(path.join(HANDBOOK, f)),
          ContentType: 'text/markdown',
        }),
      );
    }
    await stack.queue.idle();
    console.log(
      `seeded ${files.length} handbook files; ${clients} clients for ${seconds} s on ${api.server.url}`,
    );

    const latencies: Record<Route, number[]> = { search: [], answer: [], upload: [], list: [] };
    const statuses: Record<Route, Map<string, number>> = {
      search: new Map(),
      answer: new Map(),
      upload: new Map(),
      list: new Map(),
    };
    const uploaded: string[] = [];
    const count = (route: Route, status: string) =>
      statuses[route].set(status, (statuses[route].get(status) ?? 0) + 1);

    const deadline = performance.now() + seconds * 1000;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: clients }, async (_, c) => {
        const prng = createPrng(`load-client-${c}`);
        const random = () => prng.next();
        const token = api.issuer.issueToken({ sub: `client-${c}`, tenantId: TENANT });
        const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
        let n = 0;
        while (performance.now() < deadline) {
          const r = random();
          const route: Route =
            r < MIX.search
              ? 'search'
              : r < MIX.search + MIX.answer
                ? 'answer'
                : r < MIX.search + MIX.answer + MIX.upload
                  ? 'upload'
                  : 'list';
          const question = QUESTIONS[Math.floor(random() * QUESTIONS.length)]!;
          const start = performance.now();
          let status: string;
          try {
            if (route === 'search' || route === 'answer') {
              const res = await fetch(`${api.server.url}/${route}`, {
                method: 'POST',
                headers,
                body: JSON.stringify(
                  route === 'search'
                    ? { query_text: question, top_k: 5 }
                    : { query_text: question },
                ),
              });
              await res.arrayBuffer();
              status = String(res.status);
            } else if (route === 'list') {
              const res = await fetch(`${api.server.url}/api/documents?limit=20`, { headers });
              await res.arrayBuffer();
              status = String(res.status);
            } else {
              // Create the document, then PUT the file to its presigned URL (one operation).
              const body = Buffer.from(
                `# Note ${c}-${n}\n\nClient ${c} wrote note ${n} about ${question.toLowerCase()}\n`,
              );
              const res = await fetch(`${api.server.url}/api/documents`, {
                method: 'POST',
                headers,
                body: JSON.stringify({
                  filename: `note-${c}-${n}.md`,
                  content_type: 'text/markdown',
                  size_bytes: body.length,
                }),
              });
              status = String(res.status);
              if (res.status === 201 || res.status === 200) {
                const created = (await res.json()) as {
                  document: { id: string };
                  upload: { url: string; headers: Record<string, string> };
                };
                const put = await fetch(created.upload.url, {
                  method: 'PUT',
                  headers: created.upload.headers,
                  body,
                });
                await put.arrayBuffer();
                if (put.status === 200) uploaded.push(created.document.id);
                else status = `PUT ${put.status}`;
              } else {
                await res.arrayBuffer();
              }
            }
          } catch (err) {
            status = `network: ${err instanceof Error ? err.message : String(err)}`;
          }
          latencies[route].push(performance.now() - start);
          count(route, status);
          n += 1;
        }
      }),
    );
    const elapsed = (performance.now() - t0) / 1000;

    // Nothing lost: every uploaded document ends indexed (or failed with a reason).
    const drainStart = performance.now();
    await stack.queue.idle();
    const drainSeconds = (performance.now() - drainStart) / 1000;
    const { rows } = await stack.db.query<{ status: string; n: number }>(
      `SELECT status, count(*)::int AS n FROM documents WHERE id = ANY($1::uuid[]) GROUP BY 1`,
      [uploaded],
    );
    const byStatus = Object.fromEntries(rows.map((r) => [r.status, r.n]));
    const accounted = rows.reduce((s, r) => s + r.n, 0);

    const total = Object.values(latencies).reduce((s, l) => s + l.length, 0);
    console.log(
      `\n${total} operations in ${elapsed.toFixed(1)} s: ${(total / elapsed).toFixed(1)} per second`,
    );
    console.log('route     count   per s    p50 ms   p95 ms   statuses');
    for (const route of Object.keys(MIX) as Route[]) {
      const sorted = [...latencies[route]].sort((a, b) => a - b);
      const label = route === 'upload' ? 'upload*' : route === 'list' ? 'list†' : route;
      console.log(
        `${label.padEnd(9)} ${String(sorted.length).padStart(5)} ${(sorted.length / elapsed).toFixed(1).padStart(7)} ${percentile(sorted, 50).toFixed(1).padStart(9)} ${percentile(sorted, 95).toFixed(1).padStart(8)}   ${[
          ...statuses[route],
        ]
          .map(([s, k]) => `${s}: ${k}`)
          .join(', ')}`,
      );
    }
    console.log(
      '* POST /api/documents and the presigned PUT of the file, timed together; † GET /api/documents',
    );
    console.log(
      `documents uploaded ${uploaded.length}; after the queue drained (${drainSeconds.toFixed(1)} s): ${JSON.stringify(byStatus)}; missing ${uploaded.length - accounted}; not indexed ${uploaded.length - (byStatus.indexed ?? 0)}`,
    );
  } finally {
    await api.close();
    await stack.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  benchLoad().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
