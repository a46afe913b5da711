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
 *   sample and the rates reported on the other half. The report ends with how well each signal a
 *   gate can read separates the natural sets' answerable questions from their unanswerable ones
 *   (../evaluation/separation.ts).
 * - `groundwork eval-answers <dataset-dir>`: how often the extractive answer contains a gold
 *   span, and /api/rag/answer latency without an LLM (p50/p95), through the real answer use case.
 */
import { parseArgs } from 'node:util';
import { createTokenCounter } from '../../lambdas/adapters/tokenizer/gpt-token-counter';
import { createPromptRepository } from '../../lambdas/adapters/postgres/conversation-repository';
import { createAnswering } from '../../lambdas/core/answer/answer';
import {
  BACKGROUND_TEXTS,
  backgroundStats,
  type BackgroundStats,
} from '../../lambdas/core/answer/background';
import {
  assessConfidence,
  DEFAULT_CALIBRATION,
  gateEvidence,
  type ConfidenceCalibration,
} from '../../lambdas/core/answer/confidence';
import { CALIBRATIONS } from '../../lambdas/core/answer/calibrations';
import { buildContext } from '../../lambdas/core/answer/context';
import { extractiveAnswer, MIN_RELATIVE_SCORE } from '../../lambdas/core/answer/extractive';
import type { SearchHit } from '../../lambdas/core/retrieval/types';
import type { SearchFilters } from '../../lambdas/core/retrieval/filters';
import { sampleIds, type BeirDataset } from '../evaluation/beir';
import {
  emptyTally,
  holdsFact,
  loadNaturalSets,
  naturalCorpus,
  normaliseAnswer,
  type NaturalQuestion,
  type NaturalSet,
  type NaturalTally,
  type Split,
  tally,
} from '../evaluation/natural';
import {
  questionSignals,
  separationReport,
  SIGNALS,
  type SeparationReport,
} from '../evaluation/separation';
import type { LocalStack } from '../stack';
import {
  corpusIdOf,
  evalModelsFromEnv,
  groupOf,
  ingestionFromArgs,
  INGESTION_ARGS,
  loadCorpus,
  openEvalIndex,
} from './eval';
import type { LocalEnv } from '../config';

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

type GateCase = keyof Pair;
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

/** Questions outside SQuAD's four cases, e.g. one natural set's answerable questions. */
export interface GateGroup {
  readonly name: string;
  /** Whether the right level is medium/high (the corpus answers) or low. */
  readonly wantsAnswer: boolean;
  readonly hits: readonly Hits[];
}

export interface FitOptions {
  /** Evidence floors tried; `[0]` fits the plain mean of the top 5. Default 0 to 1 by 0.01. */
  readonly floors?: readonly number[];
  /** The cases whose worst rate is maximised. Default all four. */
  readonly cases?: readonly GateCase[];
  /** Further groups whose rates count in the worst rate too (the natural sets' fit split). */
  readonly groups?: readonly GateGroup[];
}

/** Per group, the share of its questions the gate gets right. */
export function groupRates(
  groups: readonly GateGroup[],
  calibration: ConfidenceCalibration,
): Record<string, number> {
  const rates: Record<string, number> = {};
  for (const g of groups)
    rates[g.name] =
      g.hits.filter((h) => (assessConfidence(h, calibration).level !== 'low') === g.wantsAnswer)
        .length / Math.max(g.hits.length, 1);
  return rates;
}

/**
 * Fits the cosine weight (0 to 1 by 0.05), the evidence floor and the medium threshold (0 to 1
 * by 0.001) to maximise the worst of the rates of the cases and groups, ties going to the larger
 * sum of them. High is the score that at most 2 % of the questions whose article was removed
 * reach.
 */
