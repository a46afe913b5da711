/**
 * `groundwork eval <dataset-dir> [--mode hybrid|vector|keyword] [--json]`: loads a BEIR dataset
 * into a fresh tenant through the real ingestion path (S3 emulator, ingest handler, parser,
 * chunker, embedder, database) and scores the real search code: nDCG@10, Recall@100, MRR@10.
 * Each question asks for 100 hits (so each arm returns 4 × 100 candidates); `--top-k 10` asks
 * for 10, as a /search caller would (Recall is then at 10), and `--candidates N` sets the
 * candidates per arm (at least 4 × top_k, as in the product).
 * The index is kept per dataset and settings under the data folder, so a second run only
 * searches (unchanged documents cost nothing); it is built anew when the code that turns files
 * into chunks has changed since ({@link ingestionCodeVersion}).
 */
import { createHash } from 'node:crypto';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { Presets, SingleBar } from 'cli-progress';
import { createSearchRepository } from '../../lambdas/adapters/postgres/search-repository';
import { createSearch } from '../../lambdas/core/retrieval/search';
import { scoreRun, type RetrievalScores } from '../../lambdas/core/evaluation/metrics';
import type { IngestionSettings } from '../../lambdas/core/ingestion/ingest';
import type { SearchMode } from '../../lambdas/core/retrieval/types';
import { loadBeir, sampleIds, type BeirDataset } from '../evaluation/beir';
import { stackOptionsFromEnv, type LocalEnv } from '../config';
import { acquireLock, LOCK_FILE } from '../data-dir-lock';
import { startLocalStack, type LocalStack, type LocalStackOptions } from '../stack';

export interface EvalOptions {
  readonly datasetDir: string;
  readonly dataDir: string;
  readonly modes: readonly SearchMode[];
  readonly sample?: number;
  /**
   * Hybrid at each of these fixed dense weights instead of the model's fusion (`--dense-weight`,
   * repeatable): for tuning, so without the model's dense lead.
   */
  readonly denseWeights?: readonly number[];
  readonly ingestion?: Partial<IngestionSettings>;
  /** Hits asked for per question. @default 100 */
  readonly topK?: number;
  /** Candidates per arm (the search setting; at least 4 × topK). @default the product's */
  readonly candidates?: number;
  /** @default the shipped local model, no rerank stage */
  readonly models?: EvalModels;
  readonly progress?: boolean;
}

export interface EvalReport {
  readonly dataset: string;
  /** The embedding model that indexed the corpus and embedded the questions. */
  readonly model: string;
  readonly documents: number;
  readonly chunks: number;
  readonly queries: number;
  readonly ingestSeconds: number;
  /** Hits asked for per question: Recall is at min(topK, 100). */
  readonly topK: number;
  readonly results: { mode: SearchMode; denseWeight?: number; scores: RetrievalScores }[];
}

