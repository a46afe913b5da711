/**
 * Maps an answer's citation markers ([1], [2][3], [1, 2]) back to the context's sources and to
 * the sentences of the cited passages that support the citing sentence, as offsets into the
 * source text. Deduplicated by source, at most 5, in order of first mention.
 */
import type { ContextBlock } from './context';
import type { StoredCitation } from './conversations';
import { contentWords, sentences } from './text';

const MAX_CITATIONS = 5;

export interface Citation {
  readonly block: ContextBlock;
  /** Offsets into the source's extracted text of the supporting sentences. */
  readonly sentences: { start: number; end: number }[];
}

const MARKER = /\[(\d+(?:\s*,\s*\d+)*)\]/g;

/** The block numbers cited in `text`, in order of first mention. */
export function citedIndexes(text: string): number[] {
  const seen: number[] = [];
  for (const m of text.matchAll(MARKER)) {
    for (const n of m[1]!.split(',').map((x) => Number(x.trim())))
      if (!seen.includes(n)) seen.push(n);
  }
  return seen;
}

function overlap(a: readonly string[], b: ReadonlySet<string>): number {
  if (a.length === 0) return 0;
  return a.filter((w) => b.has(w)).length / a.length;
}

/** Sentences of the block that best support `claim` (at least a third of its words shared). */
function supportingSentences(block: ContextBlock, claim: string): { start: number; end: number }[] {
  const claimWords = contentWords(claim.replace(MARKER, ''));
  const scored: { start: number; end: number; score: number }[] = [];
  for (const p of block.passages) {
    for (const s of sentences(p.text)) {
      const score = overlap(claimWords, new Set(contentWords(s.text)));
      scored.push({ start: p.start + s.start, end: p.start + s.end, score });
    }
  }
  scored.sort((a, b) => b.score - a.score);
  const best = scored.filter((s) => s.score >= 1 / 3).slice(0, 2);
  return best.map(({ start, end }) => ({ start, end })).sort((a, b) => a.start - b.start);
}

export function mapCitations(answer: string, blocks: readonly ContextBlock[]): Citation[] {
  const byIndex = new Map(blocks.map((b) => [b.index, b]));
  const result = new Map<string, Citation>();
  let previous = '';
  for (const s of sentences(answer)) {
    // A marker written after the full stop ("… per night. [1]") is a sentence of its own: it
    // cites the sentence before it.
    const bare = contentWords(s.text.replace(MARKER, '')).length === 0;
    const claim = bare ? `${previous} ${s.text}` : s.text;
    previous = s.text;
    for (const n of citedIndexes(s.text)) {
      const block = byIndex.get(n);
      if (!block) continue; // a marker for a block that does not exist is ignored, not invented
      const existing = result.get(block.documentId);
      if (!existing && result.size >= MAX_CITATIONS) continue;
      const found = supportingSentences(block, claim);
      if (existing) {
        for (const f of found)
          if (!existing.sentences.some((e) => e.start === f.start)) existing.sentences.push(f);
      } else {
        result.set(block.documentId, { block, sentences: found });
      }
    }
  }
  for (const c of result.values()) c.sentences.sort((a, b) => a.start - b.start);
  return [...result.values()];
}

/**
 * The excerpt a citation shows (seed 001: "relevant excerpt from chunk"): from its first
 * supporting sentence, or from the start of its first passage when no sentence was matched.
 */
function snippetOf(citation: Citation, snippetLength: number): string {
  const { passages } = citation.block;
  const first = citation.sentences[0];
  const passage = first && passages.find((p) => p.start <= first.start && first.start < p.end);
  if (!first || !passage) return (passages[0]?.text ?? '').slice(0, snippetLength);
  return passage.text.slice(first.start - passage.start).slice(0, snippetLength);
}

/** The citation as an answer stores and returns it: the source, a snippet and the sentences. */
export function storedCitation(citation: Citation, snippetLength: number): StoredCitation {
  const { block } = citation;
  return {
    source_id: block.documentId,
    source_type: block.sourceType,
    source_title: block.title,
    source_uri: block.sourceUri,
    snippet: snippetOf(citation, snippetLength),
    relevance_score: Math.round(block.score * 10000) / 10000,
    meta: block.metadata,
    sentences: citation.sentences,
  };
}

/** The closest passages, as the citations of an answer that does not cite its own. */
export function closestSources(blocks: readonly ContextBlock[]): Citation[] {
  return blocks.slice(0, MAX_CITATIONS).map((block) => ({ block, sentences: [] }));
}
