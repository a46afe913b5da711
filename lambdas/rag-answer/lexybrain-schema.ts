/**
 * POST /api/lexybrain/rag ("Ask LexyBrain", seed 000): the request and response contracts as the
 * seed writes them (camelCase fields, its validation rules and defaults). Objects are strict: a
 * field the seed does not name is a 422 naming it, since a client written against the seed sends
 * none.
 */
import { isoInstantSchema } from '../core/retrieval/filters';
import * as z from '../core/zod';

/** The seed's five capabilities, each a built-in profile of the `lexybrain` family (0017). */
const LEXYBRAIN_CAPABILITIES = [
  'market_brief',
  'competitor_intel',
  'keyword_explanation',
  'alert_explanation',
  'general_chat',
] as const;

/** The profile family the capabilities are chosen in (`prompt_configs.constraints.family`). */
export const LEXYBRAIN_PROFILE_FAMILY = 'lexybrain';

/** The seed's source types; a document's `source_type` maps onto one (see `seedSourceType`). */
const LEXYBRAIN_SOURCE_TYPES = ['keyword', 'listing', 'alert', 'doc'] as const;
export type LexyBrainSourceType = (typeof LEXYBRAIN_SOURCE_TYPES)[number];

/** Ids of sources (documents), as `sources[].id` and `references` return them. */
const sourceIds = (max: number) => z.array(z.uuid()).check(z.maxLength(max));

const contextSchema = z.strictObject({
  keywordIds: z.optional(sourceIds(50)),
  watchlistIds: z.optional(sourceIds(50)),
  listingIds: z.optional(sourceIds(50)),
  alertIds: z.optional(sourceIds(50)),
  shopUrl: z.optional(z.url().check(z.maxLength(2048))),
  marketplaces: z.optional(
    z.array(z.string().check(z.trim(), z.minLength(1), z.maxLength(64))).check(z.maxLength(20)),
  ),
  timeRange: z.optional(
    z.strictObject({ from: isoInstantSchema(), to: isoInstantSchema() }).check(
      z.refine((r: { from: string; to: string }) => Date.parse(r.from) < Date.parse(r.to), {
        message: '`from` must be before `to`',
        path: ['from'],
      }),
    ),
  ),
});

const LEXYBRAIN_OPTION_DEFAULTS = { maxTokens: 1024, temperature: 0.7, language: 'en' };

const optionsSchema = z.strictObject({
  maxTokens: z._default(z.int().check(z.gte(256), z.lte(2048)), 1024),
  temperature: z._default(z.number().check(z.gte(0), z.lte(1)), 0.7),
  /** The answer's language, a BCP 47 tag such as `en`, `de` or `pt-BR`. */
  language: z._default(
    z.string().check(z.regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8}){0,3}$/, 'a BCP 47 tag such as en')),
    'en',
  ),
  /** Answer as this plan: for members of the admin group only (403 for anyone else). */
  planCode: z.optional(z.string().check(z.regex(/^[a-z][a-z0-9_-]{0,31}$/))),
});

export const lexybrainRagRequestSchema = z.strictObject({
  /** Omitted or null: a new thread. */
  threadId: z.optional(z.nullable(z.uuid())),
  message: z.string().check(z.trim(), z.minLength(1), z.maxLength(4000)),
  /** Omitted or null: detected from the message. */
  capability: z.optional(z.nullable(z.enum(LEXYBRAIN_CAPABILITIES))),
  context: z.optional(contextSchema),
  options: z._default(optionsSchema, LEXYBRAIN_OPTION_DEFAULTS),
  meta: z.optional(
    z.strictObject({
      client: z.optional(z.enum(['web', 'extension', 'api'])),
      version: z.optional(z.string().check(z.maxLength(64))),
    }),
  ),
});
export type LexyBrainRagRequest = z.infer<typeof lexybrainRagRequestSchema>;

export const lexybrainRagResponseSchema = z.object({
  threadId: z.string(),
  /** The assistant message. */
  messageId: z.string(),
  answer: z.string(),
  /** The capability used: one of the five, or a profile a tenant added to the family. */
  capability: z.string(),
  sources: z.array(
    z.object({
      id: z.string(),
      type: z.enum(LEXYBRAIN_SOURCE_TYPES),
      label: z.string(),
      /** Similarity 0 to 1. */
      score: z.number().check(z.gte(0), z.lte(1)),
    }),
  ),
  references: z.object({
    keywords: z.array(z.string()),
    listings: z.array(z.string()),
    alerts: z.array(z.string()),
    docs: z.array(z.string()),
  }),
  model: z.object({
    id: z.string(),
    usage: z.nullable(z.object({ inputTokens: z.int(), outputTokens: z.int() })),
    latencyMs: z.number(),
  }),
  flags: z.object({
    usedRag: z.boolean(),
    fallbackToGeneric: z.boolean(),
    insufficientContext: z.boolean(),
  }),
});
export type LexyBrainRagResponse = z.infer<typeof lexybrainRagResponseSchema>;
