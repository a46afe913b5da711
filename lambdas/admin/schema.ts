/** The /admin routes: request and response contracts (also the source of the OpenAPI document). */
import * as z from 'zod';

export const statsQuerySchema = z
  .object({
    /** Activity (answers, active users, feedback) over the last N days. */
    window_days: z.coerce.number().int().min(1).max(365).default(30),
  })
  .strict();

export const feedbackQuerySchema = z
  .object({
    rating: z.enum(['positive', 'negative', 'neutral']).optional(),
    limit: z.coerce.number().int().min(1).max(100).default(50),
    cursor: z.string().max(512).optional(),
  })
  .strict();

export const promptConstraintsSchema = z
  .object({
    top_k: z.number().int().min(1).max(50).optional(),
    allowed_source_types: z
      .array(z.string().regex(/^[a-z][a-z0-9_-]{0,31}$/))
      .max(50)
      .optional(),
    /** Phrases that select this profile when a request names none. */
    keywords: z.array(z.string().min(1).max(100)).max(100).optional(),
  })
  .strict();

export const createPromptRequestSchema = z
  .object({
    /** `_system` is the system prompt; any other name is a capability profile. */
    profile: z.string().regex(/^[_a-z][a-z0-9_-]{0,31}$/),
    name: z.string().trim().min(1).max(200),
    instructions: z.string().trim().min(1).max(20_000),
    constraints: promptConstraintsSchema.default({}),
    /** Make the new version the active one right away. */
    activate: z.boolean().default(false),
  })
  .strict();

const countsSchema = z.record(z.string(), z.number().int());

export const statsResponseSchema = z.object({
  tenant_id: z.string(),
  since: z.string(),
  documents: z.object({ total: z.number().int(), by_status: countsSchema }),
  chunks: z.number().int(),
  threads: z.number().int(),
  messages: z.number().int(),
  active_users: z.number().int(),
  answers: z.object({
    total: z.number().int(),
    by_confidence: countsSchema,
    by_profile: countsSchema,
    insufficient_context: z.number().int(),
    fallback_to_generic: z.number().int(),
  }),
  feedback: countsSchema,
  quota_use_by_plan: z.array(
    z.object({
      plan: z.string(),
      month: z.string(),
      users: z.number().int(),
      answers: z.object({ used: z.number().int(), limit_per_user: z.number().int().nullable() }),
      searches: z.object({ used: z.number().int(), limit_per_user: z.number().int().nullable() }),
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
      comment: z.string().nullable(),
      question: z.string().nullable(),
      answer: z.string(),
      confidence: z.string().nullable(),
      profile: z.string().nullable(),
      updated_at: z.string(),
    }),
  ),
  next_cursor: z.string().nullable(),
});

export const promptSchema = z.object({
  id: z.string(),
  scope: z.enum(['default', 'tenant']),
  profile: z.string(),
  name: z.string(),
  version: z.number().int(),
  instructions: z.string(),
  constraints: promptConstraintsSchema,
  active: z.boolean(),
  created_at: z.string(),
  created_by: z.string().nullable(),
});

export const promptsResponseSchema = z.object({ prompts: z.array(promptSchema) });
