/**
 * Seed 000's admin routes (/api/admin/lexybrain/...): request and response contracts, in the
 * seed's field names (its `rag_feedback` and `lexybrain_prompt_configs` columns: `feedback_text`,
 * `type`, `system_instructions`, `is_active`). Served by lexybrain-handler.ts over the same
 * admin use cases as /admin.
 */
import * as z from '../core/zod';
import { feedbackQuerySchema, promptConstraintsSchema, statsQuerySchema } from './schema';

/** The same query as GET /admin/stats (`window_days`, default 30). */
export const lexyStatsQuerySchema = statsQuerySchema;
/** The same query as GET /admin/feedback (`rating`, `limit`, `cursor`). */
export const lexyFeedbackQuerySchema = feedbackQuerySchema;

/**
 * A config's `type`: `global` (the system prompt, the project's `_system` profile) or a
 * capability (a profile of the same name, e.g. `market_brief`).
 */
const lexyConfigTypeSchema = z.string().check(z.regex(/^[a-z][a-z0-9_-]{0,31}$/));

/**
 * The seed's `retrieval_scope` names (its configs' rows and its retrieval policy table) and the
 * source type each reads: the same mapping as the capability table of docs/api.md. A `user_`
 * prefix (the seed's `user_keywords`, `user_watchlists`) reads the same type with the caller's
 * own documents first (`owner_first`).
 */
export const SEED_SCOPE_SOURCE_TYPES: Readonly<Record<string, string>> = {
  keywords: 'keyword',
  keyword_history: 'keyword_history',
  trends: 'trend',
  watchlists: 'watchlist',
  listings: 'listing',
  shops: 'shop',
  alerts: 'alert',
  risk_rules: 'risk_rule',
  docs: 'doc',
};

/** The prefix of a seed scope name that puts the caller's own documents first. */
export const OWN_SCOPE_PREFIX = 'user_';

/** Every `retrieval_scope` value the route takes: the seed's names, and the types they read. */
const RETRIEVAL_SCOPE_NAMES = [
  ...new Set([
    ...Object.keys(SEED_SCOPE_SOURCE_TYPES),
    ...Object.keys(SEED_SCOPE_SOURCE_TYPES).map((name) => `${OWN_SCOPE_PREFIX}${name}`),
    ...Object.values(SEED_SCOPE_SOURCE_TYPES),
  ]),
] as [string, ...string[]];

/** What a `retrieval_scope` value may be, for the 422 that refuses another. */
const RETRIEVAL_SCOPE_HELP =
  `use the seed's ${Object.keys(SEED_SCOPE_SOURCE_TYPES).join(', ')} ` +
  `(with a "${OWN_SCOPE_PREFIX}" prefix: the caller's own first) or the type each reads; ` +
  'other source types are set through allowed_source_types on /api/admin/prompts';

const retrievalScopeName = z.enum(RETRIEVAL_SCOPE_NAMES, {
  error: (issue) => `${JSON.stringify(issue.input)} names no source type: ${RETRIEVAL_SCOPE_HELP}`,
});

/**
 * A config's constraints as a request gives them: the project's profile constraints
 * (promptConstraintsSchema: `top_k`, `keywords`, `candidates`, `owner_first`, `max_age_days`,
 * `family`, `priority`, `fallback`) with `allowed_source_types` under the seed's name
 * `retrieval_scope` (the seed's names, or the types they read). Other keys (the seed's
 * `temperature`, `max_keywords`, ...) are refused, not stored unapplied. What a version leaves
 * out, it keeps from its capability's built-in definition
 * (docs/decisions/0160-prompt-versions-inherit-the-built-in-definition.md).
 */
const lexyConstraintsSchema = z.extend(
  z.omit(promptConstraintsSchema, { allowed_source_types: true }),
  {
    // At least one: a capability that may read no source type could only ever refuse.
    retrieval_scope: z.optional(z.array(retrievalScopeName).check(z.minLength(1), z.maxLength(50))),
  },
);

/** A config's constraints as stored: `retrieval_scope` holds the source types retrieval reads. */
const lexyStoredConstraintsSchema = z.extend(
  z.omit(promptConstraintsSchema, { allowed_source_types: true }),
  { retrieval_scope: promptConstraintsSchema.shape.allowed_source_types },
);

export const lexyCreateConfigRequestSchema = z.strictObject({
  /** The seed's versioned name, e.g. `ask_lexybrain_market_brief_v2`. */
  name: z.string().check(z.trim(), z.minLength(1), z.maxLength(200)),
  type: lexyConfigTypeSchema,
  system_instructions: z.string().check(z.trim(), z.minLength(1), z.maxLength(20_000)),
  constraints: z._default(lexyConstraintsSchema, {}),
  /** Make the new version the active one of its type right away. */
  is_active: z._default(z.boolean(), false),
});
export type LexyCreateConfigRequest = z.infer<typeof lexyCreateConfigRequestSchema>;

export const lexyConfigSchema = z.object({
  id: z.string(),
  name: z.string(),
  type: z.string(),
  system_instructions: z.string(),
  /** In force: what the version states over its capability's built-in definition. */
  constraints: lexyStoredConstraintsSchema,
  /** In force for this tenant (its own active version, or the default it has not replaced). */
  is_active: z.boolean(),
  version: z.int(),
  /** `default`: built in, shared by every tenant; `tenant`: this tenant's own. */
  scope: z.enum(['default', 'tenant']),
  created_at: z.string(),
  created_by: z.nullable(z.string()),
});

export const lexyConfigsResponseSchema = z.object({ configs: z.array(lexyConfigSchema) });

const countsSchema = z.record(z.string(), z.int());

export const lexyStatsResponseSchema = z.object({
  tenant_id: z.string(),
  since: z.string(),
  total_threads: z.int(),
  total_messages: z.int(),
  active_users: z.int(),
  /** Answers in the window by capability (profile). */
  capability_distribution: countsSchema,
  answers: z.object({
    total: z.int(),
    by_confidence: countsSchema,
    insufficient_context: z.int(),
    fallback_to_generic: z.int(),
  }),
  feedback: countsSchema,
  quota_usage_by_plan: z.array(
    z.object({
      plan: z.string(),
      month: z.string(),
      users: z.int(),
      /** Answers this month (the seed's `rag_messages` quota). */
      rag_messages: z.object({ used: z.int(), limit_per_user: z.nullable(z.int()) }),
    }),
  ),
});

export const lexyFeedbackResponseSchema = z.object({
  feedback: z.array(
    z.object({
      message_id: z.string(),
      thread_id: z.string(),
      user_id: z.string(),
      rating: z.enum(['positive', 'negative', 'neutral']),
      feedback_text: z.nullable(z.string()),
      question: z.nullable(z.string()),
      answer: z.string(),
      capability: z.nullable(z.string()),
      confidence: z.nullable(z.string()),
      created_at: z.string(),
      updated_at: z.string(),
    }),
  ),
  next_cursor: z.nullable(z.string()),
});
