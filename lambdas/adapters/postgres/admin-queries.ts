/**
 * The `AdminStore` port: tenant statistics, feedback, prompt versions and the source-type policy.
 * All tenant-scoped.
 */
import type {
  AdminStore,
  FeedbackEntry,
  PromptVersion,
  StoredSourceTypePolicy,
  TenantStats,
} from '../../core/admin/admin';
import { DEFAULT_SOURCE_TYPE_POLICY, type SourceTypeMode } from '../../core/retrieval/source-types';
import type { Database, Queryable } from './database';
import { isUuid, SqlParams } from './sql-params';
import { tenantHoldingsSql } from './visibility-sql';

interface PromptRow {
  id: string;
  name: string;
  profile: string;
  version: number;
  instructions: string;
  constraints: PromptVersion['constraints'];
  active: boolean;
  tenant_id: string | null;
  created_at: Date;
  created_by: string | null;
}

const PROMPT_COLUMNS =
  'id, name, profile, version, instructions, constraints, active, tenant_id, created_at, created_by';

const toPrompt = (r: PromptRow): PromptVersion => ({
  id: r.id,
  name: r.name,
  profile: r.profile,
  version: r.version,
  instructions: r.instructions,
  constraints: r.constraints,
  active: r.active,
  scope: r.tenant_id === null ? 'default' : 'tenant',
  createdAt: r.created_at,
  createdBy: r.created_by,
});

interface SourceTypePolicyRow {
  source_type_mode: SourceTypeMode;
  allowed_source_types: string[] | null;
  updated_at: Date;
  updated_by: string | null;
}

const SOURCE_TYPE_POLICY_COLUMNS = 'source_type_mode, allowed_source_types, updated_at, updated_by';

const toSourceTypePolicy = (r: SourceTypePolicyRow | undefined): StoredSourceTypePolicy =>
  r
    ? {
        mode: r.source_type_mode,
        allowedSourceTypes: r.allowed_source_types,
        updatedAt: r.updated_at,
        updatedBy: r.updated_by,
      }
    : { ...DEFAULT_SOURCE_TYPE_POLICY, updatedAt: null, updatedBy: null };

const counts = (rows: { key: string | null; n: string | number }[]) =>
  Object.fromEntries(rows.map((r) => [r.key ?? 'none', Number(r.n)]));

/**
 * Whether a default row is in effect for the tenant: it is active and the tenant has no active
 * version of its own for that profile.
 */
const effectiveActive = (alias: string) => `
  CASE WHEN ${alias}.tenant_id IS NULL
       THEN ${alias}.active AND NOT EXISTS (
              SELECT 1 FROM prompt_configs own
               WHERE own.tenant_id = $1 AND own.profile = ${alias}.profile AND own.active)
       ELSE ${alias}.active END`;

/**
 * Serialises the writes to one tenant's versions of a profile (numbering, activation) until the
 * transaction ends: two activations at once would each switch the other's version off before it
 * was committed, and both switch their own on against the one-active index.
 */
async function lockProfile(tx: Queryable, tenantId: string, profile: string): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`prompt:${tenantId}:${profile}`]);
}

async function deactivateOwn(tx: Queryable, tenantId: string, profile: string): Promise<void> {
  await tx.query(
    `UPDATE prompt_configs SET active = false WHERE tenant_id = $1 AND profile = $2 AND active`,
    [tenantId, profile],
  );
}

