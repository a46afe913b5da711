/**
 * Builds the answer's context from retrieved chunks: grouped by source (at most 5 sources, at
 * most 3 chunks each, in retrieval order of the sources), adjacent chunks of one source merged
 * in document order, and a token budget across everything.
 */
import type { TokenCounter } from '../ports';
import type { SearchHit } from '../retrieval/types';

export interface ContextSettings {
  readonly maxSources: number;
  readonly maxChunksPerSource: number;
  readonly tokenBudget: number;
}

export const DEFAULT_CONTEXT_SETTINGS: ContextSettings = {
  maxSources: 5,
  maxChunksPerSource: 3,
  tokenBudget: 3000,
};

/** A run of one source's text: one chunk, or adjacent chunks merged. */
export interface ContextPassage {
  readonly text: string;
  /** Offsets into the source's extracted text. */
  readonly start: number;
  readonly end: number;
  readonly chunkIds: readonly string[];
}

export interface ContextBlock {
  /** 1-based number the prompt and the citations use. */
  readonly index: number;
  readonly documentId: string;
  readonly title: string | null;
  readonly sourceUri: string;
  readonly sourceType: string;
  readonly metadata: Readonly<Record<string, unknown>>;
  readonly passages: readonly ContextPassage[];
  /** Best cosine score among the source's chunks. */
  readonly score: number;
  readonly tokens: number;
}

/**
 * A document's own bracketed numbers ("see [2]", "[99]") read as our citation markers once quoted
 * in an answer: they become parentheses. Length is kept, so offsets into the source still hold.
 */
function neutraliseCitationMarkers(text: string): string {
  return text.replace(/\[(\s*\d+(?:\s*,\s*\d+)*\s*)\]/g, '($1)');
}

/** Merges chunks of one source that touch or overlap (by offsets), in document order. */
export function mergeAdjacent(chunks: readonly SearchHit[]): ContextPassage[] {
  const sorted = [...chunks].sort((a, b) => a.startOffset - b.startOffset);
  const out: { text: string; start: number; end: number; chunkIds: string[] }[] = [];
  for (const c of sorted) {
    const last = out[out.length - 1];
    if (last && c.startOffset <= last.end) {
      if (c.endOffset > last.end) {
        last.text += c.text.slice(last.end - c.startOffset);
        last.end = c.endOffset;
      }
      last.chunkIds.push(c.chunkId);
    } else {
      out.push({ text: c.text, start: c.startOffset, end: c.endOffset, chunkIds: [c.chunkId] });
    }
  }
  return out.map((p) => ({ ...p, text: neutraliseCitationMarkers(p.text) }));
}

export function buildContext(
  hits: readonly SearchHit[],
  tokens: TokenCounter,
  settings: ContextSettings = DEFAULT_CONTEXT_SETTINGS,
): ContextBlock[] {
  const bySource = new Map<string, SearchHit[]>();
  for (const h of hits) {
    const list = bySource.get(h.documentId) ?? [];
    if (list.some((x) => x.chunkId === h.chunkId)) continue;
    if (!bySource.has(h.documentId)) {
      if (bySource.size >= settings.maxSources) continue;
      bySource.set(h.documentId, list);
    }
    if (list.length < settings.maxChunksPerSource) list.push(h);
  }
  const blocks: ContextBlock[] = [];
  let budget = settings.tokenBudget;
  for (const list of bySource.values()) {
    if (budget <= 0) break;
    // Keep the best chunks that fit the remaining budget, then merge them in document order.
    const kept: SearchHit[] = [];
    for (const h of list) {
      const t = tokens.count(h.text);
      if (t > budget && kept.length > 0) continue;
      if (t > budget) {
        // The best chunk alone is larger than what is left: cut it at a word boundary.
        const ratio = budget / t;
        const cut = h.text.slice(0, Math.floor(h.text.length * ratio)).replace(/\s+\S*$/, '');
        if (cut.length === 0) continue;
        kept.push({ ...h, text: cut, endOffset: h.startOffset + cut.length });
        budget = 0;
        break;
      }
      kept.push(h);
      budget -= t;
    }
    if (kept.length === 0) continue;
    const first = list[0]!;
    const passages = mergeAdjacent(kept);
    blocks.push({
      index: blocks.length + 1,
      documentId: first.documentId,
      title: first.title,
      sourceUri: first.sourceUri,
      sourceType: first.sourceType,
      metadata: first.metadata,
      passages,
      score: Math.max(...list.map((h) => h.score)),
      tokens: passages.reduce((sum, p) => sum + tokens.count(p.text), 0),
    });
  }
  return blocks;
}
