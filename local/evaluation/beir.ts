/** Reads a dataset in BEIR format: corpus.jsonl, queries.jsonl, qrels.tsv (and SQuAD's answers.jsonl). */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Judgements } from '../../lambdas/core/evaluation/metrics';

export interface BeirDataset {
  readonly name: string;
  readonly corpus: { id: string; title: string; text: string }[];
  readonly queries: Map<string, string>;
  readonly qrels: Map<string, Judgements>;
  /** Gold answer spans per query (SQuAD), when the dataset has them. */
  readonly answers: Map<string, string[]>;
}

async function jsonl<T>(file: string): Promise<T[]> {
  const text = await readFile(file, 'utf8');
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as T);
}

export async function loadBeir(dir: string): Promise<BeirDataset> {
  for (const f of ['corpus.jsonl', 'queries.jsonl', 'qrels.tsv']) {
    if (!existsSync(path.join(dir, f)))
      throw new Error(`${dir} is not a BEIR dataset: ${f} is missing`);
  }
  const corpus = (
    await jsonl<{ _id: string; title?: string; text: string }>(path.join(dir, 'corpus.jsonl'))
  ).map((d) => ({
    id: String(d._id),
    title: d.title ?? '',
    text: d.text,
  }));
  const queries = new Map(
    (await jsonl<{ _id: string; text: string }>(path.join(dir, 'queries.jsonl'))).map((q) => [
      String(q._id),
      q.text,
    ]),
  );
  const qrels = new Map<string, Map<string, number>>();
  const lines = (await readFile(path.join(dir, 'qrels.tsv'), 'utf8')).split('\n').slice(1);
  for (const line of lines) {
    const [q, d, s] = line.split('\t');
    if (!q || !d || s === undefined) continue;
    if (!qrels.has(q)) qrels.set(q, new Map());
    qrels.get(q)!.set(d, Number(s));
  }
  const answers = new Map<string, string[]>();
  const answersFile = path.join(dir, 'answers.jsonl');
  if (existsSync(answersFile)) {
    for (const a of await jsonl<{ _id: string; answers: string[] }>(answersFile))
      answers.set(String(a._id), a.answers);
  }
  return { name: path.basename(path.resolve(dir)), corpus, queries, qrels, answers };
}

/** A deterministic sample of ids (seeded shuffle), so reported figures can be reproduced. */
export function sampleIds(ids: readonly string[], n: number | undefined, seed = 1): string[] {
  if (n === undefined || n >= ids.length) return [...ids];
  const out = [...ids];
  let s = seed;
  const rand = () => {
    s = (s * 1664525 + 1013904223) % 4294967296;
    return s / 4294967296;
  };
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out.slice(0, n);
}
