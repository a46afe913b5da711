/**
 * The confidence gate's settings as the answer functions (buffered and streaming) and the
 * embedded default read them from their environment: each `CONFIDENCE_*` that is set overrides
 * that value of the embedding model's calibration (core/answer/calibrations.ts
 * resolveCalibration); unset, the model's own calibration, or the uncalibrated defaults, apply.
 */
import * as z from '../core/zod';
import type { ConfidenceCalibration } from '../core/answer/confidence';

const unitInterval = z.coerce.number().check(z.gte(0), z.lte(1));

/** Spread into an environment schema. */
export const confidenceEnvShape = {
  /** Mean evidence relevance for `high` and for `medium`. */
  RAG_CONFIDENCE_HIGH_THRESHOLD: z.optional(unitInterval),
  RAG_CONFIDENCE_MEDIUM_THRESHOLD: z.optional(unitInterval),
  /** Weight of the background-normalised cosine in a chunk's relevance; the rest is coverage. */
  CONFIDENCE_COSINE_WEIGHT: z.optional(unitInterval),
  /** Relevance below which a chunk of the top 5 is not evidence; 0 averages all five. */
  CONFIDENCE_EVIDENCE_FLOOR: z.optional(unitInterval),
};

type ConfidenceEnv = { [K in keyof typeof confidenceEnvShape]?: number | undefined };

/** The values the environment sets (only those). */
export function calibrationOverridesFromEnv(env: ConfidenceEnv): Partial<ConfidenceCalibration> {
  return {
    ...(env.CONFIDENCE_COSINE_WEIGHT !== undefined
      ? { cosineWeight: env.CONFIDENCE_COSINE_WEIGHT }
      : {}),
    ...(env.CONFIDENCE_EVIDENCE_FLOOR !== undefined
      ? { evidenceFloor: env.CONFIDENCE_EVIDENCE_FLOOR }
      : {}),
    ...(env.RAG_CONFIDENCE_HIGH_THRESHOLD !== undefined
      ? { high: env.RAG_CONFIDENCE_HIGH_THRESHOLD }
      : {}),
    ...(env.RAG_CONFIDENCE_MEDIUM_THRESHOLD !== undefined
      ? { medium: env.RAG_CONFIDENCE_MEDIUM_THRESHOLD }
      : {}),
  };
}
