/**
 * Seed 000's admin routes, a thin mapping over the admin use cases behind /admin (core/admin):
 * the same checks (admin group only, the token's tenant only), the same data, the seed's names.
 *
 * | route                                                 | use case                         |
 * |-------------------------------------------------------|----------------------------------|
 * | `GET /api/admin/lexybrain/rag/stats`                  | `Admin.stats`                    |
 * | `GET /api/admin/lexybrain/rag/feedback`               | `Admin.feedback`                 |
 * | `GET /api/admin/lexybrain/configs`                    | `Admin.prompts`                  |
 * | `POST /api/admin/lexybrain/configs`                   | `Admin.createPrompt`             |
 * | `POST /api/admin/lexybrain/configs/{id}/activate`     | `Admin.activatePrompt`           |
 * | `POST /api/admin/lexybrain/configs/{id}/deactivate`   | `Admin.deactivatePrompt`         |
 *
 * A config's `type` is its profile, `global` standing for the system prompt (`_system`); its
 * `system_instructions` are the profile's instructions; `retrieval_scope` is
 * `allowed_source_types`, taken in the seed's names (`keywords`, `user_watchlists`, ...) and
 * stored and shown as the source types they read. A new version keeps what it does not restate
 * from its capability's built-in definition (admin-queries.ts, docs/decisions/0160).
 */
import * as z from '../core/zod';
import type { Admin, NewPromptVersion, PromptVersion } from '../core/admin/admin';
import { createHttpHandler, parseQuery, type HttpHandlerDeps } from '../http/http-handler';
import { feedbackPage } from './handler';
import {
  lexyConfigSchema,
  lexyCreateConfigRequestSchema,
  lexyFeedbackQuerySchema,
  lexyStatsQuerySchema,
  OWN_SCOPE_PREFIX,
  SEED_SCOPE_SOURCE_TYPES,
  type LexyCreateConfigRequest,
} from './lexybrain-schema';

const noBody = z.strictObject({});

/** The system prompt's profile, which the seed calls type `global`. */
const SYSTEM_PROFILE = '_system';
const GLOBAL_TYPE = 'global';

/** A profile as the seed's config `type`. */
const typeOfProfile = (profile: string): string =>
  profile === SYSTEM_PROFILE ? GLOBAL_TYPE : profile;

/** A seed config `type` as the profile it configures. */
const profileOfType = (type: string): string => (type === GLOBAL_TYPE ? SYSTEM_PROFILE : type);

function toLexyConfig(p: PromptVersion): z.infer<typeof lexyConfigSchema> {
  const { allowed_source_types, ...constraints } = p.constraints;
  return {
    id: p.id,
    name: p.name,
    type: typeOfProfile(p.profile),
    system_instructions: p.instructions,
    constraints: {
      ...constraints,
      ...(allowed_source_types ? { retrieval_scope: allowed_source_types } : {}),
    },
    is_active: p.active,
    version: p.version,
    scope: p.scope,
    created_at: p.createdAt.toISOString(),
    created_by: p.createdBy,
  };
}

/**
 * A `retrieval_scope` (validated by the schema) as the source types it reads, in order without
 * repeats, and whether it names the caller's own data (a `user_` name).
 */
function sourceTypesOfScope(scope: readonly string[]): { types: string[]; ownFirst: boolean } {
  let ownFirst = false;
  const types = scope.map((name) => {
    const own = name.startsWith(OWN_SCOPE_PREFIX);
    const seedName = own ? name.slice(OWN_SCOPE_PREFIX.length) : name;
    ownFirst ||= own;
    // A source type's own name (`keyword`, `trend`) is taken as it is.
    const mapped = Object.hasOwn(SEED_SCOPE_SOURCE_TYPES, seedName)
      ? SEED_SCOPE_SOURCE_TYPES[seedName]
      : undefined;
    return mapped ?? seedName;
  });
  return { types: [...new Set(types)], ownFirst };
}

