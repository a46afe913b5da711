/**
 * The conversation store on both databases, inside a request's scope (row-level security): a
 * thread's `message_count` and `last_message_at` kept by the database as messages are appended,
 * concurrent appends included; the list ordered by the latest message; soft deletion of a thread
 * and its messages, after which no read returns or retrieves them (thread list and view, memory,
 * feedback, the training export, the admin review and statistics) while the rows stay.
 */
import { APP_GROUP_ROLE, ensureRequestRole } from '../../lambdas/adapters/postgres/app-role';
import { createAdminStore } from '../../lambdas/adapters/postgres/admin-queries';
import { createConversationRepository } from '../../lambdas/adapters/postgres/conversation-repository';
import type { Database } from '../../lambdas/adapters/postgres/database';
import { runInDbScope, type DbScope } from '../../lambdas/adapters/postgres/db-scope';
import { loadMigrations, migrate } from '../../lambdas/adapters/postgres/migrate';
import { trainingExamples } from '../../lambdas/adapters/postgres/training-queries';
import type {
  ConversationStore,
  NewAssistantMessage,
  Owner,
} from '../../lambdas/core/answer/conversations';
import { ENGINES, openTestDatabase } from '../support/databases';

const DIMENSION = 512;
/** A unit vector along `axis`, so that similarity ranks are known. */
const unit = (axis: number) =>
  Array.from({ length: DIMENSION }, (_, i) => (i === axis ? 1 : i === axis + 1 ? 0.1 : 0));

const uuid = () => crypto.randomUUID();

const answer = (
  content: string,
  extra: Partial<NewAssistantMessage> = {},
): NewAssistantMessage => ({
  id: uuid(),
  content,
  standaloneQuery: null,
  profile: 'general',
  confidence: 'high',
  avgRelevance: 0.8,
  citations: [],
  modelId: 'test-model',
  inputTokens: 10,
  outputTokens: 5,
  latencyMs: 7,
  flags: {
    used_rag: true,
    fallback_to_generic: false,
    insufficient_context: false,
    conversational: false,
    retrieval_failed: false,
  },
  prompt: 'the prompt',
  trainingEligible: true,
  ...extra,
});

