/**
 * The confidence gate. `avg_relevance` is the mean relevance of the top 5 retrieved chunks;
 * relevance is the chunk's cosine similarity to the question, or, for a model whose cosine
 * separates relevant from irrelevant text poorly, a weighted mix of cosine and keyword coverage
 * (the idf-weighted share of the question's terms found in the chunk). The weights and the two
 * thresholds are calibrated per embedding model (`groundwork calibrate`, docs/confidence.md).
 */
import type { SearchHit } from '../retrieval/types';

export type ConfidenceLevel = 'high' | 'medium' | 'low';

export interface ConfidenceCalibration {
  /** Weight of cosine in the relevance estimate (1: cosine only, as for Titan). */
  readonly cosineWeight: number;
  readonly high: number;
  readonly medium: number;
}

/** The design defaults, for models without a calibration of their own. */
export const DEFAULT_CALIBRATION: ConfidenceCalibration = {
  cosineWeight: 1,
  high: 0.75,
  medium: 0.6,
};

export const TOP_FOR_CONFIDENCE = 5;

export function relevanceOf(
  hit: Pick<SearchHit, 'score' | 'keywordCoverage'>,
  calibration: ConfidenceCalibration,
): number {
  const w = calibration.cosineWeight;
  return w * hit.score + (1 - w) * hit.keywordCoverage;
}

export function assessConfidence(
  hits: readonly Pick<SearchHit, 'score' | 'keywordCoverage'>[],
  calibration: ConfidenceCalibration,
): { avgRelevance: number; level: ConfidenceLevel } {
  // The top 5 in retrieval order, as ranked for the caller.
  const top = hits.slice(0, TOP_FOR_CONFIDENCE).map((h) => relevanceOf(h, calibration));
  const avgRelevance = top.length === 0 ? 0 : top.reduce((s, x) => s + x, 0) / top.length;
  const level: ConfidenceLevel =
    avgRelevance >= calibration.high
      ? 'high'
      : avgRelevance >= calibration.medium
        ? 'medium'
        : 'low';
  return { avgRelevance, level };
}
