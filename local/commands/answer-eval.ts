/**
 * Measurements of the answer pipeline on SQuAD (BEIR format with gold answer spans):
 *
 * - `groundwork calibrate <dataset-dir>`: calibrates the confidence gate of the configured
 *   embedding model. Each sampled question is asked four times: of the full index (its gold
 *   paragraph is there), with its whole article excluded (a metadata filter on the article, which
 *   is retrieval over an index without it), and of a five-document corpus (a document_ids
 *   filter) with and without its gold paragraph, as a small corpus like the sample handbook. The
 *   gate should say medium/high with the gold paragraph and low without it. The weight of cosine
 *   versus keyword coverage, the evidence floor and the thresholds are fitted on one half of the
 *   sample and the rates reported on the other half.
 * - `groundwork eval-answers <dataset-dir>`: how often the extractive answer contains a gold
 *   span, and /answer latency without an LLM (p50/p95), through the real answer use case.
 */
import { parseArgs } from 'node:util';
import { createTokenCounter } from '../../lambdas/adapters/tokenizer/gpt-token-counter';
import { createPromptRepository } from '../../lambdas/adapters/postgres/conversation-repository';
import { createAnswering } from '../../lambdas/core/answer/answer';
import {
  assessConfidence,
  DEFAULT_CALIBRATION,
  type ConfidenceCalibration,
} from '../../lambdas/core/answer/confidence';
import { buildContext } from '../../lambdas/core/answer/context';
import { extractiveAnswer } from '../../lambdas/core/answer/extractive';
import type { SearchHit } from '../../lambdas/core/retrieval/types';
import type { SearchFilters } from '../../lambdas/core/retrieval/filters';
import { sampleIds, type BeirDataset } from '../evaluation/beir';
import type { LocalStack } from '../stack';
import { corpusIdOf, groupOf, openEvalIndex } from './eval';

type Hits = Pick<SearchHit, 'score' | 'keywordCoverage'>[];

/**
 * One question's retrievals: of the full index, of the index without its article, and of a
 * five-document corpus with and without its gold paragraph.
 */
export type Pair = {
  readonly present: Hits;
  readonly absent: Hits;
  readonly smallPresent: Hits;
  readonly smallAbsent: Hits;
};

export type GateCase = keyof Pair;
/** Per case, the share of questions the gate gets right (medium/high with the gold, else low). */
export type GateRates = Record<GateCase, number>;

const CASES: readonly GateCase[] = ['present', 'absent', 'smallPresent', 'smallAbsent'];
const WANTS_ANSWER: Readonly<Record<GateCase, boolean>> = {
  present: true,
  absent: false,
  smallPresent: true,
  smallAbsent: false,
};

/** Documents in the simulated small corpus (as many as the sample handbook has). */
const SMALL_CORPUS = 5;
/** The seed of the question sample and of the small corpora's draw. */
const SEED = 7;

/** Per case, the share of questions gated medium/high with the gold present, low without it. */
export function gateRates(pairs: readonly Pair[], calibration: ConfidenceCalibration): GateRates {
  const rates = {} as Record<GateCase, number>;
  for (const c of CASES) {
    const right = pairs.filter(
      (p) => (assessConfidence(p[c], calibration).level !== 'low') === WANTS_ANSWER[c],
    ).length;
    rates[c] = right / pairs.length;
  }
  return rates;
}

export interface FitOptions {
  /** Evidence floors tried; `[0]` fits the plain mean of the top 5. Default 0 to 1 by 0.01. */
  readonly floors?: readonly number[];
  /** The cases whose worst rate is maximised. Default all four. */
  readonly cases?: readonly GateCase[];
}

/**
 * Fits the cosine weight (0 to 1 by 0.05), the evidence floor and the medium threshold (0 to 1
 * by 0.001) to maximise the worst of the cases' rates, ties going to the larger sum of them. High
 * is the score that at most 2 % of the questions whose article was removed reach.
 */