export function fitCalibration(
  pairs: readonly Pair[],
  options: FitOptions = {},
): { calibration: ConfidenceCalibration; fit: GateRates } {
  const floors = options.floors ?? Array.from({ length: 101 }, (_, i) => i / 100);
  const objective = new Set(options.cases ?? CASES);
  const columns = [
    ...CASES.map((c) => ({
      hits: pairs.map((p) => p[c]),
      wantsAnswer: WANTS_ANSWER[c],
      counts: objective.has(c),
    })),
    ...(options.groups ?? []).map((g) => ({ ...g, counts: true })),
  ].filter((col) => col.hits.length > 0);
  const absentColumn = CASES.indexOf('absent');
  let best: { worst: number; sum: number; calibration: ConfidenceCalibration } | null = null;
  for (let wi = 0; wi <= 20; wi++) {
    const cosineWeight = wi / 20;
    for (const evidenceFloor of floors) {
      const probe = { cosineWeight, evidenceFloor, high: 2, medium: 2 };
      // The gated score of each question, ascending; no evidence can never pass a threshold.
      const scores = columns.map((col) =>
        col.hits
          .map((h) => {
            const a = assessConfidence(h, probe);
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
      const below = columns.map(() => 0); // per column, how many scores are below the threshold
      for (const ti of [...steps].sort((a, b) => a - b)) {
        const t = ti / 1000;
        let worst = 1;
        let sum = 0;
        columns.forEach((col, k) => {
          const sorted = scores[k]!;
          const n = sorted.length;
          while (below[k]! < n && sorted[below[k]!]! < t) below[k]! += 1;
          if (!col.counts) return;
          const right = (col.wantsAnswer ? n - below[k]! : below[k]!) / n;
          worst = Math.min(worst, right);
          sum += right;
        });
        if (!best || worst > best.worst || (worst === best.worst && sum > best.sum)) {
          const absent = scores[absentColumn] ?? [];
          const high = Math.max(t, absent[Math.floor(absent.length * 0.98)] ?? t);
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
async function collectPairs(
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
  const backgroundVectors = await stack.embedder.embed(BACKGROUND_TEXTS);
  for (let i = 0; i < ids.length; i += 32) {
    const batch = ids.slice(i, i + 32);
    const vectors = await stack.embedder.embed(
      batch.map((q) => data.queries.get(q)!),
      'query',
    );
    for (let j = 0; j < batch.length; j++) {
      const q = batch[j]!;
      const question = data.queries.get(q)!;
      const background = backgroundStats(vectors[j]!, backgroundVectors);
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
        gateEvidence(
          question,
          (
            await stack.search.searchWithEmbedding(
              identity,
              { queryText: question, topK: 8, mode: 'hybrid', maxChunksPerSource: 3, filters },
              vectors[j]!,
            )
          ).hits,
          background,
        );
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

/** The tenant a natural set is indexed under, next to the SQuAD index. */
const naturalTenant = (set: NaturalSet) => `natural-${set.name}`.slice(0, 60);

/** Indexes each natural set's documents in a tenant of its own (unchanged ones cost nothing). */
async function indexNaturalSets(stack: LocalStack, sets: readonly NaturalSet[]): Promise<void> {
  for (const set of sets)
    await loadCorpus(stack, await naturalCorpus(set), naturalTenant(set), false);
}

/**
 * A natural question with the gate's evidence from its retrieval (as the answer use case runs it)
 * and the extractive answer on that retrieval with the gate left out.
 */
interface NaturalProbe {
  readonly question: NaturalQuestion;
  readonly evidence: Hits;
  readonly ungated: string;
  /** The retrieval and the question's background, for the signals of ../evaluation/separation.ts. */
  readonly hits: readonly SearchHit[];
  readonly background: BackgroundStats;
}

async function collectNatural(
  stack: LocalStack,
  sets: readonly NaturalSet[],
): Promise<NaturalProbe[]> {
  const backgroundVectors = await stack.embedder.embed(BACKGROUND_TEXTS);
  const tokens = createTokenCounter();
  const probes: NaturalProbe[] = [];
  for (const set of sets) {
    const identity = { tenantId: naturalTenant(set), userId: 'calibrate' };
    const vectors = await stack.embedder.embed(
      set.questions.map((q) => q.question),
      'query',
    );
    for (const [i, q] of set.questions.entries()) {
      const { hits } = await stack.search.searchWithEmbedding(
        identity,
        { queryText: q.question, topK: 8, mode: 'hybrid', maxChunksPerSource: 3, filters: {} },
        vectors[i]!,
      );
      const background = backgroundStats(vectors[i]!, backgroundVectors);
      probes.push({
        question: q,
        evidence: gateEvidence(q.question, hits, background),
        ungated: extractiveAnswer(q.question, buildContext(hits, tokens)),
        hits,
        background,
      });
    }
  }
  return probes;
}

/** The natural questions of a split as two fit groups: answerable and unanswerable. */
function naturalGroups(probes: readonly NaturalProbe[], split: Split): GateGroup[] {
  const of = (answerable: boolean) =>
    probes
      .filter((p) => p.question.split === split && (p.question.facts !== null) === answerable)
      .map((p) => p.evidence);
  return [
    { name: 'natural answerable', wantsAnswer: true, hits: of(true) },
    { name: 'natural unanswerable', wantsAnswer: false, hits: of(false) },
  ];
}

type Answering = ReturnType<typeof createAnswering>;
type Identity = { readonly tenantId: string; readonly userId: string };

/** A question asked as POST /api/rag/answer asks it without an LLM (no memory, no debug). */
function askWithoutLlm(answering: Answering, identity: Identity, question: string) {
  return answering.answer(identity, {
    queryText: question,
    filters: {},
    useMemory: false,
    memory: { limit: 5, tokenBudget: 1000 },
    maxTokens: 512,
    temperature: 0,
    debug: false,
  });
}

/**
 * Per set and split, each question asked through the answer use case (no LLM) with a calibration;
 * the answer gate aside is the probe's, which no calibration changes.
 */
async function naturalAnswerRates(
  stack: LocalStack,
  sets: readonly NaturalSet[],
  probes: readonly NaturalProbe[],
  calibrationByModel: Readonly<Record<string, ConfidenceCalibration>>,
): Promise<Record<string, Record<Split, NaturalTally>>> {
  const ungated = new Map(probes.map((p) => [p.question, p.ungated]));
  const answering = createAnswering({
    search: stack.search,
    embedder: stack.embedder,
    tokens: createTokenCounter(),
    conversations: stack.conversations,
    prompts: createPromptRepository(stack.db),
    llm: null,
    settings: { calibrationByModel },
  });
  const out: Record<string, Record<Split, NaturalTally>> = {};
  for (const set of sets) {
    const identity = { tenantId: naturalTenant(set), userId: 'calibrate' };
    const tallies = { fit: emptyTally(), heldout: emptyTally() };
    for (const q of set.questions) {
      const result = await askWithoutLlm(answering, identity, q.question);
      tally(tallies[q.split], q, {
        answered: result.answer.confidence !== 'low',
        text: result.answer.text,
        ungated: ungated.get(q) ?? '',
      });
    }
    out[set.name] = tallies;
  }
  return out;
}

/** The natural rates as lines: per set and split, answered with the fact and refused. */
function describeNatural(rates: Record<string, Record<Split, NaturalTally>>): string[] {
  const pct = (k: number, n: number) => `${k}/${n} (${((k / Math.max(n, 1)) * 100).toFixed(1)} %)`;
  const total = (split: Split) =>
    Object.values(rates).reduce((t, r) => {
      const x = r[split];
      return {
        answerable: t.answerable + x.answerable,
        answeredWithFact: t.answeredWithFact + x.answeredWithFact,
        factInAnswer: t.factInAnswer + x.factInAnswer,
        unanswerable: t.unanswerable + x.unanswerable,
        refused: t.refused + x.refused,
      };
    }, emptyTally());
  const rows = [
    ...Object.entries(rates),
    ['all sets', { fit: total('fit'), heldout: total('heldout') }] as const,
  ];
  return rows.flatMap(([name, r]) =>
    (['fit', 'heldout'] as const).map(
      (split) =>
        `    ${name} ${split}: answered with the fact ${pct(r[split].answeredWithFact, r[split].answerable)}, unanswerable refused ${pct(r[split].refused, r[split].unanswerable)}; the answer holds the fact, gate aside, ${pct(r[split].factInAnswer, r[split].answerable)}`,
    ),
  );
}

/** The separation report as lines: each signal's AUC, then the combination's. */
function describeSeparation(r: SeparationReport): string[] {
  const auc = (k: keyof SeparationReport['auc']) =>
    `${r.auc[k].fit.toFixed(3)} / ${r.auc[k].heldout.toFixed(3)}`;
  const t = r.atTargetRefusal;
  return [
    `separation of the natural sets' answerable questions (answer holding the fact) from unanswerable ones, area under the ROC curve, fit / held out:`,
    `  ${SIGNALS.map((k) => `${k} ${auc(k)}`).join(', ')}`,
    `  all, a logistic regression fitted on the fit split: ${auc('combined')}; held out at its score refusing 90 % of the fit split's unanswerable questions: answered with the fact ${t.answeredWithFact}/${t.answerable}, unanswerable refused ${t.refused}/${t.unanswerable}`,
  ];
}

export async function calibrateCommand(
  args: string[],
  env: LocalEnv & { dataDir: string },
): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      sample: { type: 'string', default: '1000' },
      natural: { type: 'string', default: 'eval/natural' },
      json: { type: 'boolean', default: false },
      ...INGESTION_ARGS,
    },
  });
  if (!positionals[0]) {
    console.error(
      'Usage: groundwork calibrate <squad-dir> [--sample N] [--natural <sets-dir>] [--chunk-tokens N [--overlap-tokens M]] [--embed-window N] [--json]',
    );
    return 2;
  }
  const ingestion = ingestionFromArgs(values);
  const { stack, data, tenant, close } = await openEvalIndex({
    datasetDir: positionals[0],
    dataDir: env.dataDir,
    ...(Object.keys(ingestion).length ? { ingestion } : {}),
    models: await evalModelsFromEnv(env),
    progress: process.stderr.isTTY === true,
  });
  try {
    const sets = await loadNaturalSets(values.natural);
    await indexNaturalSets(stack, sets);
    const probes = await collectNatural(stack, sets);
    const ids = sampleIds(
      [...data.qrels.keys()].filter((q) => data.queries.has(q)),
      Number(values.sample),
      SEED,
    );
    const pairs = await collectPairs(stack, data, tenant, ids);
    const half = Math.floor(pairs.length / 2);
    const fitPairs = pairs.slice(0, half);
    const heldOutPairs = pairs.slice(half);
    const fitted = fitCalibration(fitPairs, { groups: naturalGroups(probes, 'fit') });
    const modelId = stack.embedder.modelId;
    const natural = await naturalAnswerRates(stack, sets, probes, {
      [modelId]: fitted.calibration,
    });
    const naturalUncalibrated = await naturalAnswerRates(stack, sets, probes, {});
    // The calibration the product ships for this model, on the same questions, so that a refit
    // is adopted only when it does better.
    const shipped = CALIBRATIONS[modelId] ?? null;
    const naturalShipped = shipped
      ? await naturalAnswerRates(stack, sets, probes, { [modelId]: shipped })
      : null;
    // The previous method, for comparison: the plain mean of the top 5, fitted on the large
    // corpus only.
    const plain = fitCalibration(fitPairs, { floors: [0], cases: ['present', 'absent'] });
    // How well the signals an offline gate can read separate the natural questions, on the gate
    // the product ships for the model (else this fit).
    const separation = separationReport(
      probes.map((p) => ({
        split: p.question.split,
        answerable: p.question.facts !== null,
        holdsFact: p.question.facts !== null && holdsFact(p.ungated, p.question.facts),
        signals: questionSignals(
          p.question.question,
          p.hits,
          p.background,
          shipped ?? fitted.calibration,
          p.ungated,
        ),
      })),
    );
    const report = {
      model: stack.embedder.modelId,
      dataset: data.name,
      questions: pairs.length,
      fittedOn: half,
      seed: SEED,
      calibration: fitted.calibration,
      fitRates: fitted.fit,
      heldOutRates: gateRates(heldOutPairs, fitted.calibration),
      natural,
      shipped: shipped && {
        calibration: shipped,
        fitRates: gateRates(fitPairs, shipped),
        heldOutRates: gateRates(heldOutPairs, shipped),
        natural: naturalShipped,
      },
      previousMethod: {
        calibration: plain.calibration,
        fitRates: plain.fit,
        heldOutRates: gateRates(heldOutPairs, plain.calibration),
      },
      designDefaults: {
        calibration: DEFAULT_CALIBRATION,
        heldOutRates: gateRates(heldOutPairs, DEFAULT_CALIBRATION),
        natural: naturalUncalibrated,
      },
      separation,
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
            `  natural sets (${values.natural}), through the answer use case without an LLM:`,
            ...describeNatural(natural),
            ...(report.shipped
              ? [
                  `shipped calibration (CALIBRATIONS): ${describe(report.shipped.calibration)}`,
                  `  fitted half: ${rates(report.shipped.fitRates)}`,
                  `  held out: ${rates(report.shipped.heldOutRates)}`,
                  `  natural sets:`,
                  ...describeNatural(report.shipped.natural!),
                ]
              : [`no shipped calibration for ${modelId}`]),
            `previous method (plain mean of the top 5, fitted on SQuAD present/absent only): ${describe(report.previousMethod.calibration)}`,
            `  fitted:   ${rates(report.previousMethod.fitRates)}`,
            `  held out: ${rates(report.previousMethod.heldOutRates)}`,
            `uncalibrated (the defaults, as for a model without a calibration): ${describe(DEFAULT_CALIBRATION)}`,
            `  held out: ${rates(report.designDefaults.heldOutRates)}`,
            `  natural sets:`,
            ...describeNatural(naturalUncalibrated),
            ...describeSeparation(separation),
            `(present: gated medium/high with the gold paragraph in the index; absent: gated low with its article removed; small: a ${SMALL_CORPUS}-document corpus with and without the gold paragraph)`,
          ].join('\n'),
    );
    return 0;
  } finally {
    await close();
  }
}

export async function evalAnswersCommand(
  args: string[],
  env: LocalEnv & { dataDir: string },
): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      sample: { type: 'string', default: '1000' },
      seed: { type: 'string', default: '11' },
      sentences: { type: 'string', default: '2' },
      json: { type: 'boolean', default: false },
    },
  });
  if (!positionals[0]) {
    console.error('Usage: groundwork eval-answers <squad-dir> [--sample N] [--seed N] [--json]');
    return 2;
  }
  const { stack, data, tenant, close } = await openEvalIndex({
    datasetDir: positionals[0],
    dataDir: env.dataDir,
    models: await evalModelsFromEnv(env),
    progress: process.stderr.isTTY === true,
  });
  try {
    const ids = sampleIds(
      [...data.qrels.keys()].filter((q) => data.answers.has(q)),
      Number(values.sample),
      Number(values.seed),
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
          minRelativeScore: MIN_RELATIVE_SCORE,
        }),
      );
      if (gold.some((g) => text.includes(g))) containsGold += 1;
      // The whole use case, as POST /api/rag/answer runs it without an LLM.
      const t0 = performance.now();
      const result = await askWithoutLlm(answering, identity, question);
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
            `extractive answers on ${data.name}: ${ids.length} questions (seed ${values.seed}), up to ${maxSentences} sentences`,
            `  answer contains a gold span: ${(report.extractiveGoldSpanRate * 100).toFixed(1)} % (answerer on retrieved context)`,
            `  through the whole pipeline (gate included): ${(report.pipelineGoldSpanRate * 100).toFixed(1)} %, gated low ${(report.gatedLowRate * 100).toFixed(1)} %`,
            `  /api/rag/answer without an LLM: p50 ${report.answerLatencyMs.p50.toFixed(0)} ms, p95 ${report.answerLatencyMs.p95.toFixed(0)} ms (embedding, retrieval, gate, extraction, storage)`,
          ].join('\n'),
    );
    return 0;
  } finally {
    await close();
  }
}
