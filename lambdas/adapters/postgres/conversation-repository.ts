/**
 * Threads, messages, feedback, prompt configs and consent on PostgreSQL / PGlite. Every read is
 * owner-scoped and leaves out soft-deleted rows (`deleted_at`). A thread's `message_count` and
 * `last_message_at` are kept by the database as messages are inserted (migrations/0015).
 */
import type {
  ConversationStore,
  MessageRecord,
  PromptConfig,
  PromptStore,
  ThreadRecord,
} from '../../core/answer/conversations';
import { toVectorLiteral, type Database } from './database';
import { isUuid } from './sql-params';

interface ThreadRow {
  id: string;
  title: string;
  status: 'active' | 'archived';
  created_at: Date;
  updated_at: Date;
  message_count: number;
  last_message_at: Date;
}

const THREAD_COLUMNS = 'id, title, status, created_at, updated_at, message_count, last_message_at';

const toThread = (r: ThreadRow): ThreadRecord => ({
  id: r.id,
  title: r.title,
  status: r.status,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  messageCount: Number(r.message_count),
  lastMessageAt: r.last_message_at,
});

export function createConversationRepository(db: Database): ConversationStore {
  return {
    async createThread(owner, title) {
      const { rows } = await db.query<ThreadRow>(
        `INSERT INTO threads (tenant_id, user_id, title) VALUES ($1, $2, $3)
         RETURNING ${THREAD_COLUMNS}`,
        [owner.tenantId, owner.userId, title],
      );
      return toThread(rows[0]!);
    },

    async openThread(owner, threadId, title) {
      if (!isUuid(threadId)) return null;
      // One statement: the insert, or (the id taken) the owner's existing thread. The SELECT
      // reads the statement's snapshot, so it never sees the row the INSERT adds; a thread of
      // another owner is in neither branch.
      const { rows } = await db.query<ThreadRow>(
        `WITH inserted AS (
           INSERT INTO threads (id, tenant_id, user_id, title) VALUES ($1, $2, $3, $4)
           ON CONFLICT (id) DO NOTHING
           RETURNING ${THREAD_COLUMNS})
         SELECT ${THREAD_COLUMNS} FROM inserted
         UNION ALL
         SELECT ${THREAD_COLUMNS} FROM threads
          WHERE id = $1 AND tenant_id = $2 AND user_id = $3 AND deleted_at IS NULL`,
        [threadId, owner.tenantId, owner.userId, title],
      );
      return rows[0] ? toThread(rows[0]) : null;
    },

    async getThread(owner, threadId) {
      if (!isUuid(threadId)) return null;
      const { rows } = await db.query<ThreadRow>(
        `SELECT ${THREAD_COLUMNS} FROM threads
          WHERE id = $1 AND tenant_id = $2 AND user_id = $3 AND deleted_at IS NULL`,
        [threadId, owner.tenantId, owner.userId],
      );
      return rows[0] ? toThread(rows[0]) : null;
    },

    async listThreads(owner, options) {
      const { rows } = await db.query<ThreadRow>(
        `SELECT ${THREAD_COLUMNS} FROM threads
          WHERE tenant_id = $1 AND user_id = $2 AND deleted_at IS NULL
            AND ($3::boolean OR status = 'active')
          ORDER BY last_message_at DESC, id DESC LIMIT $4`,
        [owner.tenantId, owner.userId, options.includeArchived, options.limit],
      );
      return rows.map(toThread);
    },

    async deleteThread(owner, threadId) {
      if (!isUuid(threadId)) return null;
      return db.transaction(async (tx) => {
        // The thread's row first: its lock orders this deletion with concurrent appends, whose
        // trigger stamps a message appended after it (migrations/0015).
        const { rows } = await tx.query<{ deleted_at: Date }>(
          `UPDATE threads SET deleted_at = now(), updated_at = now()
            WHERE id = $1 AND tenant_id = $2 AND user_id = $3 AND deleted_at IS NULL
           RETURNING deleted_at`,
          [threadId, owner.tenantId, owner.userId],
        );
        const deletedAt = rows[0]?.deleted_at;
        if (!deletedAt) return null;
        // now() is the transaction's start: the same instant as the thread's stamp. A statement
        // of its own, so that it sees the messages of appends that held the lock before us.
        await tx.query(
          `UPDATE messages SET deleted_at = now()
            WHERE thread_id = $1 AND tenant_id = $2 AND user_id = $3 AND deleted_at IS NULL`,
          [threadId, owner.tenantId, owner.userId],
        );
        return deletedAt;
      });
    },

    async messages(owner, threadId, limit) {
      const { rows } = await db.query<{
        id: string;
        thread_id: string;
        role: 'user' | 'assistant';
        content: string;
        created_at: Date;
        profile: string | null;
        confidence: MessageRecord['confidence'];
        avg_relevance: number | null;
        sources: MessageRecord['citations'];
        model_id: string | null;
        input_tokens: number | null;
        output_tokens: number | null;
        latency_ms: number | null;
        flags: MessageRecord['flags'];
        rating: string | null;
        comment: string | null;
      }>(
        `SELECT * FROM (
           SELECT m.id, m.thread_id, m.role, m.content, m.created_at, m.profile, m.confidence, m.avg_relevance,
                  m.sources, m.model_id, m.input_tokens, m.output_tokens, m.latency_ms, m.flags,
                  f.rating, f.comment
             FROM messages m
             LEFT JOIN feedback f ON f.message_id = m.id AND f.user_id = m.user_id
            WHERE m.thread_id = $1 AND m.tenant_id = $2 AND m.user_id = $3 AND m.deleted_at IS NULL
            ORDER BY m.created_at DESC, m.role DESC
            LIMIT $4) recent
         ORDER BY created_at, role DESC`,
        [threadId, owner.tenantId, owner.userId, limit ?? 10_000],
      );
      return rows.map((r) => ({
        id: r.id,
        threadId: r.thread_id,
        role: r.role,
        content: r.content,
        createdAt: r.created_at,
        profile: r.profile,
        confidence: r.confidence,
        avgRelevance: r.avg_relevance,
        citations: r.sources,
        modelId: r.model_id,
        inputTokens: r.input_tokens,
        outputTokens: r.output_tokens,
        latencyMs: r.latency_ms,
        flags: r.flags,
        feedback: r.rating ? { rating: r.rating, comment: r.comment } : null,
      }));
    },

    async addUserMessage(owner, threadId, message) {
      // The insert's trigger counts the message on its thread, in the same transaction.
      await db.query(
        `INSERT INTO messages (id, thread_id, tenant_id, user_id, role, content, embedding)
         VALUES ($1, $2, $3, $4, 'user', $5, $6::vector)`,
        [
          message.id,
          threadId,
          owner.tenantId,
          owner.userId,
          message.content,
          message.embedding ? toVectorLiteral(message.embedding) : null,
        ],
      );
    },

    async addAssistantMessage(owner, threadId, m) {
      await db.query(
        `INSERT INTO messages (id, thread_id, tenant_id, user_id, role, content, standalone_query, profile, confidence,
                               avg_relevance, sources, model_id, input_tokens, output_tokens, latency_ms, flags,
                               prompt, training_eligible, created_at)
         VALUES ($1, $2, $3, $4, 'assistant', $5, $6, $7, $8, $9, $10::jsonb, $11, $12, $13, $14, $15::jsonb, $16, $17,
                 clock_timestamp())`,
        [
          m.id,
          threadId,
          owner.tenantId,
          owner.userId,
          m.content,
          m.standaloneQuery,
          m.profile,
          m.confidence,
          m.avgRelevance,
          JSON.stringify(m.citations),
          m.modelId,
          m.inputTokens,
          m.outputTokens,
          m.latencyMs,
          JSON.stringify(m.flags),
          m.trainingEligible ? m.prompt : null,
          m.trainingEligible,
        ],
      );
    },

    async similarMessages(owner, embedding, limit, excludeMessageId) {
      const { rows } = await db.query<{ content: string; score: number }>(
        `SELECT content, (1 - (embedding <=> $3::vector))::float8 AS score
           FROM messages
          WHERE tenant_id = $1 AND user_id = $2 AND role = 'user' AND embedding IS NOT NULL AND id <> $5
            AND deleted_at IS NULL
          ORDER BY embedding <=> $3::vector
          LIMIT $4`,
        [owner.tenantId, owner.userId, toVectorLiteral(embedding), limit, excludeMessageId],
      );
      return rows.map((r) => ({ content: r.content, score: Number(r.score) }));
    },

    async setFeedback(owner, messageId, rating, comment) {
      if (!isUuid(messageId)) return false;
      const { rowCount } = await db.query(
        `INSERT INTO feedback (message_id, tenant_id, user_id, rating, comment)
         SELECT m.id, m.tenant_id, m.user_id, $4, $5 FROM messages m
          WHERE m.id = $1 AND m.tenant_id = $2 AND m.user_id = $3 AND m.role = 'assistant'
            AND m.deleted_at IS NULL
         ON CONFLICT (message_id, user_id) DO UPDATE SET rating = EXCLUDED.rating, comment = EXCLUDED.comment, updated_at = now()`,
        [messageId, owner.tenantId, owner.userId, rating, comment],
      );
      return rowCount > 0;
    },

    async trainingConsent(owner) {
      // A user's own choice wins over the tenant's.
      const { rows } = await db.query<{ opted_in: boolean }>(
        `SELECT opted_in FROM training_consent
          WHERE tenant_id = $1 AND user_id IN ($2, '*')
          ORDER BY (user_id = '*') LIMIT 1`,
        [owner.tenantId, owner.userId],
      );
      return rows[0]?.opted_in ?? false;
    },
  };
}

export function createPromptRepository(db: Database): PromptStore {
  return {
    async activeConfigs(tenantId) {
      // Per profile, the tenant's own active version if it has one, else the default.
      const { rows } = await db.query<PromptConfig>(
        `SELECT DISTINCT ON (profile) id, name, profile, version, instructions, constraints, active
           FROM prompt_configs
          WHERE active AND (tenant_id IS NULL OR tenant_id = $1)
          ORDER BY profile, tenant_id NULLS LAST`,
        [tenantId ?? null],
      );
      return rows;
    },
  };
}