function fromLexyConfig(body: LexyCreateConfigRequest): NewPromptVersion {
  const { retrieval_scope, ...constraints } = body.constraints;
  const scope = retrieval_scope ? sourceTypesOfScope(retrieval_scope) : undefined;
  return {
    profile: profileOfType(body.type),
    name: body.name,
    instructions: body.system_instructions,
    constraints: {
      // The seed's `user_` scopes: the caller's own first, unless the version says otherwise.
      ...(scope?.ownFirst ? { owner_first: true } : {}),
      ...constraints,
      ...(scope ? { allowed_source_types: scope.types } : {}),
    },
  };
}

export function makeLexyBrainAdminHandlers(deps: HttpHandlerDeps & { admin: Admin }) {
  const { admin } = deps;
  return {
    'lexybrain.admin.stats': createHttpHandler(
      deps,
      { route: 'lexybrain.admin.stats', schema: noBody },
      async ({ identity, query }) => {
        const q = parseQuery(lexyStatsQuerySchema, query);
        const s = await admin.stats(identity, q.window_days);
        return {
          body: {
            tenant_id: identity.tenantId,
            since: s.since.toISOString(),
            total_threads: s.threads,
            total_messages: s.messages,
            active_users: s.activeUsers,
            capability_distribution: s.answers.byProfile,
            answers: {
              total: s.answers.total,
              by_confidence: s.answers.byConfidence,
              insufficient_context: s.answers.insufficientContext,
              fallback_to_generic: s.answers.fallbackToGeneric,
            },
            feedback: s.feedback,
            quota_usage_by_plan: s.quotaUseByPlan.map((p) => ({
              plan: p.plan,
              month: p.month,
              users: p.users,
              rag_messages: {
                used: p.quotas.answers.used,
                limit_per_user: p.quotas.answers.limitPerUser,
              },
            })),
          },
        };
      },
    ),

    'lexybrain.admin.feedback': createHttpHandler(
      deps,
      { route: 'lexybrain.admin.feedback', schema: noBody },
      async ({ identity, query }) => {
        const { rows, nextCursor } = await feedbackPage(
          admin,
          identity,
          parseQuery(lexyFeedbackQuerySchema, query),
        );
        return {
          body: {
            feedback: rows.map((f) => ({
              message_id: f.messageId,
              thread_id: f.threadId,
              user_id: f.userId,
              rating: f.rating,
              feedback_text: f.comment,
              question: f.question,
              answer: f.answer,
              capability: f.profile,
              confidence: f.confidence,
              created_at: f.createdAt.toISOString(),
              updated_at: f.updatedAt.toISOString(),
            })),
            next_cursor: nextCursor,
          },
        };
      },
    ),

    'lexybrain.admin.configs.list': createHttpHandler(
      deps,
      { route: 'lexybrain.admin.configs.list', schema: noBody },
      async ({ identity }) => ({
        body: { configs: (await admin.prompts(identity)).map(toLexyConfig) },
      }),
    ),

    'lexybrain.admin.configs.create': createHttpHandler(
      deps,
      { route: 'lexybrain.admin.configs.create', schema: lexyCreateConfigRequestSchema },
      async ({ identity, body }) => ({
        status: 201,
        body: toLexyConfig(
          await admin.createPrompt(identity, fromLexyConfig(body), body.is_active),
        ),
      }),
    ),

    'lexybrain.admin.configs.activate': createHttpHandler(
      deps,
      { route: 'lexybrain.admin.configs.activate', schema: noBody },
      async ({ identity, pathParameters }) => ({
        body: toLexyConfig(await admin.activatePrompt(identity, pathParameters.id ?? '')),
      }),
    ),

    'lexybrain.admin.configs.deactivate': createHttpHandler(
      deps,
      { route: 'lexybrain.admin.configs.deactivate', schema: noBody },
      async ({ identity, pathParameters }) => ({
        body: toLexyConfig(await admin.deactivatePrompt(identity, pathParameters.id ?? '')),
      }),
    ),
  };
}
