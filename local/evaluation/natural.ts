/**
 * The natural question sets (eval/natural): small corpora with questions phrased as people ask
 * them, some answered by the text and some not. Each set is a folder with `questions.jsonl`
 * (`{"q": "...", "a": ["fact", ...]}`, or `"a": null` for a question the corpus does not answer)
 * and its documents in `docs/`, or a `corpus.json` naming them: `{"docs": "<folder>"}`, or
 * `{"files": {"<name>.md": "<path>"}}` for files that live elsewhere under names of their own (the
 * README of each of several packages). Paths are relative to the set's folder.
 *
 * The split is fixed by position: within each set, the answerable questions and the unanswerable
 * ones are each numbered in file order from 0; even numbers are the fit split, odd numbers are
 * held out.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { BeirDataset } from './beir';

export type Split = 'fit' | 'heldout';

export interface NaturalQuestion {
  readonly set: string;
  readonly question: string;
  /** Facts of which the answer must contain one (normalised), or null: not answered by the corpus. */
  readonly facts: readonly string[] | null;
  readonly split: Split;
}

/** One document of a set: its name in the corpus (`.md` or `.txt`) and where it is read from. */
interface NaturalDocument {
  readonly name: string;
  readonly path: string;
}

export interface NaturalSet {
  readonly name: string;
  readonly documents: readonly NaturalDocument[];
  readonly questions: readonly NaturalQuestion[];
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

/** True when the answer text holds one of the facts (both normalised). */
export function holdsFact(answer: string, facts: readonly string[]): boolean {
  const text = ` ${normaliseAnswer(answer)} `;
  return facts.some((f) => text.includes(` ${normaliseAnswer(f)} `));
}

async function loadSet(dir: string): Promise<NaturalSet> {
  const name = path.basename(dir);
  const lines = (await readFile(path.join(dir, 'questions.jsonl'), 'utf8'))
    .split('\n')
    .filter((l) => l.trim() !== '');
  const documents = await setDocuments(dir);
  let answerable = 0;
  let unanswerable = 0;
  const questions = lines.map((line, i): NaturalQuestion => {
    const row = JSON.parse(line) as { q?: unknown; a?: unknown };
    const facts = row.a;
    if (
      typeof row.q !== 'string' ||
      !(facts === null || (Array.isArray(facts) && facts.every((f) => typeof f === 'string')))
    )
      throw new Error(
        `${name}/questions.jsonl line ${i + 1}: expected {"q": string, "a": string[] | null}`,
      );
    const n = facts === null ? unanswerable++ : answerable++;
    return {
      set: name,
      question: row.q,
      facts: facts,
      split: n % 2 === 0 ? 'fit' : 'heldout',
    };
  });
  return { name, documents, questions };
}

const DOCUMENT_NAME = /\.(md|txt)$/;

/** A set's documents: `docs/`, or what its `corpus.json` names, sorted by name. */
async function setDocuments(dir: string): Promise<NaturalDocument[]> {
  const corpusFile = path.join(dir, 'corpus.json');
  const corpus = (await stat(corpusFile).catch(() => null))
    ? (JSON.parse(await readFile(corpusFile, 'utf8')) as {
        docs?: string;
        files?: Record<string, string>;
      })
    : { docs: 'docs' };
  const folder = path.resolve(dir, corpus.docs ?? 'docs');
  const documents = corpus.files
    ? Object.entries(corpus.files).map(([name, file]) => ({
        name,
        path: path.resolve(dir, file),
      }))
    : (await readdir(folder))
        .filter((f) => DOCUMENT_NAME.test(f))
        .map((f) => ({ name: f, path: path.join(folder, f) }));
  const odd = documents.find((d) => !DOCUMENT_NAME.test(d.name));
  if (odd) throw new Error(`${path.basename(dir)}: "${odd.name}" is not a .md or .txt name`);
  return documents.sort((a, b) => a.name.localeCompare(b.name));
}

/** The sets under `root` (every folder with a questions.jsonl), by name. */
export async function loadNaturalSets(root: string): Promise<NaturalSet[]> {
  const entries = await readdir(root, { withFileTypes: true });
  const sets: NaturalSet[] = [];
  for (const e of entries
    .filter((x) => x.isDirectory())
    .sort((a, b) => a.name.localeCompare(b.name))) {
    const dir = path.join(root, e.name);
    if (await stat(path.join(dir, 'questions.jsonl')).catch(() => null))
      sets.push(await loadSet(dir));
  }
  if (sets.length === 0)
    throw new Error(`${root} holds no question set (a folder with questions.jsonl)`);
  return sets;
}

/** A set's documents as a corpus `loadCorpus` indexes: id the file name without `.md`, no title. */
export async function naturalCorpus(set: NaturalSet): Promise<BeirDataset> {
  const corpus = await Promise.all(
    set.documents.map(async (d) => ({
      id: d.name.replace(DOCUMENT_NAME, ''),
      title: '',
      text: await readFile(d.path, 'utf8'),
    })),
  );
  return {
    name: set.name,
    corpus,
    queries: new Map(),
    qrels: new Map(),
    answers: new Map(),
  };
}

/** Counts of one set and split: answerable questions answered with the fact, others refused. */
export interface NaturalTally {
  answerable: number;
  answeredWithFact: number;
  /** Answerable questions whose extractive answer on the retrieved context, gate aside, holds the fact. */
  factInAnswer: number;
  unanswerable: number;
  refused: number;
}

export function emptyTally(): NaturalTally {
  return { answerable: 0, answeredWithFact: 0, factInAnswer: 0, unanswerable: 0, refused: 0 };
}

/**
 * Adds one question's outcome: `answered` is a gate of medium/high, `text` the answer, `ungated`
 * the extractive answer on the same retrieval with the gate left out.
 */
export function tally(
  t: NaturalTally,
  q: NaturalQuestion,
  outcome: { answered: boolean; text: string; ungated: string },
): void {
  if (q.facts === null) {
    t.unanswerable += 1;
    if (!outcome.answered) t.refused += 1;
  } else {
    t.answerable += 1;
    if (outcome.answered && holdsFact(outcome.text, q.facts)) t.answeredWithFact += 1;
    if (holdsFact(outcome.ungated, q.facts)) t.factInAnswer += 1;
  }
}