export function fitCalibration(
  pairs: readonly Pair[],
  options: FitOptions = {},
): { calibration: ConfidenceCalibration; fit: GateRates } {
  const floors = options.floors ?? Array.from({ length: 101 }, (_, i) => i / 100);
  const objective = new Set(options.cases ?? CASES);
  const n = pairs.length;
  let best: { worst: number; sum: number; calibration: ConfidenceCalibration } | null = null;
  for (let wi = 0; wi <= 20; wi++) {
    const cosineWeight = wi / 20;
    for (const evidenceFloor of floors) {
      const probe = { cosineWeight, evidenceFloor, high: 2, medium: 2 };
      // The gated score of each question, ascending; no evidence can never pass a threshold.
      const scores = CASES.map((c) =>
        pairs
          .map((p) => {
            const a = assessConfidence(p[c], probe);
            return a.evidenceChunks > 0 ? a.avgRelevance : -1;
          })
          .sort((a, b) => a - b),
      );
      // The rates only change at a score: the grid points on either side of each are enough.
      const steps = new Set([0]);
      for (const x of scores.flat()) {
        const i = Math.floor(x * 1000);
        for (const ti of [i, i + 1]) if (ti >= 0 && ti <= 1000) steps.add(ti);
      }
      const below = CASES.map(() => 0); // per case, how many scores are below the threshold
      for (const ti of [...steps].sort((a, b) => a - b)) {
        const t = ti / 1000;
        let worst = n;
        let sum = 0;
        CASES.forEach((c, k) => {
          const sorted = scores[k]!;
          while (below[k]! < n && sorted[below[k]!]! < t) below[k]! += 1;
          if (!objective.has(c)) return;
          const right = WANTS_ANSWER[c] ? n - below[k]! : below[k]!;
          worst = Math.min(worst, right);
          sum += right;
        });
        if (!best || worst > best.worst || (worst === best.worst && sum > best.sum)) {
          const absent = scores[CASES.indexOf('absent')]!;
          const high = Math.max(t, absent[Math.floor(n * 0.98)] ?? t);
          best = {
            worst,
            sum,
            calibration: {
              cosineWeight,
              evidenceFloor,
              medium: t,
              high: Math.round(high * 1000) / 1000,
            },
          };
        }
      }
    }
  }
  if (!best) throw new Error('fitCalibration needs at least one floor');
  return { calibration: best.calibration, fit: gateRates(pairs, best.calibration) };
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length - 1) * p))] ?? 0;
}

/** Documents of the index by corpus id (the small corpora are built from them). */
async function documentIds(stack: LocalStack, tenant: string): Promise<Map<string, string>> {
  const { rows } = await stack.db.query<{ id: string; source_uri: string }>(
    `SELECT id, source_uri FROM documents WHERE tenant_id = $1 AND status = 'indexed'`,
    [tenant],
  );
  return new Map(rows.map((r) => [corpusIdOf(r.source_uri), r.id]));
}

/**
 * Retrieves, through the real search code, the four cases of each question: the full index and
 * the index without the question's article, then a five-document corpus (the gold paragraph and
 * four paragraphs of other articles, drawn with a seeded generator) and the same corpus with the
 * gold paragraph replaced by a fifth paragraph of another article.
 */
export async function collectPairs(
  stack: LocalStack,
  data: BeirDataset,
  tenant: string,
  ids: readonly string[],
  seed = SEED,
): Promise<Pair[]> {
  const docs = await documentIds(stack, tenant);
  const corpusIds = [...docs.keys()].sort();
  let s = seed;
  const rand = () => {
    s = (s * 1664525 + 1013904223) % 4294967296;
    return s / 4294967296;
  };
  const pairs: Pair[] = [];
  const identity = { tenantId: tenant, userId: 'calibrate' };
  for (let i = 0; i < ids.length; i += 32) {
    const batch = ids.slice(i, i + 32);
    const vectors = await stack.embedder.embed(
      batch.map((q) => data.queries.get(q)!),
      'query',
    );
    for (let j = 0; j < batch.length; j++) {
      const q = batch[j]!;
      const gold = [...data.qrels.get(q)!.keys()][0]!;
      const group = groupOf(gold);
      const goldDoc = docs.get(gold);
      if (group === null || goldDoc === undefined)
        throw new Error(
          `calibrate needs SQuAD-style corpus ids (<article>-<paragraph>), all indexed; got ${gold}`,
        );
      if (corpusIds.filter((id) => groupOf(id) !== group).length < SMALL_CORPUS)
        throw new Error(`calibrate needs ${SMALL_CORPUS} paragraphs outside article ${group}`);
      const others: string[] = [];
      while (others.length < SMALL_CORPUS) {
        const id = corpusIds[Math.floor(rand() * corpusIds.length)]!;
        if (groupOf(id) !== group && !others.includes(id)) others.push(id);
      }
      const otherDocs = others.map((id) => docs.get(id)!);
      const run = async (filters: SearchFilters) =>
        (
          await stack.search.searchWithEmbedding(
            identity,
            {
              queryText: data.queries.get(q)!,
              topK: 8,
              mode: 'hybrid',
              maxChunksPerSource: 3,
              filters,
            },
            vectors[j]!,
          )
        ).hits.map(({ score, keywordCoverage }) => ({ score, keywordCoverage }));
      pairs.push({
        present: await run({}),
        absent: await run({ metadata: { notEquals: { key: 'group', value: group } } }),
        smallPresent: await run({ document_ids: [goldDoc, ...otherDocs.slice(1)] }),
        smallAbsent: await run({ document_ids: otherDocs }),
      });
    }
  }
  return pairs;
}

