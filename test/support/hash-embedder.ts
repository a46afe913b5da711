/**
 * A deterministic embedder for integration tests of the pipeline around the model: vectors from
 * hashed word features (so texts sharing words are similar), and a call counter. The real
 * models have their own adapter tests.
 */
import { createHash } from 'node:crypto';
import type { Embedder } from '../../lambdas/core/ports';

export interface CountingEmbedder extends Embedder {
  calls: number;
  texts: number;
  failNext: number;
}

export function createHashEmbedder(dimension = 512, modelId = 'test/hash-512'): CountingEmbedder {
  const embedder: CountingEmbedder = {
    modelId,
    dimension,
    calls: 0,
    texts: 0,
    failNext: 0,
    async embed(texts) {
      if (embedder.failNext > 0) {
        embedder.failNext -= 1;
        throw new Error('embedding model unavailable (injected)');
      }
      embedder.calls += 1;
      embedder.texts += texts.length;
      return texts.map((t) => hashVector(t, dimension));
    },
  };
  return embedder;
}

export function hashVector(text: string, dimension: number): number[] {
  const v = new Array<number>(dimension).fill(0);
  for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    const h = createHash('sha1').update(word).digest();
    v[h.readUInt16BE(0) % dimension]! += 1;
    v[h.readUInt16BE(2) % dimension]! += 0.5;
  }
  const norm = Math.hypot(...v) || 1;
  return v.map((x) => x / norm);
}