export function createAdminStore(db: Database): AdminStore {
  return {
    async stats(tenantId, since): Promise<TenantStats> {
      // The documents the tenant holds, as the visibility rule names them (visibility-sql.ts).
      const held = new SqlParams();
      const [documents, totals, confidence, profiles, flags, feedback] = await Promise.all([
        db.query<{ key: string; n: string }>(
          `SELECT d.status AS key, count(*) AS n FROM documents d
            WHERE ${tenantHoldingsSql('d', tenantId, held)} GROUP BY d.status`,
          held.values,
        ),
        db.query<{ chunks: string; threads: string; messages: string; active_users: string }>(
          `SELECT (SELECT count(*) FROM chunks WHERE tenant_id = $1) AS chunks,
                  (SELECT count(*) FROM threads WHERE tenant_id = $1 AND deleted_at IS NULL) AS threads,
                  (SELECT count(*) FROM messages WHERE tenant_id = $1 AND deleted_at IS NULL) AS messages,
                  (SELECT count(DISTINCT user_id) FROM messages
                    WHERE tenant_id = $1 AND role = 'user' AND created_at >= $2
                      AND deleted_at IS NULL) AS active_users`,
          [tenantId, since],
        ),
        db.query<{ key: string | null; n: string }>(
          `SELECT confidence AS key, count(*) AS n FROM messages
            WHERE tenant_id = $1 AND role = 'assistant' AND created_at >= $2 AND deleted_at IS NULL
            GROUP BY confidence`,
          [tenantId, since],
        ),
        db.query<{ key: string | null; n: string }>(
          `SELECT profile AS key, count(*) AS n FROM messages
            WHERE tenant_id = $1 AND role = 'assistant' AND created_at >= $2 AND deleted_at IS NULL
            GROUP BY profile`,
          [tenantId, since],
        ),
        db.query<{ insufficient: string; fallback: string }>(
          `SELECT count(*) FILTER (WHERE (flags->>'insufficient_context')::boolean) AS insufficient,
                  count(*) FILTER (WHERE (flags->>'fallback_to_generic')::boolean) AS fallback
             FROM messages
            WHERE tenant_id = $1 AND role = 'assistant' AND created_at >= $2 AND deleted_at IS NULL`,
          [tenantId, since],
        ),
        db.query<{ key: string; n: string }>(
          `SELECT f.rating AS key, count(*) AS n FROM feedback f
             JOIN messages m ON m.id = f.message_id AND m.deleted_at IS NULL
            WHERE f.tenant_id = $1 AND f.updated_at >= $2 GROUP BY f.rating`,
          [tenantId, since],
        ),
      ]);
      const t = totals.rows[0];
      const byConfidence = counts(confidence.rows);
      return {
        documents: counts(documents.rows),
        chunks: Number(t?.chunks ?? 0),
        threads: Number(t?.threads ?? 0),
        messages: Number(t?.messages ?? 0),
        activeUsers: Number(t?.active_users ?? 0),
        answers: {
          total: Object.values(byConfidence).reduce((a, b) => a + b, 0),
          byConfidence,
          byProfile: counts(profiles.rows),
          insufficientContext: Number(flags.rows[0]?.insufficient ?? 0),
          fallbackToGeneric: Number(flags.rows[0]?.fallback ?? 0),
        },
        feedback: counts(feedback.rows),
      };
    },

    async feedback(tenantId, filter): Promise<FeedbackEntry[]> {
      const { rows } = await db.query<{
        message_id: string;
        thread_id: string;
        user_id: string;
        rating: FeedbackEntry['rating'];
        comment: string | null;
        question: string | null;
        answer: string;
        confidence: string | null;
        profile: string | null;
        created_at: Date;
        updated_at: Date;
      }>(
        `SELECT f.message_id, m.thread_id, f.user_id, f.rating, f.comment, m.content AS answer,
                m.confidence, m.profile, f.created_at, f.updated_at,
                (SELECT q.content FROM messages q
                  WHERE q.thread_id = m.thread_id AND q.role = 'user' AND q.created_at <= m.created_at
                    AND q.deleted_at IS NULL
                  ORDER BY q.created_at DESC LIMIT 1) AS question
           FROM feedback f JOIN messages m ON m.id = f.message_id AND m.tenant_id = f.tenant_id
          WHERE f.tenant_id = $1 AND m.deleted_at IS NULL
            AND ($2::text IS NULL OR f.rating = $2)
            AND ($3::timestamptz IS NULL
                 OR (f.updated_at, f.message_id::text, f.user_id) < ($3, $4::text, $5::text))
          ORDER BY f.updated_at DESC, f.message_id::text DESC, f.user_id DESC
          LIMIT $6`,
        [
          tenantId,
          filter.rating ?? null,
          filter.after?.updatedAt ?? null,
          filter.after?.messageId ?? null,
          filter.after?.userId ?? null,
          filter.limit,
        ],
      );
      return rows.map((r) => ({
        messageId: r.message_id,
        threadId: r.thread_id,
        userId: r.user_id,
        rating: r.rating,
        comment: r.comment,
        question: r.question,
        answer: r.answer,
        confidence: r.confidence,
        profile: r.profile,
        createdAt: r.created_at,
        updatedAt: r.updated_at,
      }));
    },

    async prompts(tenantId) {
      const { rows } = await db.query<PromptRow>(
        `SELECT id, name, profile, version, instructions, constraints, ${effectiveActive('p')} AS active,
                tenant_id, created_at, created_by
           FROM prompt_configs p
          WHERE p.tenant_id = $1 OR p.tenant_id IS NULL
          ORDER BY p.profile, p.version, p.tenant_id NULLS FIRST`,
        [tenantId],
      );
      return rows.map(toPrompt);
    },

    async createPrompt(tenantId, createdBy, version, activate) {
      return db.transaction(async (tx) => {
        await lockProfile(tx, tenantId, version.profile);
        if (activate) await deactivateOwn(tx, tenantId, version.profile);
        // The constraints the version states, over those of its profile's built-in default: a
        // version keeps its capability's family, detection and retrieval policy unless it says
        // otherwise (docs/decisions/0160-prompt-versions-inherit-the-built-in-definition.md).
        const { rows } = await tx.query<PromptRow>(
          `INSERT INTO prompt_configs (tenant_id, created_by, name, profile, version, instructions,
                                       constraints, active)
           SELECT $1, $2, $3, $4,
                  coalesce((SELECT max(version) FROM prompt_configs
                             WHERE profile = $4 AND (tenant_id = $1 OR tenant_id IS NULL)), 0) + 1,
                  $5,
                  coalesce((SELECT d.constraints FROM prompt_configs d
                             WHERE d.profile = $4 AND d.tenant_id IS NULL
                             ORDER BY d.active DESC, d.version DESC LIMIT 1), '{}'::jsonb)
                    || $6::jsonb,
                  $7
           RETURNING ${PROMPT_COLUMNS}`,
          [
            tenantId,
            createdBy,
            version.name,
            version.profile,
            version.instructions,
            JSON.stringify(version.constraints),
            activate,
          ],
        );
        return toPrompt(rows[0] as PromptRow);
      });
    },

    async activatePrompt(tenantId, id) {
      if (!isUuid(id)) return null;
      return db.transaction(async (tx) => {
        const { rows } = await tx.query<PromptRow>(
          `SELECT ${PROMPT_COLUMNS} FROM prompt_configs
            WHERE id = $2::uuid AND (tenant_id = $1 OR tenant_id IS NULL)`,
          [tenantId, id],
        );
        const row = rows[0];
        if (!row) return null;
        if (row.tenant_id === null && !row.active) return null; // a retired default
        await lockProfile(tx, tenantId, row.profile);
        await deactivateOwn(tx, tenantId, row.profile);
        if (row.tenant_id !== null) {
          await tx.query('UPDATE prompt_configs SET active = true WHERE id = $1::uuid', [id]);
        }
        // A default row becomes effective again once the tenant's own versions are inactive.
        return toPrompt({ ...row, active: true });
      });
    },

    async sourceTypePolicy(tenantId) {
      const { rows } = await db.query<SourceTypePolicyRow>(
        `SELECT ${SOURCE_TYPE_POLICY_COLUMNS} FROM tenant_policies WHERE tenant_id = $1`,
        [tenantId],
      );
      return toSourceTypePolicy(rows[0]);
    },

    async setSourceTypePolicy(tenantId, updatedBy, policy) {
      const { rows } = await db.query<SourceTypePolicyRow>(
        `INSERT INTO tenant_policies (tenant_id, source_type_mode, allowed_source_types, updated_by)
         VALUES ($1, $2, $3::text[], $4)
         ON CONFLICT (tenant_id) DO UPDATE
            SET source_type_mode = EXCLUDED.source_type_mode,
                allowed_source_types = EXCLUDED.allowed_source_types,
                updated_by = EXCLUDED.updated_by,
                updated_at = now()
         RETURNING ${SOURCE_TYPE_POLICY_COLUMNS}`,
        [
          tenantId,
          policy.mode,
          policy.allowedSourceTypes ? [...policy.allowedSourceTypes] : null,
          updatedBy,
        ],
      );
      return toSourceTypePolicy(rows[0]);
    },

    async deactivatePrompt(tenantId, id) {
      if (!isUuid(id)) return null;
      const { rows } = await db.query<PromptRow>(
        `UPDATE prompt_configs SET active = false
          WHERE id = $2::uuid AND tenant_id = $1
          RETURNING ${PROMPT_COLUMNS}`,
        [tenantId, id],
      );
      return rows[0] ? toPrompt(rows[0]) : null;
    },
  };
}