export async function calibrateCommand(args: string[], dataDir: string): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      sample: { type: 'string', default: '1000' },
      json: { type: 'boolean', default: false },
    },
  });
  if (!positionals[0]) {
    console.error('Usage: groundwork calibrate <squad-dir> [--sample N] [--json]');
    return 2;
  }
  const { stack, data, tenant } = await openEvalIndex({
    datasetDir: positionals[0],
    dataDir,
    progress: process.stderr.isTTY === true,
  });
  try {
    const ids = sampleIds(
      [...data.qrels.keys()].filter((q) => data.queries.has(q)),
      Number(values.sample),
      SEED,
    );
    const pairs = await collectPairs(stack, data, tenant, ids);
    const half = Math.floor(pairs.length / 2);
    const fitPairs = pairs.slice(0, half);
    const heldOutPairs = pairs.slice(half);
    const fitted = fitCalibration(fitPairs);
    // The previous method, for comparison: the plain mean of the top 5, fitted on the large
    // corpus only.
    const plain = fitCalibration(fitPairs, { floors: [0], cases: ['present', 'absent'] });
    const report = {
      model: stack.embedder.modelId,
      dataset: data.name,
      questions: pairs.length,
      fittedOn: half,
      seed: SEED,
      calibration: fitted.calibration,
      fitRates: fitted.fit,
      heldOutRates: gateRates(heldOutPairs, fitted.calibration),
      previousMethod: {
        calibration: plain.calibration,
        fitRates: plain.fit,
        heldOutRates: gateRates(heldOutPairs, plain.calibration),
      },
      designDefaults: {
        calibration: DEFAULT_CALIBRATION,
        heldOutRates: gateRates(heldOutPairs, DEFAULT_CALIBRATION),
      },
    };
    const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
    const rates = (r: GateRates) =>
      `present ${pct(r.present)}, absent ${pct(r.absent)}, small present ${pct(r.smallPresent)}, small absent ${pct(r.smallAbsent)}`;
    const describe = (c: ConfidenceCalibration) =>
      `cosine weight ${c.cosineWeight.toFixed(2)}, evidence floor ${c.evidenceFloor ?? 0}, medium >= ${c.medium}, high >= ${c.high}`;
    console.log(
      values.json
        ? JSON.stringify(report)
        : [
            `confidence calibration for ${report.model} on ${data.name}: ${pairs.length} questions, seed ${SEED} (fit on ${half}, reported on ${pairs.length - half})`,
            `  ${describe(report.calibration)}`,
            `  fitted:   ${rates(report.fitRates)}`,
            `  held out: ${rates(report.heldOutRates)}`,
            `previous method (plain mean of the top 5, fitted on present/absent only): ${describe(report.previousMethod.calibration)}`,
            `  fitted:   ${rates(report.previousMethod.fitRates)}`,
            `  held out: ${rates(report.previousMethod.heldOutRates)}`,
            `design defaults: ${describe(DEFAULT_CALIBRATION)}`,
            `  held out: ${rates(report.designDefaults.heldOutRates)}`,
            `(present: gated medium/high with the gold paragraph in the index; absent: gated low with its article removed; small: a ${SMALL_CORPUS}-document corpus with and without the gold paragraph)`,
          ].join('\n'),
    );
    return 0;
  } finally {
    await stack.stop();
  }
}

