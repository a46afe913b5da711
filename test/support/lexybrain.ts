/**
 * The built-in `market_brief` capability (migrations/0017) as the seed's configs route shows a
 * version of it that restates only its `retrieval_scope` (docs/decisions/0160).
 */
export const MARKET_BRIEF_CONSTRAINTS = {
  family: 'lexybrain',
  priority: 40,
  retrieval_scope: ['keyword', 'trend'],
  candidates: 40,
  top_k: 12,
  max_age_days: 90,
  keywords: ['market', 'niche', 'brief'],
} as const;