describe.each(ENGINES)('conversation store on %s', (engine) => {
  let db: Database;
  let store: ConversationStore;
  const alice: Owner = { tenantId: 'acme', userId: 'alice' };
  const bob: Owner = { tenantId: 'acme', userId: 'bob' };
  const scopeOf = (o: Owner): DbScope => ({ ...o, allUsers: false });
  const as = <T>(o: Owner, fn: () => Promise<T>) => runInDbScope(scopeOf(o), fn);
  const asAdmin = <T>(fn: () => Promise<T>) =>
    runInDbScope({ tenantId: 'acme', userId: 'carol', allUsers: true }, fn);

  beforeAll(async () => {
    db = await openTestDatabase(engine);
    await ensureRequestRole(db, APP_GROUP_ROLE);
    store = createConversationRepository(db);
  });
  afterAll(() => db?.close());

  /** A thread of `owner` with one question and its answer. */
  const exchange = async (owner: Owner, title: string, axis: number) =>
    as(owner, async () => {
      const thread = await store.createThread(owner, title);
      const question = uuid();
      await store.addUserMessage(owner, thread.id, {
        id: question,
        content: `${title}: question`,
        embedding: unit(axis),
      });
      const reply = answer(`${title}: answer`);
      await store.addAssistantMessage(owner, thread.id, reply);
      return { thread, question, answer: reply.id };
    });

  it('counts appended messages on the thread and dates it by its latest message', async () => {
    const thread = await as(alice, () => store.createThread(alice, 'counters'));
    expect(thread.messageCount).toBe(0);
    expect(thread.lastMessageAt.getTime()).toBe(thread.createdAt.getTime());

    await as(alice, () =>
      store.addUserMessage(alice, thread.id, { id: uuid(), content: 'q', embedding: null }),
    );
    await as(alice, () => store.addAssistantMessage(alice, thread.id, answer('a')));
    const after = (await as(alice, () => store.getThread(alice, thread.id)))!;
    const messages = await as(alice, () => store.messages(alice, thread.id));
    expect(after.messageCount).toBe(2);
    expect(after.lastMessageAt.getTime()).toBe(messages[1]!.createdAt.getTime());
    expect(after.lastMessageAt.getTime()).toBeGreaterThanOrEqual(thread.lastMessageAt.getTime());
  });

  it('keeps the count exact under concurrent appends to one thread', async () => {
    const thread = await as(alice, () => store.createThread(alice, 'concurrent'));
    const n = 24;
    await Promise.all(
      Array.from({ length: n }, (_, i) =>
        as(alice, () =>
          i % 2 === 0
            ? store.addUserMessage(alice, thread.id, {
                id: uuid(),
                content: `q${i}`,
                embedding: null,
              })
            : store.addAssistantMessage(alice, thread.id, answer(`a${i}`)),
        ),
      ),
    );
    const after = (await as(alice, () => store.getThread(alice, thread.id)))!;
    const messages = await as(alice, () => store.messages(alice, thread.id));
    expect(messages).toHaveLength(n);
    expect(after.messageCount).toBe(n);
    expect(after.lastMessageAt.getTime()).toBe(
      Math.max(...messages.map((m) => m.createdAt.getTime())),
    );
  });

  it('lists threads by their latest message, not by creation', async () => {
    const older = await exchange(bob, 'older', 10);
    const newer = await exchange(bob, 'newer', 20);
    let list = await as(bob, () => store.listThreads(bob, { limit: 10, includeArchived: false }));
    expect(list.map((t) => t.id).slice(0, 2)).toEqual([newer.thread.id, older.thread.id]);
    await as(bob, () =>
      store.addUserMessage(bob, older.thread.id, { id: uuid(), content: 'again', embedding: null }),
    );
    list = await as(bob, () => store.listThreads(bob, { limit: 10, includeArchived: false }));
    expect(list.map((t) => t.id).slice(0, 2)).toEqual([older.thread.id, newer.thread.id]);
    expect(list[0]!.messageCount).toBe(3);
  });

  it('counts the messages of threads that existed before the counters (migration 0015)', async () => {
    const old = await openTestDatabase(engine, { migrate: false });
    try {
      const all = await loadMigrations();
      await migrate(
        old,
        all.filter((m) => m.version < '0015'),
      );
      const { rows } = await old.query<{ id: string }>(
        `INSERT INTO threads (tenant_id, user_id, title) VALUES ('acme', 'alice', 'busy'), ('acme', 'alice', 'empty')
         RETURNING id`,
      );
      const [busy, empty] = rows.map((r) => r.id);
      for (const [i, at] of [
        '2024-01-01T10:00:00Z',
        '2024-01-01T10:00:05Z',
        '2024-01-02T09:00:00Z',
      ].entries())
        await old.query(
          `INSERT INTO messages (thread_id, tenant_id, user_id, role, content, created_at)
           VALUES ($1, 'acme', 'alice', $2, 'm', $3)`,
          [busy, i % 2 ? 'assistant' : 'user', at],
        );
      await migrate(old, all);
      const after = await old.query<{
        id: string;
        message_count: number;
        last: string;
        created: string;
      }>(
        `SELECT id, message_count, to_char(last_message_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') AS last,
                to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') AS created
           FROM threads`,
      );
      const byId = new Map(after.rows.map((r) => [r.id, r]));
      expect(byId.get(busy!)).toMatchObject({ message_count: 3, last: '2024-01-02 09:00:00' });
      expect(byId.get(empty!)?.message_count).toBe(0);
      expect(byId.get(empty!)?.last).toBe(byId.get(empty!)?.created);
    } finally {
      await old.close();
    }
  });

  describe('soft deletion', () => {
    let kept: Awaited<ReturnType<typeof exchange>>;
    let gone: Awaited<ReturnType<typeof exchange>>;
    let deletedAt: Date | null;

    beforeAll(async () => {
      kept = await exchange(alice, 'kept', 100);
      gone = await exchange(alice, 'gone', 200);
      await as(alice, () => store.setFeedback(alice, kept.answer, 'positive', 'kept note'));
      await as(alice, () => store.setFeedback(alice, gone.answer, 'negative', 'gone note'));
      // Another user cannot delete it.
      expect(await as(bob, () => store.deleteThread(bob, gone.thread.id))).toBeNull();
      deletedAt = await as(alice, () => store.deleteThread(alice, gone.thread.id));
    });

    it('stamps the thread and its messages and keeps the rows', async () => {
      expect(deletedAt).toBeInstanceOf(Date);
      // Thread and messages carry the same stamp (compared in SQL, at full precision).
      const { rows } = await db.query<{ n: string; stamped: string }>(
        `SELECT count(*) AS n,
                count(*) FILTER (WHERE m.deleted_at = t.deleted_at) AS stamped
           FROM messages m JOIN threads t ON t.id = m.thread_id WHERE m.thread_id = $1`,
        [gone.thread.id],
      );
      expect(Number(rows[0]!.n)).toBe(2);
      expect(Number(rows[0]!.stamped)).toBe(2);
      const thread = await db.query<{ deleted_at: Date | null }>(
        'SELECT deleted_at FROM threads WHERE id = $1',
        [gone.thread.id],
      );
      expect(thread.rows[0]!.deleted_at).toEqual(deletedAt);
      // The other thread is untouched.
      const live = await db.query<{ n: string }>(
        'SELECT count(*) AS n FROM messages WHERE thread_id = $1 AND deleted_at IS NULL',
        [kept.thread.id],
      );
      expect(Number(live.rows[0]!.n)).toBe(2);
    });

    it('is gone from the thread view and the list, archived ones included', async () => {
      expect(await as(alice, () => store.getThread(alice, gone.thread.id))).toBeNull();
      expect(await as(alice, () => store.messages(alice, gone.thread.id))).toEqual([]);
      const list = await as(alice, () =>
        store.listThreads(alice, { limit: 100, includeArchived: true }),
      );
      expect(list.map((t) => t.id)).toContain(kept.thread.id);
      expect(list.map((t) => t.id)).not.toContain(gone.thread.id);
      expect(await as(alice, () => store.deleteThread(alice, gone.thread.id))).toBeNull();
      // Naming its id again (the chat route's openThread) neither revives it nor makes a new one.
      expect(await as(alice, () => store.openThread(alice, gone.thread.id, 'again'))).toBeNull();
      const opened = await as(alice, () => store.openThread(alice, kept.thread.id, 'again'));
      expect(opened).toMatchObject({ id: kept.thread.id, messageCount: 2 });
    });

    it('is never retrieved as memory', async () => {
      const similar = await as(alice, () => store.similarMessages(alice, unit(200), 50, uuid()));
      expect(similar.map((s) => s.content)).not.toContain('gone: question');
      expect(similar.map((s) => s.content)).toContain('kept: question');
    });

    it('takes no feedback and leaves the training export and the admin review', async () => {
      expect(await as(alice, () => store.setFeedback(alice, gone.answer, 'positive', null))).toBe(
        false,
      );
      const exported = (await trainingExamples(db, 'acme')).map((e) => e.message_id);
      expect(exported).toContain(kept.answer);
      expect(exported).not.toContain(gone.answer);
      const admin = createAdminStore(db);
      const review = await asAdmin(() => admin.feedback('acme', { limit: 100 }));
      expect(review.map((f) => f.messageId)).toContain(kept.answer);
      expect(review.map((f) => f.messageId)).not.toContain(gone.answer);
      expect(review.find((f) => f.messageId === kept.answer)?.comment).toBe('kept note');
    });

    it('leaves deleted rows out of the admin statistics', async () => {
      const admin = createAdminStore(db);
      const stats = await asAdmin(() => admin.stats('acme', new Date(0)));
      const live = await db.query<{ threads: string; messages: string }>(
        `SELECT (SELECT count(*) FROM threads WHERE tenant_id = 'acme' AND deleted_at IS NULL) AS threads,
                (SELECT count(*) FROM messages WHERE tenant_id = 'acme' AND deleted_at IS NULL) AS messages`,
      );
      expect(stats.threads).toBe(Number(live.rows[0]!.threads));
      expect(stats.messages).toBe(Number(live.rows[0]!.messages));
      const all = await db.query<{ n: string }>(
        `SELECT count(*) AS n FROM messages WHERE tenant_id = 'acme'`,
      );
      expect(stats.messages).toBeLessThan(Number(all.rows[0]!.n));
    });

    it('deletes a message appended to a thread already deleted', async () => {
      // What a concurrent append that loses the race to the deletion leaves behind.
      const late = uuid();
      await db.query(
        `INSERT INTO messages (id, thread_id, tenant_id, user_id, role, content)
         VALUES ($1, $2, 'acme', 'alice', 'user', 'late')`,
        [late, gone.thread.id],
      );
      const { rows } = await db.query<{ deleted_at: Date | null }>(
        'SELECT deleted_at FROM messages WHERE id = $1',
        [late],
      );
      expect(rows[0]!.deleted_at).toEqual(deletedAt);
    });

    it('leaves out a single deleted message wherever messages are read', async () => {
      const t = await exchange(alice, 'partly', 300);
      await db.query('UPDATE messages SET deleted_at = now() WHERE id = $1', [t.question]);
      const messages = await as(alice, () => store.messages(alice, t.thread.id));
      expect(messages.map((m) => m.id)).toEqual([t.answer]);
      const similar = await as(alice, () => store.similarMessages(alice, unit(300), 50, uuid()));
      expect(similar.map((s) => s.content)).not.toContain('partly: question');
      const example = (await trainingExamples(db, 'acme')).find((e) => e.message_id === t.answer);
      expect(example?.question).toBeNull();
    });
  });
});
