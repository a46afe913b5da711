/**
 * `groundwork eval` on a small BEIR dataset written for the test: the corpus goes through the
 * embedded default's real ingestion and search (PGlite, local model), and the report's figures
 * follow from the judgements. `--top-k` and `--candidates` change what each question asks for.
 * The command evaluates the embedding model the environment configures (an OpenAI-compatible
 * server here, the fake of test/support), in an index of its own beside the local model's.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  evalCommand,
  formatEval,
  ingestionCodeVersion,
  runEval,
  type EvalReport,
} from '../../local/commands/eval';
import { loadLocalEnv } from '../../local/config';
import {
  startFakeOpenAiEmbeddings,
  type FakeEmbeddingsServer,
} from '../support/fake-openai-embeddings';

process.env.POWERTOOLS_METRICS_DISABLED = 'true';

const CORPUS = [
  {
    _id: 'd1',
    title: 'Glaciers',
    text: 'Glaciers carve valleys as the ice moves slowly downhill.',
  },
  { _id: 'd2', title: 'Volcanoes', text: 'Volcanoes erupt when magma rises through the crust.' },
  { _id: 'd3', title: 'Coral reefs', text: 'Coral reefs grow in warm shallow seas from polyps.' },
  { _id: 'd4', title: 'Deserts', text: 'Deserts receive very little rain and lose heat at night.' },
  { _id: 'd5', title: 'Tides', text: 'Tides follow the pull of the moon on the oceans.' },
];
const QUERIES = [
  { _id: 'q1', text: 'how do glaciers carve valleys' },
  { _id: 'q2', text: 'why does magma make volcanoes erupt' },
  { _id: 'q3', text: 'where do coral reefs grow' },
  // Two passages are relevant: one hit can find only one of them.
  { _id: 'q4', text: 'desert heat at night and the tides of the moon' },
];
const QRELS = 'query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\nq3\td3\t1\nq4\td4\t1\nq4\td5\t1\n';

describe('groundwork eval', () => {
  let dir: string;
  let dataset: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'groundwork-eval-'));
    dataset = path.join(dir, 'geo');
    await mkdir(dataset);
    const lines = (rows: object[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';
    await writeFile(path.join(dataset, 'corpus.jsonl'), lines(CORPUS));
    await writeFile(path.join(dataset, 'queries.jsonl'), lines(QUERIES));
    await writeFile(path.join(dataset, 'qrels.tsv'), QRELS);
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('scores each mode from the judgements, asking for 100 hits by default', async () => {
    const report = await runEval({
      datasetDir: dataset,
      dataDir: dir,
      modes: ['keyword', 'hybrid'],
    });
    expect(report).toMatchObject({ dataset: 'geo', documents: 5, queries: 4, topK: 100 });
    // Each question names its passages' words: keyword search puts them first, so every metric
    // is 1; hybrid finds them all too, and puts one first.
    const [keyword, hybrid] = report.results;
    expect(keyword).toMatchObject({ mode: 'keyword' });
    expect(keyword!.scores).toEqual({ ndcg10: 1, recall100: 1, mrr10: 1, queries: 4 });
    expect(hybrid).toMatchObject({
      mode: 'hybrid',
      scores: { recall100: 1, mrr10: 1, queries: 4 },
    });
    expect(hybrid!.scores.ndcg10).toBeGreaterThan(0.9);
    expect(formatEval(report)).toContain('Recall@100');
  }, 120_000);

  // The candidate count only reaches the search settings here: the report cannot show it.
  it('asks for top_k hits (--top-k), with a candidate count passed on (--candidates)', async () => {
    const report = await runEval({
      datasetDir: dataset,
      dataDir: dir,
      modes: ['keyword'],
      topK: 1,
      candidates: 4,
    });
    expect(report.topK).toBe(1);
    // One hit per question: q4 finds one of its two passages (recall 0.5, nDCG 1 / (1 + 1/log2 3)).
    const scores = report.results[0]!.scores;
    expect(scores.recall100).toBeCloseTo((3 + 0.5) / 4, 10);
    expect(scores.ndcg10).toBeCloseTo((3 + 1 / (1 + 1 / Math.log2(3))) / 4, 10);
    expect(scores.mrr10).toBe(1);
    expect(formatEval(report)).toContain('Recall@1 ');
  }, 120_000);

  it('refuses to open an index another process is evaluating, and frees it when done', async () => {
    await runEval({ datasetDir: dataset, dataDir: dir, modes: ['keyword'], topK: 1 });
    // A live process holds the index's folder now.
    const [index] = (await readdir(path.join(dir, 'eval'))).filter((f) => f.startsWith('geo-'));
    const lockFile = path.join(dir, 'eval', index!, 'lock.json');
    const holder = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], {
      stdio: 'ignore',
    });
    try {
      await writeFile(lockFile, JSON.stringify({ pid: holder.pid, command: 'evaluation of geo' }));
      await expect(
        runEval({ datasetDir: dataset, dataDir: dir, modes: ['keyword'] }),
      ).rejects.toThrow(`is in use by "groundwork evaluation of geo" (pid ${holder.pid})`);
    } finally {
      holder.kill();
    }
    await rm(lockFile);
    await runEval({ datasetDir: dataset, dataDir: dir, modes: ['keyword'], topK: 1 });
    // The run released the folder behind it.
    await expect(readFile(lockFile)).rejects.toThrow();
  }, 120_000);

  it('builds an index again when the code that turned its files into chunks has changed', async () => {
    await runEval({ datasetDir: dataset, dataDir: dir, modes: ['keyword'], topK: 1 });
    const [index] = (await readdir(path.join(dir, 'eval'))).filter((f) => f.startsWith('geo-'));
    const folder = path.join(dir, 'eval', index!);
    const stamp = path.join(folder, 'ingestion-code');
    expect(await readFile(stamp, 'utf8')).toBe(await ingestionCodeVersion());
    // The same code: the index is reused as it is.
    await writeFile(path.join(folder, 'kept'), '');
    await runEval({ datasetDir: dataset, dataDir: dir, modes: ['keyword'], topK: 1 });
    await expect(readFile(path.join(folder, 'kept'), 'utf8')).resolves.toBe('');
    // Other code (a parser changed since): documents whose bytes did not change would keep the
    // old text, so the index is emptied and loaded again.
    await writeFile(stamp, 'an older parser');
    const report = await runEval({ datasetDir: dataset, dataDir: dir, modes: ['keyword'] });
    await expect(readFile(path.join(folder, 'kept'))).rejects.toThrow();
    expect(await readFile(stamp, 'utf8')).toBe(await ingestionCodeVersion());
    expect(report).toMatchObject({ documents: 5, queries: 4 });
    expect(report.results[0]!.scores.recall100).toBe(1);
  }, 180_000);

  it('refuses a top_k or candidate count out of range, before loading anything', async () => {
    const errors: string[] = [];
    const spy = jest.spyOn(console, 'error').mockImplementation((m: string) => errors.push(m));
    try {
      const env = loadLocalEnv({ GROUNDWORK_DATA_DIR: dir });
      expect(await evalCommand([dataset, '--top-k', '0'], env)).toBe(2);
      expect(await evalCommand([dataset, '--top-k', '101'], env)).toBe(2);
      expect(await evalCommand([dataset, '--candidates', 'many'], env)).toBe(2);
    } finally {
      spy.mockRestore();
    }
    expect(errors).toHaveLength(3);
    expect(errors[0]).toMatch(/--top-k must be an integer from 1 to 100/);
  });

  describe('with the embedding model the environment configures', () => {
    let fake: FakeEmbeddingsServer;
    beforeAll(async () => {
      fake = await startFakeOpenAiEmbeddings();
    });
    afterAll(() => fake.close());

    async function evalJson(env: Record<string, string>): Promise<EvalReport> {
      const out: string[] = [];
      const spy = jest.spyOn(console, 'log').mockImplementation((m: string) => out.push(m));
      try {
        const code = await evalCommand(
          [dataset, '--mode', 'vector', '--json'],
          loadLocalEnv({ GROUNDWORK_DATA_DIR: dir, ...env }),
        );
        expect(code).toBe(0);
      } finally {
        spy.mockRestore();
      }
      return JSON.parse(out.join('')) as EvalReport;
    }

    it('indexes and asks through an OpenAI-compatible server, in an index of its own', async () => {
      const report = await evalJson({
        GROUNDWORK_EMBEDDER: 'openai',
        GROUNDWORK_EMBED_BASE_URL: fake.url,
        GROUNDWORK_EMBED_MODEL_ID: 'nomic-embed-text',
        GROUNDWORK_EMBED_DIMENSION: '768',
      });
      expect(report).toMatchObject({
        model: 'openai/nomic-embed-text/768',
        documents: 5,
        queries: 4,
      });
      const inputs = fake.requests.flatMap((r) => {
        const body = r.body as { model: string; input: string | string[] };
        expect(body.model).toBe('nomic-embed-text');
        return Array.isArray(body.input) ? body.input : [body.input];
      });
      // Every passage was embedded by the server, and every question too.
      for (const doc of CORPUS) expect(inputs.some((t) => t.includes(doc.text))).toBe(true);
      for (const q of QUERIES) expect(inputs).toContain(q.text);
      expect(report.results[0]!.scores.queries).toBe(4);

      // The local model's index of the same dataset is another one: no model mix-up refusal.
      const local = await evalJson({});
      expect(local.model).not.toBe(report.model);
      expect(local.results[0]!.scores.recall100).toBe(1);
    }, 180_000);
  });
});