/** Uploads the corpus (as Markdown with the title as heading) and waits for the index. */
export async function loadCorpus(
  stack: LocalStack,
  data: BeirDataset,
  tenant: string,
  progress: boolean,
): Promise<void> {
  const bar = progress
    ? new SingleBar(
        { format: 'indexing {bar} {value}/{total} documents', stream: process.stderr },
        Presets.shades_classic,
      )
    : null;
  bar?.start(data.corpus.length, 0);
  let next = 0;
  const worker = async () => {
    while (next < data.corpus.length) {
      const doc = data.corpus[next++]!;
      const body = doc.title ? `# ${doc.title}\n\n${doc.text}` : doc.text;
      const group = groupOf(doc.id);
      if (group !== null) {
        // SQuAD-style ids (<article>-<paragraph>): the article, so a whole article can be excluded.
        await stack.s3.client.send(
          new PutObjectCommand({
            Bucket: stack.s3.bucket,
            Key: `tenants/${tenant}/${encodeURIComponent(doc.id)}.md.metadata.json`,
            Body: JSON.stringify({ metadataAttributes: { group } }),
            ContentType: 'application/json',
          }),
        );
      }
      await stack.s3.client.send(
        new PutObjectCommand({
          Bucket: stack.s3.bucket,
          Key: `tenants/${tenant}/${encodeURIComponent(doc.id)}.md`,
          Body: body,
          ContentType: 'text/markdown',
        }),
      );
      bar?.increment();
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  await stack.queue.idle();
  bar?.stop();
}

/** The article of a SQuAD-style id (`12-3` is paragraph 3 of article 12), else null. */
export function groupOf(id: string): string | null {
  const m = /^(\d+)-\d+$/.exec(id);
  return m ? m[1]! : null;
}

/**
 * The models an evaluation runs with: the embedding model and the rerank stage configured in
 * the environment (`GROUNDWORK_EMBEDDER`, `GROUNDWORK_EMBED_*`, `GROUNDWORK_RERANKER`,
 * `GROUNDWORK_RERANK_*`, as `groundwork start` reads them); none given: the shipped local model.
 */
export type EvalModels = Pick<
  LocalStackOptions,
  'embedder' | 'reranker' | 'search' | 'embedThreads'
>;

/** The configured models of `env`, for the evaluation commands. */
export async function evalModelsFromEnv(env: LocalEnv & { dataDir: string }): Promise<EvalModels> {
  const { embedder, reranker, search, embedThreads } = (await stackOptionsFromEnv(
    env,
  )) as EvalModels;
  return {
    ...(embedder ? { embedder } : {}),
    ...(reranker ? { reranker, ...(search ? { search } : {}) } : {}),
    ...(embedThreads === undefined ? {} : { embedThreads }),
  };
}

/**
 * Opens (or reuses) the index of a dataset, loading what is missing; the caller closes it. Each
 * embedding model and set of ingestion settings has an index of its own, in a folder of its own
 * that one command at a time holds (data-dir-lock.ts): two evaluations of one index at once would
 * share its emulators' files.
 */
export async function openEvalIndex(options: {
  datasetDir: string;
  dataDir: string;
  ingestion?: Partial<IngestionSettings>;
  models?: EvalModels;
  progress?: boolean;
}): Promise<{
  stack: LocalStack;
  data: BeirDataset;
  tenant: string;
  ingestSeconds: number;
  /** Stops the stack and releases the index's folder. */
  close: () => Promise<void>;
}> {
  const data = await loadBeir(options.datasetDir);
  const embedder = options.models?.embedder;
  // The shipped model's indexes keep the key they had before models could be chosen.
  const keyed = embedder
    ? { ingestion: options.ingestion ?? {}, model: `${embedder.modelId}@${embedder.dimension}` }
    : (options.ingestion ?? {});
  const settingsKey = createHash('sha1').update(JSON.stringify(keyed)).digest('hex').slice(0, 8);
  const tenant = `eval-${data.name.replace(/[^A-Za-z0-9_-]/g, '-')}`.slice(0, 60);
  const dataDir = path.join(options.dataDir, 'eval', `${data.name}-${settingsKey}`);
  const lock = await acquireLock(dataDir, { command: `evaluation of ${data.name}` });
  const version = await ingestionCodeVersion();
  const stamp = path.join(dataDir, 'ingestion-code');
  let stack: LocalStack | null = null;
  const close = async () => {
    try {
      await stack?.stop();
    } finally {
      await lock.release();
    }
  };
  try {
    if ((await readFile(stamp, 'utf8').catch(() => null)) !== version) await emptyIndex(dataDir);
    stack = await startLocalStack({
      dataDir,
      logLevel: 'ERROR',
      ...options.models,
      ...(options.ingestion ? { ingestion: options.ingestion } : {}),
    });
    const t0 = performance.now();
    await loadCorpus(stack, data, tenant, options.progress ?? false);
    await writeFile(stamp, version);
    return { stack, data, tenant, ingestSeconds: (performance.now() - t0) / 1000, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** Where the code lives that turns a file into stored chunks: parsers, ingestion, line rules. */
const INGESTION_CODE = ['lambdas/adapters/parsers', 'lambdas/core/ingestion', 'lambdas/core/text'];

/**
 * A digest of the code that turns a file into stored chunks. Ingestion skips a document whose
 * bytes it has indexed already, so an index built before a parser changed would keep the old
 * text and the evaluation would measure the old code.
 */
export async function ingestionCodeVersion(): Promise<string> {
  const root = path.resolve(__dirname, '..', '..');
  const hash = createHash('sha1');
  for (const dir of INGESTION_CODE) {
    const files = (await readdir(path.join(root, dir)))
      .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
      .sort();
    for (const f of files) {
      hash.update(`${dir}/${f}\0`);
      hash.update(await readFile(path.join(root, dir, f)));
    }
  }
  return hash.digest('hex');
}

/** Removes an index's databases and objects; the folder and its lock stay. */
async function emptyIndex(dataDir: string): Promise<void> {
  const entries = await readdir(dataDir).catch(() => [] as string[]);
  for (const entry of entries)
    if (entry !== LOCK_FILE) await rm(path.join(dataDir, entry), { recursive: true, force: true });
}

export function corpusIdOf(sourceUri: string): string {
  const file = sourceUri.split('/').pop() ?? '';
  return decodeURIComponent(file.replace(/\.md$/, ''));
}

export async function runEval(options: EvalOptions): Promise<EvalReport> {
  const { stack, data, tenant, ingestSeconds, close } = await openEvalIndex(options);
  try {
    const { rows } = await stack.db.query<{ n: string; c: string }>(
      `SELECT count(*)::text AS n, coalesce(sum(chunk_count), 0)::text AS c FROM documents WHERE tenant_id = $1 AND status = 'indexed'`,
      [tenant],
    );

    const queryIds = sampleIds(
      [...data.qrels.keys()].filter((q) => data.queries.has(q)),
      options.sample,
    );
    const texts = queryIds.map((q) => data.queries.get(q)!);
    const vectors: number[][] = [];
    for (let i = 0; i < texts.length; i += 64)
      vectors.push(...(await stack.embedder.embed(texts.slice(i, i + 64), 'query')));
    const qrels = new Map(queryIds.map((q) => [q, data.qrels.get(q)!]));
    const identity = { tenantId: tenant, userId: 'eval' };

    const results: EvalReport['results'] = [];
    const runs: { mode: SearchMode; denseWeight?: number }[] = options.modes.flatMap((mode) =>
      mode === 'hybrid' && options.denseWeights?.length
        ? options.denseWeights.map((w) => ({ mode, denseWeight: w }))
        : [{ mode }],
    );
    const topK = options.topK ?? 100;
    for (const r of runs) {
      const search =
        r.denseWeight === undefined && options.candidates === undefined
          ? stack.search
          : createSearch({
              store: createSearchRepository(stack.db),
              embedder: stack.embedder,
              settings: {
                ...(r.denseWeight === undefined
                  ? {}
                  : { defaultDenseWeight: r.denseWeight, fusionByModel: {} }),
                ...(options.candidates === undefined ? {} : { candidates: options.candidates }),
              },
            });
      const run = new Map<string, string[]>();
      for (let i = 0; i < queryIds.length; i++) {
        const { hits } = await search.searchWithEmbedding(
          identity,
          { queryText: texts[i]!, topK, mode: r.mode, filters: {}, maxChunksPerSource: 1 },
          vectors[i]!,
        );
        run.set(
          queryIds[i]!,
          hits.map((h) => corpusIdOf(h.sourceUri)),
        );
      }
      results.push({ ...r, scores: scoreRun(run, qrels) });
    }
    return {
      model: stack.embedder.modelId,
      dataset: data.name,
      documents: Number(rows[0]?.n ?? 0),
      chunks: Number(rows[0]?.c ?? 0),
      queries: queryIds.length,
      ingestSeconds,
      topK,
      results,
    };
  } finally {
    await close();
  }
}

export function formatEval(report: EvalReport): string {
  const lines = [
    `${report.dataset} with ${report.model}: ${report.documents} documents, ${report.chunks} chunks, ${report.queries} queries (index ready in ${report.ingestSeconds.toFixed(1)} s)`,
    `mode      weight  nDCG@10  ${`Recall@${Math.min(report.topK, 100)}`.padEnd(10)}  MRR@10`,
  ];
  for (const r of report.results) {
    lines.push(
      `${r.mode.padEnd(9)} ${(r.denseWeight === undefined ? '-' : r.denseWeight.toFixed(2)).padStart(6)}  ${r.scores.ndcg10.toFixed(4)}   ${r.scores.recall100.toFixed(4)}    ${r.scores.mrr10.toFixed(4)}`,
    );
  }
  return lines.join('\n');
}

/** The index options `eval` and `calibrate` share: chunk size and overlap, embedding windows. */
export const INGESTION_ARGS = {
  'chunk-tokens': { type: 'string' },
  'overlap-tokens': { type: 'string' },
  'embed-window': { type: 'string' },
} as const;

/** {@link INGESTION_ARGS} as ingestion settings for {@link openEvalIndex}. */
export function ingestionFromArgs(values: {
  'chunk-tokens'?: string;
  'overlap-tokens'?: string;
  'embed-window'?: string;
}): Partial<IngestionSettings> {
  const ingestion: { -readonly [K in keyof IngestionSettings]?: IngestionSettings[K] } = {};
  if (values['chunk-tokens']) {
    const target = Number(values['chunk-tokens']);
    ingestion.chunking = {
      targetTokens: target,
      overlapTokens: Number(values['overlap-tokens'] ?? Math.floor(target / 4)),
    };
  }
  if (values['embed-window']) ingestion.embedWindowTokens = Number(values['embed-window']);
  return ingestion;
}

export async function evalCommand(
  args: string[],
  env: LocalEnv & { dataDir: string },
): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      mode: { type: 'string', multiple: true },
      json: { type: 'boolean', default: false },
      sample: { type: 'string' },
      'dense-weight': { type: 'string', multiple: true },
      ...INGESTION_ARGS,
      'top-k': { type: 'string' },
      candidates: { type: 'string' },
    },
  });
  const datasetDir = positionals[0];
  if (!datasetDir) {
    console.error(
      'Usage: groundwork eval <dataset-dir> [--mode hybrid|vector|keyword]... [--sample N] [--top-k N] [--candidates N] [--json]',
    );
    return 2;
  }
  const modes = (
    values.mode?.length ? values.mode : ['hybrid', 'vector', 'keyword']
  ) as SearchMode[];
  if (modes.some((m) => !['hybrid', 'vector', 'keyword'].includes(m))) {
    console.error('--mode must be hybrid, vector or keyword');
    return 2;
  }
  const ingestion = ingestionFromArgs(values);
  const positive = (name: 'top-k' | 'candidates', max: number): number | undefined | null => {
    const raw = values[name];
    if (raw === undefined) return undefined;
    const n = Number(raw);
    return Number.isInteger(n) && n >= 1 && n <= max ? n : null;
  };
  const topK = positive('top-k', 100);
  const candidates = positive('candidates', 1000);
  if (topK === null || candidates === null) {
    console.error('--top-k must be an integer from 1 to 100, --candidates from 1 to 1000');
    return 2;
  }
  const report = await runEval({
    datasetDir,
    dataDir: env.dataDir,
    models: await evalModelsFromEnv(env),
    modes,
    ...(values.sample ? { sample: Number(values.sample) } : {}),
    ...(values['dense-weight']?.length ? { denseWeights: values['dense-weight'].map(Number) } : {}),
    ...(Object.keys(ingestion).length ? { ingestion } : {}),
    ...(topK === undefined ? {} : { topK }),
    ...(candidates === undefined ? {} : { candidates }),
    progress: !values.json && process.stderr.isTTY === true,
  });
  console.log(values.json ? JSON.stringify(report) : formatEval(report));
  return 0;
}
