/**
 * Ingestion benchmark on the SciFact corpus, on the embedded default (PGlite, S3 emulator, the
 * local embedding model on worker threads), from one run:
 *  - documents/s and chunks/s of a fresh ingest, and where the time went (fetch, parse + split,
 *    embedding, writing), as shares of the stages' summed time;
 *  - embedding calls made by a second ingest of the same, unchanged files (must be 0);
 *  - pipeline overhead: how much longer the whole pipeline took than embedding the same inputs
 *    alone on the same worker pool (target: under 5 % of wall time);
 *  - the multi-core speed-up: the worker pool against one in-process embedding thread, on the
 *    same sample of chunks.
 * Run: `npm run bench -- ingest [--limit N]` (or `node -r tsx/cjs bench/ingest.ts [N]`).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { createLocalEmbedder } from '../lambdas/adapters/embeddings/local-embedder';
import { newStageTimings } from '../lambdas/core/ingestion/ingest';
import type { Embedder } from '../lambdas/core/ports';
import { startLocalStack, type LocalStack } from '../local/stack';

const SCIFACT = path.join(__dirname, '..', '..', 'shared', 'eval', 'scifact-train', 'corpus.jsonl');

function counting(inner: Embedder): Embedder & { calls: number; texts: number } {
  const wrapped = {
    modelId: inner.modelId,
    dimension: inner.dimension,
    calls: 0,
    texts: 0,
    async embed(texts: readonly string[]) {
      wrapped.calls += 1;
      wrapped.texts += texts.length;
      return inner.embed(texts);
    },
    close: () => inner.close?.() ?? Promise.resolve(),
  };
  return wrapped;
}

async function upload(
  stack: LocalStack,
  docs: { _id: string; title: string; text: string }[],
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < docs.length) {
        const d = docs[next++]!;
        await stack.s3.client.send(
          new PutObjectCommand({
            Bucket: stack.s3.bucket,
            Key: `tenants/bench/${d._id}.md`,
            Body: `# ${d.title}\n\n${d.text}`,
            ContentType: 'text/markdown',
          }),
        );
      }
    }),
  );
  await stack.queue.idle();
}

async function embedAll(embedder: Embedder, texts: string[], batch = 64): Promise<number> {
  const t0 = performance.now();
  const pending: Promise<unknown>[] = [];
  for (let i = 0; i < texts.length; i += batch)
    pending.push(embedder.embed(texts.slice(i, i + batch)));
  await Promise.all(pending);
  return (performance.now() - t0) / 1000;
}

export async function benchIngest(options: { limit?: number; log?: (line: string) => void } = {}) {
  const log = options.log ?? console.log;
  const all = (await readFile(SCIFACT, 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { _id: string; title: string; text: string });
  const docs = all.slice(0, options.limit ?? all.length);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'groundwork-bench-ingest-'));
  const pool = await createLocalEmbedder();
  const embedder = counting(pool);
  const timings = newStageTimings();
  const stack = await startLocalStack({
    dataDir: dir,
    embedder,
    logLevel: 'ERROR',
    ingestionTimings: timings,
  });
  try {
    const t0 = performance.now();
    await upload(stack, docs);
    const wall = (performance.now() - t0) / 1000;
    const { rows } = await stack.db.query<{ n: string; c: string }>(
      `SELECT count(*) FILTER (WHERE status = 'indexed')::text AS n, coalesce(sum(chunk_count), 0)::text AS c FROM documents WHERE tenant_id = 'bench'`,
    );
    const indexed = Number(rows[0]?.n ?? 0);
    const chunks = Number(rows[0]?.c ?? 0);
    const stages = {
      fetch: timings.fetchMs,
      parseSplit: timings.parseMs + timings.chunkMs,
      embed: timings.embedMs,
      write: timings.writeMs,
    };
    const total = Object.values(stages).reduce((a, b) => a + b, 0) || 1;

    const callsBefore = embedder.calls;
    const t1 = performance.now();
    await upload(stack, docs);
    const secondWall = (performance.now() - t1) / 1000;
    const secondCalls = embedder.calls - callsBefore;

    // The same inputs the pipeline embedded (title + chunk text), embedded alone on the same pool.
    const inputs = (
      await stack.db.query<{ t: string }>(
        `SELECT coalesce(d.title || E'\\n', '') || c.text AS t FROM chunks c JOIN documents d ON d.id = c.document_id WHERE c.tenant_id = 'bench' ORDER BY d.source_uri, c.chunk_index`,
      )
    ).rows.map((r) => r.t);
    const embedOnly = await embedAll(pool, inputs);
    const sample = inputs.slice(0, Math.min(300, inputs.length));
    const single = await createLocalEmbedder({ threads: 0 });
    const singleSeconds = await embedAll(single, sample);
    await single.close?.();
    const poolSeconds = await embedAll(pool, sample);

    const result = {
      documents: docs.length,
      indexed,
      chunks,
      wallSeconds: wall,
      documentsPerSecond: indexed / wall,
      chunksPerSecond: chunks / wall,
      stageShares: Object.fromEntries(Object.entries(stages).map(([k, v]) => [k, v / total])),
      secondRun: { wallSeconds: secondWall, embeddingCalls: secondCalls },
      embeddingOnlySeconds: embedOnly,
      pipelineOverhead: (wall - embedOnly) / wall,
      speedup: {
        sampleChunks: sample.length,
        singleThreadSeconds: singleSeconds,
        poolSeconds,
        ratio: singleSeconds / poolSeconds,
        threads: os.availableParallelism(),
      },
    };
    log(
      `ingest: ${indexed}/${docs.length} SciFact documents, ${chunks} chunks in ${wall.toFixed(1)} s: ${result.documentsPerSecond.toFixed(1)} documents/s, ${result.chunksPerSecond.toFixed(1)} chunks/s`,
    );
    log(
      `  stage shares (summed stage time): fetch ${(result.stageShares.fetch! * 100).toFixed(1)} %, parse + split ${(result.stageShares.parseSplit! * 100).toFixed(1)} %, embedding ${(result.stageShares.embed! * 100).toFixed(1)} %, writing ${(result.stageShares.write! * 100).toFixed(1)} %`,
    );
    log(
      `  second run, unchanged files: ${secondWall.toFixed(1)} s, embedding calls ${secondCalls} (target 0)`,
    );
    log(
      `  embedding the same ${inputs.length} inputs alone on the pool: ${embedOnly.toFixed(1)} s; pipeline overhead ${(result.pipelineOverhead * 100).toFixed(1)} % of wall time (target < 5 %)`,
    );
    log(
      `  multi-core: ${sample.length} chunks in ${singleSeconds.toFixed(1)} s on one in-process thread, ${poolSeconds.toFixed(1)} s on ${result.speedup.threads} workers: ${result.speedup.ratio.toFixed(2)}x (target >= 1.7x)`,
    );
    return result;
  } finally {
    await stack.stop();
    await pool.close?.();
    await rm(dir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  const limit = process.argv[2] ? Number(process.argv[2]) : undefined;
  benchIngest(limit ? { limit } : {}).catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
