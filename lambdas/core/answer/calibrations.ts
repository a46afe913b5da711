/**
 * Confidence-gate calibrations per embedding model, measured with `groundwork calibrate` on
 * SQuAD v1.1 dev and the fit split of the natural question sets (docs/confidence.md). A model
 * without an entry uses the defaults of ./confidence.ts, stated in units of the question's
 * background so that they mean the same for every model.
 */
import { ConfigError } from '../errors';
import { DEFAULT_CALIBRATION, type ConfidenceCalibration } from './confidence';

export const CALIBRATIONS: Readonly<Record<string, ConfidenceCalibration>> = {
  // 1,000 SQuAD questions (seed 7), fitted on 500 with the natural sets' fit split, held out 500:
  // gold paragraph present gated medium/high 88.2 %, its article removed gated low 85.6 %; in a
  // five-document corpus, with the gold paragraph 87.6 %, without it 99.8 %. Natural sets, held
  // out: 77.8 % of answerable questions answered with the fact, 76.2 % of unanswerable refused.
  'local/use-lite-512': { cosineWeight: 0.2, evidenceFloor: 0.36, medium: 0.435, high: 0.577 },
};

/**
 * The one way the gate's calibration is decided, in AWS and in the embedded default: the
 * model's entry in `table` (CALIBRATIONS), else the defaults for an uncalibrated model, with
 * any value the deployment sets (`CONFIDENCE_*`) laid over it.
 * @throws ConfigError when the result has `medium` above `high`.
 */
export function resolveCalibration(
  modelId: string,
  overrides: Partial<ConfidenceCalibration> = {},
  table: Readonly<Record<string, ConfidenceCalibration>> = CALIBRATIONS,
): ConfidenceCalibration {
  const set = Object.fromEntries(Object.entries(overrides).filter(([, v]) => v !== undefined));
  const calibration = { ...(table[modelId] ?? DEFAULT_CALIBRATION), ...set };
  if (calibration.medium > calibration.high) {
    throw new ConfigError(
      `confidence: medium (${calibration.medium}) must not exceed high (${calibration.high}) for ${modelId}`,
    );
  }
  return calibration;
}