/** Lower-cased, punctuation and articles removed, as the SQuAD evaluation normalises answers. */
export function normaliseAnswer(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s]/gu, ' ')
    .replace(/\b(a|an|the)\b/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

export async function evalAnswersCommand(args: string[], dataDir: string): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      sample: { type: 'string', default: '1000' },
      sentences: { type: 'string', default: '2' },
      json: { type: 'boolean', default: false },
    },
  });
  if (!positionals[0]) {
    console.error('Usage: groundwork eval-answers <squad-dir> [--sample N] [--json]');
    return 2;
  }
  const { stack, data, tenant } = await openEvalIndex({
    datasetDir: positionals[0],
    dataDir,
    progress: process.stderr.isTTY === true,
  });
  try {
    const ids = sampleIds(
      [...data.qrels.keys()].filter((q) => data.answers.has(q)),
      Number(values.sample),
      11,
    );
    const tokens = createTokenCounter();
    const maxSentences = Number(values.sentences);
    const answering = createAnswering({
      search: stack.search,
      embedder: stack.embedder,
      tokens,
      conversations: stack.conversations,
      prompts: createPromptRepository(stack.db),
      llm: null,
      settings: { extractiveSentences: maxSentences },
    });
    const identity = { tenantId: tenant, userId: 'eval-answers' };
    let containsGold = 0;
    let pipelineContainsGold = 0;
    let gatedLow = 0;
    const latencies: number[] = [];
    for (const q of ids) {
      const question = data.queries.get(q)!;
      const gold = (data.answers.get(q) ?? []).map(normaliseAnswer).filter(Boolean);
      // The answerer alone, on the context retrieval gives it (no gate).
      const { hits } = await stack.search.search(identity, {
        queryText: question,
        topK: 8,
        mode: 'hybrid',
        filters: {},
        maxChunksPerSource: 3,
      });
      const text = normaliseAnswer(
        extractiveAnswer(question, buildContext(hits, tokens), {
          maxSentences,
          minRelativeScore: 0.8,
        }),
      );
      if (gold.some((g) => text.includes(g))) containsGold += 1;
      // The whole use case, as POST /answer runs it without an LLM.
      const t0 = performance.now();
      const result = await answering.answer(identity, {
        queryText: question,
        filters: {},
        useMemory: false,
        memory: { limit: 5, tokenBudget: 1000 },
        maxTokens: 512,
        temperature: 0,
        debug: false,
      });
      latencies.push(performance.now() - t0);
      if (result.answer.confidence === 'low') gatedLow += 1;
      if (gold.some((g) => normaliseAnswer(result.answer.text).includes(g)))
        pipelineContainsGold += 1;
    }
    const report = {
      questions: ids.length,
      maxSentences,
      extractiveGoldSpanRate: containsGold / ids.length,
      pipelineGoldSpanRate: pipelineContainsGold / ids.length,
      gatedLowRate: gatedLow / ids.length,
      answerLatencyMs: { p50: percentile(latencies, 0.5), p95: percentile(latencies, 0.95) },
    };
    console.log(
      values.json
        ? JSON.stringify(report)
        : [
            `extractive answers on ${data.name}: ${ids.length} questions, up to ${maxSentences} sentences`,
            `  answer contains a gold span: ${(report.extractiveGoldSpanRate * 100).toFixed(1)} % (answerer on retrieved context)`,
            `  through the whole pipeline (gate included): ${(report.pipelineGoldSpanRate * 100).toFixed(1)} %, gated low ${(report.gatedLowRate * 100).toFixed(1)} %`,
            `  /answer without an LLM: p50 ${report.answerLatencyMs.p50.toFixed(0)} ms, p95 ${report.answerLatencyMs.p95.toFixed(0)} ms (embedding, retrieval, gate, extraction, storage)`,
          ].join('\n'),
    );
    return 0;
  } finally {
    await stack.stop();
  }
}
