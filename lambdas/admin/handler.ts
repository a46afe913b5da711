/**
 * The /api/admin routes (admin group only, own tenant only): statistics, feedback, prompt
 * configuration versions and the source-type policy. Thin: validation, identity, one use case
 * each (core/admin).
 */
import * as z from '../core/zod';
import type {
  Admin,
  AdminCaller,
  FeedbackEntry,
  FeedbackFilter,
  PromptVersion,
  StoredSourceTypePolicy,
} from '../core/admin/admin';
import { cursorCodec } from '../http/cursor';
import { createHttpHandler, parseQuery, type HttpHandlerDeps } from '../http/http-handler';
import {
  createPromptRequestSchema,
  feedbackQuerySchema,
  promptSchema,
  sourceTypePolicyRequestSchema,
  sourceTypePolicyResponseSchema,
  statsQuerySchema,
} from './schema';

const noBody = z.strictObject({});
/** The keyset cursor of the feedback review. */
const feedbackCursor = cursorCodec(
  z.object({
    updatedAt: z.iso.datetime(),
    messageId: z.uuid(),
    userId: z.string().check(z.minLength(1)),
  }),
);

/**
 * One page of the tenant's feedback review, newest first, and the cursor of the next page (null
 * on the last): shared by GET /api/admin/feedback and seed 000's review, which differ only in
 * field names.
 */
export async function feedbackPage(
  admin: Admin,
  caller: AdminCaller,
  q: {
    readonly rating?: FeedbackFilter['rating'] | undefined;
    readonly cursor?: string | undefined;
    readonly limit: number;
  },
): Promise<{ rows: FeedbackEntry[]; nextCursor: string | null }> {
  const rows = await admin.feedback(caller, {
    ...(q.rating ? { rating: q.rating } : {}),
    ...(q.cursor ? { after: feedbackCursor.decode(q.cursor) } : {}),
    limit: q.limit,
  });
  const last = rows[rows.length - 1];
  return {
    rows,
    nextCursor:
      rows.length === q.limit && last
        ? feedbackCursor.encode({
            updatedAt: last.updatedAt.toISOString(),
            messageId: last.messageId,
            userId: last.userId,
          })
        : null,
  };
}

const toPrompt = (p: PromptVersion): z.infer<typeof promptSchema> => ({
  id: p.id,
  scope: p.scope,
  profile: p.profile,
  name: p.name,
  version: p.version,
  instructions: p.instructions,
  constraints: p.constraints,
  active: p.active,
  created_at: p.createdAt.toISOString(),
  created_by: p.createdBy,
});

const toSourceTypePolicy = (
  tenantId: string,
  p: StoredSourceTypePolicy,
): z.infer<typeof sourceTypePolicyResponseSchema> => ({
  tenant_id: tenantId,
  mode: p.mode,
  allowed_source_types: p.allowedSourceTypes ? [...p.allowedSourceTypes] : null,
  updated_at: p.updatedAt?.toISOString() ?? null,
  updated_by: p.updatedBy,
});

export function makeAdminHandlers(deps: HttpHandlerDeps & { admin: Admin }) {
  const { admin } = deps;
  return {
    'admin.stats': createHttpHandler(
      deps,
      { route: 'admin.stats', schema: noBody },
      async ({ identity, query }) => {
        const q = parseQuery(statsQuerySchema, query);
        const s = await admin.stats(identity, q.window_days);
        return {
          body: {
            tenant_id: identity.tenantId,
            since: s.since.toISOString(),
            documents: {
              total: Object.values(s.documents).reduce((a, b) => a + b, 0),
              by_status: s.documents,
            },
            chunks: s.chunks,
            threads: s.threads,
            messages: s.messages,
            active_users: s.activeUsers,
            answers: {
              total: s.answers.total,
              by_confidence: s.answers.byConfidence,
              by_profile: s.answers.byProfile,
              insufficient_context: s.answers.insufficientContext,
              fallback_to_generic: s.answers.fallbackToGeneric,
            },
            feedback: s.feedback,
            quota_use_by_plan: s.quotaUseByPlan.map((p) => ({
              plan: p.plan,
              month: p.month,
              users: p.users,
              answers: {
                used: p.quotas.answers.used,
                limit_per_user: p.quotas.answers.limitPerUser,
              },
              searches: {
                used: p.quotas.searches.used,
                limit_per_user: p.quotas.searches.limitPerUser,
              },
            })),
          },
        };
      },
    ),

    'admin.feedback': createHttpHandler(
      deps,
      { route: 'admin.feedback', schema: noBody },
      async ({ identity, query }) => {
        const { rows, nextCursor } = await feedbackPage(
          admin,
          identity,
          parseQuery(feedbackQuerySchema, query),
        );
        return {
          body: {
            feedback: rows.map((f) => ({
              message_id: f.messageId,
              thread_id: f.threadId,
              user_id: f.userId,
              rating: f.rating,
              comment: f.comment,
              question: f.question,
              answer: f.answer,
              confidence: f.confidence,
              profile: f.profile,
              updated_at: f.updatedAt.toISOString(),
            })),
            next_cursor: nextCursor,
          },
        };
      },
    ),

    'admin.prompts.list': createHttpHandler(
      deps,
      { route: 'admin.prompts.list', schema: noBody },
      async ({ identity }) => ({
        body: { prompts: (await admin.prompts(identity)).map(toPrompt) },
      }),
    ),

    'admin.prompts.create': createHttpHandler(
      deps,
      { route: 'admin.prompts.create', schema: createPromptRequestSchema },
      async ({ identity, body }) => {
        const created = await admin.createPrompt(
          identity,
          {
            profile: body.profile,
            name: body.name,
            instructions: body.instructions,
            constraints: body.constraints,
          },
          body.activate,
        );
        return { status: 201, body: toPrompt(created) };
      },
    ),

    'admin.prompts.activate': createHttpHandler(
      deps,
      { route: 'admin.prompts.activate', schema: noBody },
      async ({ identity, pathParameters }) => ({
        body: toPrompt(await admin.activatePrompt(identity, pathParameters.id ?? '')),
      }),
    ),

    'admin.source-policy.get': createHttpHandler(
      deps,
      { route: 'admin.source-policy.get', schema: noBody },
      async ({ identity }) => ({
        body: toSourceTypePolicy(identity.tenantId, await admin.sourceTypePolicy(identity)),
      }),
    ),

    'admin.source-policy.set': createHttpHandler(
      deps,
      { route: 'admin.source-policy.set', schema: sourceTypePolicyRequestSchema },
      async ({ identity, body }) => ({
        body: toSourceTypePolicy(
          identity.tenantId,
          await admin.setSourceTypePolicy(identity, {
            mode: body.mode,
            allowedSourceTypes: body.allowed_source_types,
          }),
        ),
      }),
    ),

    'admin.prompts.deactivate': createHttpHandler(
      deps,
      { route: 'admin.prompts.deactivate', schema: noBody },
      async ({ identity, pathParameters }) => ({
        body: toPrompt(await admin.deactivatePrompt(identity, pathParameters.id ?? '')),
      }),
    ),
  };
}
