/**
 * The switch that turns POST /api/lexybrain/rag off, as the `rag-answer` function and the
 * embedded default read it from their environment: `LEXYBRAIN_RAG_ENABLED`, on unless it reads
 * `false`, `0`, `off` or `no`. Off, the route answers 503 `feature_disabled`.
 */
import * as z from '../core/zod';

/** Spread into an environment schema. */
export const lexybrainEnvShape = {
  LEXYBRAIN_RAG_ENABLED: z._default(
    z.pipe(
      z.string(),
      z.transform((v: string) => !['false', '0', 'off', 'no'].includes(v.trim().toLowerCase())),
    ),
    true,
  ),
};
