/**
 * The confidence gate's settings as both answer functions (buffered and streaming) read them
 * from their environment (set by the CDK app from `confidence*` in its configuration).
 */
import * as z from '../core/zod';
import type { ConfidenceCalibration } from '../core/answer/confidence';

const unitInterval = z.coerce.number().check(z.gte(0), z.lte(1));

/** Spread into a function's environment schema; check it with `confidenceEnvRefinement`. */
export const confidenceEnvShape = {
  /** Thresholds for the configured embedding model (see core/answer/confidence). */
  CONFIDENCE_HIGH: z._default(unitInterval, 0.75),
  CONFIDENCE_MEDIUM: z._default(unitInterval, 0.6),
  /** Weight of cosine in a chunk's relevance; the rest is keyword coverage. */
  CONFIDENCE_COSINE_WEIGHT: z._default(unitInterval, 1),
  /** Relevance below which a chunk of the top 5 is not evidence; 0 averages all five. */
  CONFIDENCE_EVIDENCE_FLOOR: z._default(unitInterval, 0),
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
