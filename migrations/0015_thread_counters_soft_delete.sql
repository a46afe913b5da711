-- 0015: threads carry their message count and the time of their last message, kept by the
-- database as messages are appended; threads and messages are deleted softly
-- (docs/decisions/0142-thread-counters-and-soft-deletion.md).
--
-- The counters are kept by a trigger on messages, in the appending statement's transaction, so
-- every writer keeps them and none can forget: the thread's row lock serialises concurrent
-- appends to one thread and its deletion, and `message_count + 1` reads the row as the previous
-- append left it. The trigger runs as the writer, under the threads policy of 0013 (a user
-- appends to their own thread only).
--
-- Soft deletion: `deleted_at` on a thread and on each of its messages, set together
-- (ConversationStore.deleteThread). Readers leave out rows whose `deleted_at` is set.

ALTER TABLE threads
  ADD COLUMN message_count integer NOT NULL DEFAULT 0 CHECK (message_count >= 0),
  ADD COLUMN last_message_at timestamptz NOT NULL DEFAULT now(),
  ADD COLUMN deleted_at timestamptz;

ALTER TABLE messages ADD COLUMN deleted_at timestamptz;

-- Existing threads: counted from their messages; a thread without messages dates from its creation.
UPDATE threads t
   SET message_count = m.n, last_message_at = m.last
  FROM (SELECT thread_id, count(*)::integer AS n, max(created_at) AS last
          FROM messages GROUP BY thread_id) m
 WHERE m.thread_id = t.id;
UPDATE threads t SET last_message_at = t.created_at
 WHERE NOT EXISTS (SELECT 1 FROM messages m WHERE m.thread_id = t.id);

CREATE FUNCTION gw_thread_message_appended() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  thread_deleted_at timestamptz;
BEGIN
  UPDATE threads
     SET message_count = message_count + 1,
         last_message_at = greatest(last_message_at, NEW.created_at),
         updated_at = now()
   WHERE id = NEW.thread_id
  RETURNING deleted_at INTO thread_deleted_at;
  -- A message appended while its thread was being deleted is deleted with it.
  IF thread_deleted_at IS NOT NULL THEN
    NEW.deleted_at := coalesce(NEW.deleted_at, thread_deleted_at);
  END IF;
  RETURN NEW;
END
$$;
CREATE TRIGGER messages_thread_counters BEFORE INSERT ON messages
  FOR EACH ROW EXECUTE FUNCTION gw_thread_message_appended();

-- The thread list: the owner's live threads, most recent message first.
DROP INDEX threads_owner_idx;
CREATE INDEX threads_owner_recent_idx ON threads (tenant_id, user_id, last_message_at DESC)
  WHERE deleted_at IS NULL;
