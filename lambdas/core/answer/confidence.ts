/**
 * The confidence gate. `avg_relevance` is the mean relevance of the top 5 retrieved chunks that
 * count as evidence; relevance is the chunk's cosine similarity to the question, or, for a model
 * whose cosine separates relevant from irrelevant text poorly, a weighted mix of cosine and
 * keyword coverage (the idf-weighted share of the question's terms found in the chunk). A chunk
 * below the evidence floor is not evidence: it is left out of the mean, so a small corpus, whose
 * top 5 always holds unrelated chunks, is not gated low for that alone. No evidence at all is
 * `low`. The weight, the floor and the two thresholds are calibrated per embedding model
 * (`groundwork calibrate`, docs/confidence.md).
 */
import type { SearchHit } from '../retrieval/types';

export type ConfidenceLevel = 'high' | 'medium' | 'low';

export interface ConfidenceCalibration {
  /** Weight of cosine in the relevance estimate (1: cosine only, as for Titan). */
  readonly cosineWeight: number;
  /**
   * Relevance below which a chunk of the top 5 is not evidence and is not averaged.
   * @default 0 (every chunk of the top 5 counts: the plain mean)
   */
  readonly evidenceFloor?: number;
  /** `avg_relevance` at or above which the level is `high`. */
  readonly high: number;
  /** `avg_relevance` at or above which the level is `medium`; below it, `low` (no LLM call). */
  readonly medium: number;
}

/** The design defaults, for models without a calibration of their own. */
export const DEFAULT_CALIBRATION: ConfidenceCalibration = {
  cosineWeight: 1,
  evidenceFloor: 0,
  high: 0.75,
  medium: 0.6,
};

export const TOP_FOR_CONFIDENCE = 5;

export interface ConfidenceAssessment {
  /** Mean relevance of the evidence chunks; 0 when none of the top 5 reaches the floor. */
  readonly avgRelevance: number;
  readonly level: ConfidenceLevel;
  /** How many of the top 5 chunks reached the evidence floor (and were averaged). */
  readonly evidenceChunks: number;
}

export function relevanceOf(
  hit: Pick<SearchHit, 'score' | 'keywordCoverage'>,
  calibration: ConfidenceCalibration,
): number {
  const w = calibration.cosineWeight;
  return w * hit.score + (1 - w) * hit.keywordCoverage;
}

/** Gates retrieved hits (in retrieval order) with a model's calibration. */
export function assessConfidence(
  hits: readonly Pick<SearchHit, 'score' | 'keywordCoverage'>[],
  calibration: ConfidenceCalibration,
): ConfidenceAssessment {
  const floor = calibration.evidenceFloor ?? 0;
  // The top 5 in retrieval order, as ranked for the caller; then only those that are evidence.
  const evidence = hits
    .slice(0, TOP_FOR_CONFIDENCE)
    .map((h) => relevanceOf(h, calibration))
    .filter((r) => r >= floor);
  const avgRelevance =
    evidence.length === 0 ? 0 : evidence.reduce((s, x) => s + x, 0) / evidence.length;
  const level: ConfidenceLevel =
    evidence.length === 0
      ? 'low'
      : avgRelevance >= calibration.high
        ? 'high'
        : avgRelevance >= calibration.medium
          ? 'medium'
          : 'low';
  return { avgRelevance, level, evidenceChunks: evidence.length };
}
