/**
 * Confidence-gate calibrations per embedding model, measured with `groundwork calibrate` on
 * SQuAD v1.1 dev (docs/confidence.md). A model without an entry uses the design defaults
 * (cosine only, medium >= 0.60, high >= 0.75), which have not been calibrated for it.
 */
import type { ConfidenceCalibration } from './confidence';

export const CALIBRATIONS: Readonly<Record<string, ConfidenceCalibration>> = {
  // 1,000 questions, fitted on 500, held out 500: gold paragraph present gated medium/high
  // 78.0 %, its article removed gated low 81.4 % (the design defaults gave 26.4 % / 98.4 %).
  'local/use-lite-512': { cosineWeight: 0.55, medium: 0.406, high: 0.543 },
};
