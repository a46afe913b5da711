/**
 * Confidence-gate calibrations per embedding model, measured with `groundwork calibrate` on
 * SQuAD v1.1 dev (docs/confidence.md). A model without an entry uses the design defaults
 * (cosine only, no evidence floor, medium >= 0.60, high >= 0.75), which have not been calibrated
 * for it.
 */
import type { ConfidenceCalibration } from './confidence';

export const CALIBRATIONS: Readonly<Record<string, ConfidenceCalibration>> = {
  // 1,000 questions (seed 7), fitted on 500, held out 500: gold paragraph present gated
  // medium/high 86.2 %, its article removed gated low 86.8 %; in a five-document corpus, with the
  // gold paragraph 87.6 %, without it 99.8 %. (The plain mean of the top 5, fitted the same way
  // on the large corpus only: 78.4 % / 80.8 %, and 0.2 % in the five-document corpus.)
  'local/use-lite-512': { cosineWeight: 0.4, evidenceFloor: 0.43, medium: 0.497, high: 0.597 },
};
