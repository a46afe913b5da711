/**
 * The offline answerer, used when no LLM is configured: it picks the sentences of the context
 * that best answer the question and returns them verbatim with their citation markers. Scoring:
 * idf-weighted overlap of the question's content words with the sentence (idf over the
 * context's sentences), a bonus for the sentence's neighbourhood matching too, and a small prior
 * for sources retrieval ranked higher. It never writes text that is not in the documents.
 */
import type { ContextBlock } from './context';
import { contentWords, sentences } from './text';

export const EXTRACTIVE_MODEL_ID = 'extractive';

export interface ExtractiveOptions {
  /** Sentences in the answer. */
  readonly maxSentences: number;
  /** A sentence after the best one is kept only when it scores at least this share of the best. */
  readonly minRelativeScore: number;
}

interface Candidate {
  readonly block: ContextBlock;
  readonly text: string;
  readonly words: string[];
  readonly order: number;
  score: number;
}

export function extractiveAnswer(
  question: string,
  blocks: readonly ContextBlock[],
  options: ExtractiveOptions = { maxSentences: 2, minRelativeScore: 0.8 },
): string {
  const candidates: Candidate[] = [];
  let order = 0;
  for (const block of blocks) {
    for (const p of block.passages) {
      for (const s of sentences(p.text)) {
        // Headings and fragments carry no answer.
        if (s.text.length < 20) continue;
        candidates.push({
          block,
          text: s.text,
          words: contentWords(s.text),
          order: order++,
          score: 0,
        });
      }
    }
  }
  if (candidates.length === 0) return '';
  const df = new Map<string, number>();
  for (const c of candidates) for (const w of new Set(c.words)) df.set(w, (df.get(w) ?? 0) + 1);
  const idf = (w: string) => Math.log(1 + (candidates.length + 0.5) / ((df.get(w) ?? 0) + 0.5));
  const q = [...new Set(contentWords(question))];
  const qWeight = q.reduce((s, w) => s + idf(w), 0) || 1;
  for (const c of candidates) {
    const words = new Set(c.words);
    const matched = q.filter((w) => words.has(w)).reduce((s, w) => s + idf(w), 0) / qWeight;
    // A question's words that a sentence does not contain are often in the sentence just before.
    const prev = candidates[c.order - 1];
    const context = prev && prev.block === c.block ? new Set(prev.words) : new Set<string>();
    const near =
      q.filter((w) => !words.has(w) && context.has(w)).reduce((s, w) => s + idf(w), 0) / qWeight;
    c.score =
      matched +
      0.25 * near -
      0.02 * (c.block.index - 1) -
      (0.002 * Math.min(c.words.length, 60)) / 6;
  }
  const ranked = [...candidates].sort((a, b) => b.score - a.score);
  const best = ranked[0]!.score;
  // Further sentences only when they answer nearly as well as the best one.
  const chosen = ranked
    .slice(0, options.maxSentences)
    .filter((c, i) => i === 0 || c.score >= best * options.minRelativeScore);
  // Present them in document order within a source, best source first.
  chosen.sort((a, b) => a.block.index - b.block.index || a.order - b.order);
  // A sentence wrapped over lines in its document reads as one line in the answer.
  return chosen.map((c) => `${c.text.replace(/\s*\n\s*/g, ' ')} [${c.block.index}]`).join(' ');
}
