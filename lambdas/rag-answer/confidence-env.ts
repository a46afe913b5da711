/**
 * The confidence gate's settings as both answer functions (buffered and streaming) read them
 * from their environment (set by the CDK app from `confidence*` in its configuration).
 */
import * as z from '../core/zod';
import { DEFAULT_CALIBRATION, type ConfidenceCalibration } from '../core/answer/confidence';

const unitInterval = z.coerce.number().check(z.gte(0), z.lte(1));

/** Spread into a function's environment schema; check it with `confidenceEnvRefinement`. */
export const confidenceEnvShape = {
  /**
   * Thresholds for the configured embedding model (see core/answer/confidence); unset, the
   * defaults for a model without a calibration, in units of the question's background.
   */
  CONFIDENCE_HIGH: z._default(unitInterval, DEFAULT_CALIBRATION.high),
  CONFIDENCE_MEDIUM: z._default(unitInterval, DEFAULT_CALIBRATION.medium),
  /** Weight of the background-normalised cosine in a chunk's relevance; the rest is coverage. */
  CONFIDENCE_COSINE_WEIGHT: z._default(unitInterval, DEFAULT_CALIBRATION.cosineWeight),
  /** Relevance below which a chunk of the top 5 is not evidence; 0 averages all five. */
  CONFIDENCE_EVIDENCE_FLOOR: z._default(unitInterval, DEFAULT_CALIBRATION.evidenceFloor ?? 0),
};

type ConfidenceEnv = { [K in keyof typeof confidenceEnvShape]: number };

/** medium <= high, reported on CONFIDENCE_MEDIUM. */
export const confidenceEnvRefinement: [
  (e: ConfidenceEnv) => boolean,
  { message: string; path: string[] },
] = [
  (e) => e.CONFIDENCE_MEDIUM <= e.CONFIDENCE_HIGH,
  { message: 'must not exceed CONFIDENCE_HIGH', path: ['CONFIDENCE_MEDIUM'] },
];

export function calibrationFromEnv(env: ConfidenceEnv): ConfidenceCalibration {
  return {
    cosineWeight: env.CONFIDENCE_COSINE_WEIGHT,
    evidenceFloor: env.CONFIDENCE_EVIDENCE_FLOOR,
    high: env.CONFIDENCE_HIGH,
    medium: env.CONFIDENCE_MEDIUM,
  };
}
