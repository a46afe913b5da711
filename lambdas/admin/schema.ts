/** The /api/admin routes: request and response contracts (also the source of the OpenAPI document). */
import * as z from '../core/zod';
import { queryInteger } from '../http/query-params';

export const statsQuerySchema = z.strictObject({
  /** Activity (answers, active users, feedback) over the last N days. */
  window_days: z._default(queryInteger(1, 365), 30),
});

export const feedbackQuerySchema = z.strictObject({
  rating: z.optional(z.enum(['positive', 'negative', 'neutral'])),
  limit: z._default(queryInteger(1, 100), 50),
  cursor: z.optional(z.string().check(z.maxLength(512))),
});

const sourceTypeName = z.string().check(z.regex(/^[a-z][a-z0-9_-]{0,31}$/));
const keyword = z.string().check(z.minLength(1), z.maxLength(100));

export const promptConstraintsSchema = z.strictObject({
  top_k: z.optional(z.int().check(z.gte(1), z.lte(50))),
  allowed_source_types: z.optional(z.array(sourceTypeName).check(z.maxLength(50))),
  /** Candidates ranked before `top_k` are kept, for `owner_first` to choose from. */
  candidates: z.optional(z.int().check(z.gte(1), z.lte(200))),
  /** The caller's own documents first among the candidates. */
  owner_first: z.optional(z.boolean()),
  /** Only documents at most this many days old (by source date), unless a request says otherwise. */
  max_age_days: z.optional(z.int().check(z.gte(1), z.lte(36500))),
  /** Phrases that select this profile when a request names none; `a & b` needs both. */
  keywords: z.optional(z.array(keyword).check(z.maxLength(100))),
  /** The family the profile is chosen within (e.g. `lexybrain`); none: the /answer profiles. */
  family: z.optional(z.string().check(z.regex(/^[a-z][a-z0-9_-]{0,31}$/))),
  /** Detection order within the family, lowest first. */
  priority: z.optional(z.int().check(z.gte(0), z.lte(1000))),
  /** The family's profile when no other one's keywords occur. */
  fallback: z.optional(z.boolean()),
});

export const createPromptRequestSchema = z.strictObject({
  /** `_system` is the system prompt; any other name is a capability profile. */
  profile: z.string().check(z.regex(/^[_a-z][a-z0-9_-]{0,31}$/)),
  name: z.string().check(z.trim(), z.minLength(1), z.maxLength(200)),
  instructions: z.string().check(z.trim(), z.minLength(1), z.maxLength(20_000)),
  constraints: z._default(promptConstraintsSchema, {}),
  /** Make the new version the active one right away. */
  activate: z._default(z.boolean(), false),
});

const countsSchema = z.record(z.string(), z.int());

export const statsResponseSchema = z.object({
  tenant_id: z.string(),
  since: z.string(),
  documents: z.object({ total: z.int(), by_status: countsSchema }),
  chunks: z.int(),
  threads: z.int(),
  messages: z.int(),
  active_users: z.int(),
  answers: z.object({
    total: z.int(),
    by_confidence: countsSchema,
    by_profile: countsSchema,
    insufficient_context: z.int(),
    fallback_to_generic: z.int(),
  }),
  feedback: countsSchema,
  quota_use_by_plan: z.array(
    z.object({
      plan: z.string(),
      month: z.string(),
      users: z.int(),
      answers: z.object({ used: z.int(), limit_per_user: z.nullable(z.int()) }),
      searches: z.object({ used: z.int(), limit_per_user: z.nullable(z.int()) }),
    }),
  ),
});

export const feedbackResponseSchema = z.object({
  feedback: z.array(
    z.object({
      message_id: z.string(),
      thread_id: z.string(),
      user_id: z.string(),
      rating: z.enum(['positive', 'negative', 'neutral']),
      comment: z.nullable(z.string()),
      question: z.nullable(z.string()),
      answer: z.string(),
      confidence: z.nullable(z.string()),
      profile: z.nullable(z.string()),
      updated_at: z.string(),
    }),
  ),
  next_cursor: z.nullable(z.string()),
});

export const promptSchema = z.object({
  id: z.string(),
  scope: z.enum(['default', 'tenant']),
  profile: z.string(),
  name: z.string(),
  version: z.int(),
  instructions: z.string(),
  constraints: promptConstraintsSchema,
  active: z.boolean(),
  created_at: z.string(),
  created_by: z.nullable(z.string()),
});

export const promptsResponseSchema = z.object({ prompts: z.array(promptSchema) });

/** POST /api/admin/source-policy: the tenant's source-type policy (core/retrieval/source-types.ts). */
export const sourceTypePolicyRequestSchema = z.strictObject({
  /** `permissive` narrows a request for another type away; `strict` refuses it (403). */
  mode: z.enum(['permissive', 'strict']),
  /** The types retrieval returns; null or absent: every type (permissive only). */
  allowed_source_types: z._default(
    z.nullable(z.array(sourceTypeName).check(z.minLength(1), z.maxLength(50))),
    null,
  ),
});

export const sourceTypePolicyResponseSchema = z.object({
  tenant_id: z.string(),
  mode: z.enum(['permissive', 'strict']),
  allowed_source_types: z.nullable(z.array(z.string())),
  /** Null: never set, the default applies. */
  updated_at: z.nullable(z.string()),
  updated_by: z.nullable(z.string()),
});
