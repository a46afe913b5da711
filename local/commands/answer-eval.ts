/**
 * Measurements of the answer pipeline on SQuAD (BEIR format with gold answer spans):
 *
 * - `groundwork calibrate <dataset-dir>`: calibrates the confidence gate of the configured
 *   embedding model. Each sampled question is asked twice: of the full index (its gold paragraph
 *   is there) and with its whole article excluded (a metadata filter on the article, which is
 *   retrieval over an index without it). The gate should say medium/high to the first and low to
 *   the second. The weight of cosine versus keyword coverage and the thresholds are fitted on
 *   one half of the sample and the rates reported on the other half.
 * - `groundwork eval-answers <dataset-dir>`: how often the extractive answer contains a gold
 *   span, and /answer latency without an LLM (p50/p95), through the real answer use case.
 */
import { parseArgs } from 'node:util';
import { createTokenCounter } from '../../lambdas/adapters/tokenizer/gpt-token-counter';
import { createPromptRepository } from '../../lambdas/adapters/postgres/conversation-repository';
import { createAnswering } from '../../lambdas/core/answer/answer';
import {
  assessConfidence,
  relevanceOf,
  type ConfidenceCalibration,
} from '../../lambdas/core/answer/confidence';
import { buildContext } from '../../lambdas/core/answer/context';
import { extractiveAnswer } from '../../lambdas/core/answer/extractive';
import type { SearchHit } from '../../lambdas/core/retrieval/types';
import { sampleIds } from '../evaluation/beir';
import { groupOf, openEvalIndex } from './eval';

type Pair = {
  present: Pick<SearchHit, 'score' | 'keywordCoverage'>[];
  absent: Pick<SearchHit, 'score' | 'keywordCoverage'>[];
};

/** Share of questions gated medium/high with the gold present, and low with it absent. */
export function gateRates(
  pairs: readonly Pair[],
  calibration: ConfidenceCalibration,
): { present: number; absent: number } {
  let present = 0;
  let absent = 0;
  for (const p of pairs) {
    if (assessConfidence(p.present, calibration).level !== 'low') present += 1;
    if (assessConfidence(p.absent, calibration).level === 'low') absent += 1;
  }
  return { present: present / pairs.length, absent: absent / pairs.length };
}

/** Fits cosine weight and thresholds: the medium threshold maximises the worse of the two rates. */
export function fitCalibration(
  pairs: readonly Pair[],
): ConfidenceCalibration & { fit: { present: number; absent: number } } {
  let best: (ConfidenceCalibration & { fit: { present: number; absent: number } }) | null = null;
  for (let wi = 0; wi <= 20; wi++) {
    const w = wi / 20;
    const calib = { cosineWeight: w, high: 1, medium: 0 };
    const scores = (hits: Pair['present']) => {
      const top = hits.slice(0, 5).map((h) => relevanceOf(h, calib));
      return top.length ? top.reduce((a, b) => a + b, 0) / top.length : 0;
    };
    const pres = pairs.map((p) => scores(p.present));
    const abs = pairs.map((p) => scores(p.absent));
    const candidates = [...new Set([...pres, ...abs].map((x) => Math.round(x * 1000) / 1000))].sort(
      (a, b) => a - b,
    );
    for (const t of candidates) {
      const rp = pres.filter((x) => x >= t).length / pres.length;
      const ra = abs.filter((x) => x < t).length / abs.length;
      const score = Math.min(rp, ra);
      if (!best || score > Math.min(best.fit.present, best.fit.absent)) {
        // High: where almost no answerless question (2 %) would be called high.
        const sortedAbs = [...abs].sort((a, b) => a - b);
        const high = Math.max(t, sortedAbs[Math.floor(sortedAbs.length * 0.98)] ?? t);
        best = {
          cosineWeight: w,
          medium: t,
          high: Math.round(high * 1000) / 1000,
          fit: { present: rp, absent: ra },
        };
      }
    }
  }
  return best!;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length - 1) * p))] ?? 0;
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
      7,
    );
    const pairs: Pair[] = [];
    const identity = { tenantId: tenant, userId: 'calibrate' };
    for (let i = 0; i < ids.length; i += 32) {
      const batch = ids.slice(i, i + 32);
      const vectors = await stack.embedder.embed(batch.map((q) => data.queries.get(q)!));
      for (let j = 0; j < batch.length; j++) {
        const q = batch[j]!;
        const gold = [...data.qrels.get(q)!.keys()][0]!;
        const group = groupOf(gold);
        if (group === null)
          throw new Error(
            `calibrate needs SQuAD-style corpus ids (<article>-<paragraph>); got ${gold}`,
          );
        const request = {
          queryText: data.queries.get(q)!,
          topK: 8,
          mode: 'hybrid' as const,
          maxChunksPerSource: 3,
        };
        const present = await stack.search.searchWithEmbedding(
          identity,
          { ...request, filters: {} },
          vectors[j]!,
        );
        const absent = await stack.search.searchWithEmbedding(
          identity,
          { ...request, filters: { metadata: { notEquals: { key: 'group', value: group } } } },
          vectors[j]!,
        );
        pairs.push({ present: present.hits, absent: absent.hits });
      }
    }
    const half = Math.floor(pairs.length / 2);
    const fitted = fitCalibration(pairs.slice(0, half));
    const calibration: ConfidenceCalibration = {
      cosineWeight: fitted.cosineWeight,
      high: fitted.high,
      medium: fitted.medium,
    };
    const heldOut = gateRates(pairs.slice(half), calibration);
    const defaults = gateRates(pairs.slice(half), { cosineWeight: 1, high: 0.75, medium: 0.6 });
    const report = {
      model: stack.embedder.modelId,
      questions: pairs.length,
      fittedOn: half,
      calibration,
      fitRates: fitted.fit,
      heldOutRates: heldOut,
      designDefaultRates: defaults,
    };
    console.log(
      values.json
        ? JSON.stringify(report)
        : [
            `confidence calibration for ${report.model} on ${data.name}: ${pairs.length} questions (fit on ${half}, reported on ${pairs.length - half})`,
            `  cosine weight ${calibration.cosineWeight.toFixed(2)}, medium >= ${calibration.medium}, high >= ${calibration.high}`,
            `  held out: gold present gated medium/high ${(heldOut.present * 100).toFixed(1)} %, gold absent gated low ${(heldOut.absent * 100).toFixed(1)} %`,
            `  design defaults (cosine only, 0.60 / 0.75): present ${(defaults.present * 100).toFixed(1)} %, absent ${(defaults.absent * 100).toFixed(1)} %`,
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
