/**
 * Maps an answer's citation markers ([1], [2][3], [1, 2]) back to the context's sources and to
 * the sentences of the cited passages that support the citing sentence, as offsets into the
 * source text. Deduplicated by source, at most 5, in order of first mention; each citation keeps
 * the numbers that cite it in the answer's text, which are its context blocks' numbers, not its
 * place in the list.
 */
import type { ContextBlock } from './context';
import type { StoredCitation } from './conversations';
import { contentWords, sentences } from './text';

const MAX_CITATIONS = 5;

export interface Citation {
  readonly block: ContextBlock;
  /** Offsets into the source's extracted text of the supporting sentences. */
  readonly sentences: { start: number; end: number }[];
  /** Where its snippet starts: the sentence that best supports the first claim it supports. */
  lead?: { start: number; end: number };
  /** The numbers in the answer's text that cite this source, in order of first mention. */
  readonly markers: number[];
}

const MARKER = /\[(\d+(?:\s*,\s*\d+)*)\]/g;
/** Markers that open a sentence: the segmenter puts those written after a full stop there. */
const LEADING_MARKERS = /^(?:\s*\[\d+(?:\s*,\s*\d+)*\])+/;
/** A sentence that supports a claim less than this share of the best one's support is left out. */
const SECOND_SUPPORT = 2 / 3;

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

/**
 * Sentences of the block that best support `claim`, best first: those sharing at least a third of
 * its words, at most two, the second only when it supports the claim nearly as well as the first
 * (a claim quoted from one sentence is not also supported by a neighbour sharing a few words).
 */
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
  const top = scored[0]?.score ?? 0;
  return scored
    .filter((s) => s.score >= 1 / 3 && s.score >= top * SECOND_SUPPORT)
    .slice(0, 2)
    .map(({ start, end }) => ({ start, end }));
}

/**
 * The answer's sentences as claims, each with the markers that cite it. A marker written after a
 * full stop ("… per night. [1] The hotel …") opens the next sentence as the segmenter reads it,
 * or stands alone at the end: it cites the sentence before it.
 */
function claims(answer: string): { claim: string; markers: string }[] {
  const out: { claim: string; markers: string }[] = [];
  for (const s of sentences(answer)) {
    const previous = out[out.length - 1];
    // Markers that open a sentence cite the one before only when it has none of its own: in
    // "[1] Refunds take 14 days. [2] Returns ..." each opens the sentence it cites.
    const orphan = previous !== undefined && citedIndexes(previous.markers).length === 0;
    const lead = orphan ? (LEADING_MARKERS.exec(s.text)?.[0] ?? '') : '';
    if (previous) previous.markers += lead;
    const rest = s.text.slice(lead.length);
    if (contentWords(rest.replace(MARKER, '')).length === 0) {
      if (previous) previous.markers += rest;
      else if (rest.trim()) out.push({ claim: '', markers: rest });
    } else {
      out.push({ claim: rest, markers: rest });
    }
  }
  return out;
}

export function mapCitations(answer: string, blocks: readonly ContextBlock[]): Citation[] {
  const byIndex = new Map(blocks.map((b) => [b.index, b]));
  const result = new Map<string, Citation>();
  for (const { claim, markers } of claims(answer)) {
    for (const n of citedIndexes(markers)) {
      const block = byIndex.get(n);
      if (!block) continue; // a marker for a block that does not exist is ignored, not invented
      const existing = result.get(block.documentId);
      if (!existing && result.size >= MAX_CITATIONS) continue;
      const found = supportingSentences(block, claim);
      if (existing) {
        if (!existing.markers.includes(n)) existing.markers.push(n);
        existing.lead ??= found[0];
        for (const f of found)
          if (!existing.sentences.some((e) => e.start === f.start)) existing.sentences.push(f);
      } else {
        result.set(block.documentId, {
          block,
          sentences: found,
          ...(found[0] ? { lead: found[0] } : {}),
          markers: [n],
        });
      }
    }
  }
  for (const c of result.values()) c.sentences.sort((a, b) => a.start - b.start);
  return [...result.values()];
}

/**
 * The excerpt a citation shows (seed 001: "relevant excerpt from chunk"): from the sentence that
 * best supports the first claim citing it, or from the start of its first passage when no
 * sentence was matched.
 */
function snippetOf(citation: Citation, snippetLength: number): string {
  const { passages } = citation.block;
  const lead = citation.lead;
  const passage = lead && passages.find((p) => p.start <= lead.start && lead.start < p.end);
  if (!lead || !passage) return (passages[0]?.text ?? '').slice(0, snippetLength);
  return passage.text.slice(lead.start - passage.start).slice(0, snippetLength);
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
    markers: citation.markers,
  };
}

/** The closest passages, as the citations of an answer that does not cite its own. */
export function closestSources(blocks: readonly ContextBlock[]): Citation[] {
  return blocks.slice(0, MAX_CITATIONS).map((block) => ({ block, sentences: [], markers: [] }));
}
