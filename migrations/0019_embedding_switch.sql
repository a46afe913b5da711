-- 0019: switching embedding models without downtime (docs/decisions/0148-switching-embedding-models.md).
--
-- A switch re-embeds every chunk into `chunks.embedding_next` (added when a switch begins, at the
-- target model's dimension, with its own HNSW index) while search keeps reading `embedding`.
-- When no chunk lacks a next vector, one transaction drops the old column and its index and
-- renames the new ones into their place. These functions are owned by the migrating role and run
-- with its rights (the application's login owns no table and is walled by row-level security):
-- only the application's group may call them (app-role.ts grants it).

-- The live model's settings without secrets, so that a process configured with another model can
-- still embed queries with the live one until the switch completes (NULL: recorded before this).
ALTER TABLE embedding_config ADD COLUMN settings jsonb;

-- The switch in progress, if any (a single row): the target model and its settings.
CREATE TABLE embedding_switch (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  model_id text NOT NULL,
  dimension integer NOT NULL CHECK (dimension BETWEEN 1 AND 16000),
  settings jsonb,
  started_at timestamptz NOT NULL DEFAULT now()
);

-- The switch's writes of `embedding_next` change no keyword statistics: the statistics triggers
-- of 0002 skip statements run with groundwork.embedding_switch = 'on'.
CREATE OR REPLACE FUNCTION gw_chunks_stats_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('groundwork.embedding_switch', true) = 'on' THEN RETURN NULL; END IF;
  INSERT INTO term_stats (tenant_id, term, doc_freq)
  SELECT n.tenant_id, l.lexeme, count(*) FROM new_rows n, unnest(n.fts) l
  GROUP BY 1, 2 ORDER BY 1, 2
  ON CONFLICT (tenant_id, term) DO UPDATE SET doc_freq = term_stats.doc_freq + EXCLUDED.doc_freq;
  INSERT INTO tenant_stats (tenant_id, chunk_count, total_length)
  SELECT tenant_id, count(*), sum(fts_length) FROM new_rows GROUP BY 1 ORDER BY 1
  ON CONFLICT (tenant_id) DO UPDATE SET
    chunk_count = tenant_stats.chunk_count + EXCLUDED.chunk_count,
    total_length = tenant_stats.total_length + EXCLUDED.total_length;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION gw_chunks_stats_remove() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('groundwork.embedding_switch', true) = 'on' THEN RETURN NULL; END IF;
  UPDATE term_stats t SET doc_freq = t.doc_freq - o.n
  FROM (SELECT o.tenant_id, l.lexeme, count(*) AS n FROM old_rows o, unnest(o.fts) l GROUP BY 1, 2 ORDER BY 1, 2) o
  WHERE t.tenant_id = o.tenant_id AND t.term = o.lexeme;
  UPDATE tenant_stats t SET chunk_count = t.chunk_count - o.n, total_length = t.total_length - o.len
  FROM (SELECT tenant_id, count(*) AS n, sum(fts_length) AS len FROM old_rows GROUP BY 1 ORDER BY 1) o
  WHERE t.tenant_id = o.tenant_id;
  DELETE FROM term_stats WHERE doc_freq <= 0;
  RETURN NULL;
END $$;

-- Claims up to `batch` chunks that have no next vector, across tenants, locking them for the
-- caller's transaction (SKIP LOCKED: two workers never take the same chunk). Returns what the
-- ingestion pipeline embeds: the chunk's text and its document's title.
CREATE FUNCTION gw_embedding_switch_claim(batch integer)
  RETURNS TABLE (chunk_id uuid, chunk_text text, title text)
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER AS $$
BEGIN
  RETURN QUERY
    SELECT c.id, c.text, d.title FROM chunks c JOIN documents d ON d.id = c.document_id
     WHERE c.embedding_next IS NULL
     ORDER BY c.id LIMIT batch FOR UPDATE OF c SKIP LOCKED;
END $$;

-- Writes the next vectors (text literals `[x,y,...]`) of the given chunks.
CREATE FUNCTION gw_embedding_switch_write(ids uuid[], vectors text[]) RETURNS integer
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER AS $$
DECLARE n integer;
BEGIN
  PERFORM set_config('groundwork.embedding_switch', 'on', true);
  UPDATE chunks c SET embedding_next = v.e::vector FROM unnest(ids, vectors) AS v(id, e)
   WHERE c.id = v.id;
  GET DIAGNOSTICS n = ROW_COUNT;
  PERFORM set_config('groundwork.embedding_switch', 'off', true);
  RETURN n;
END $$;

-- Chunks re-embedded so far, and all chunks.
CREATE FUNCTION gw_embedding_switch_progress() RETURNS TABLE (done bigint, total bigint)
  LANGUAGE plpgsql STABLE SECURITY DEFINER AS $$
BEGIN
  RETURN QUERY SELECT count(c.embedding_next), count(*) FROM chunks c;
END $$;

-- Completes the switch when every chunk has its next vector: 'done', 'pending' (chunks still
-- lack one; nothing changed) or 'none' (no switch in progress). Chunk writes wait for it (the
-- ingestion's write checks the recorded model once it holds its lock on chunks); reads go on
-- until the column swap itself, which changes only the catalog.
CREATE FUNCTION gw_embedding_switch_finish() RETURNS text
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER AS $$
DECLARE
  s embedding_switch;
  missing boolean;
BEGIN
  SELECT * INTO s FROM embedding_switch WHERE singleton FOR UPDATE;
  IF NOT FOUND THEN RETURN 'none'; END IF;
  LOCK TABLE chunks IN SHARE ROW EXCLUSIVE MODE;
  SELECT EXISTS (SELECT 1 FROM chunks WHERE embedding_next IS NULL) INTO missing;
  IF missing THEN RETURN 'pending'; END IF;
  -- A valid CHECK lets SET NOT NULL skip its scan under the exclusive lock; the scan runs here,
  -- while reads go on.
  ALTER TABLE chunks ADD CONSTRAINT chunks_embedding_next_present
    CHECK (embedding_next IS NOT NULL) NOT VALID;
  ALTER TABLE chunks VALIDATE CONSTRAINT chunks_embedding_next_present;
  ALTER TABLE chunks DROP COLUMN embedding;
  ALTER TABLE chunks RENAME COLUMN embedding_next TO embedding;
  ALTER INDEX chunks_embedding_next_hnsw_idx RENAME TO chunks_embedding_hnsw_idx;
  ALTER TABLE chunks ALTER COLUMN embedding SET NOT NULL;
  ALTER TABLE chunks DROP CONSTRAINT chunks_embedding_next_present;
  -- Memory vectors of the old model would not compare with the new model's: dropped (the memory
  -- reader skips messages without one).
  EXECUTE format('ALTER TABLE messages ALTER COLUMN embedding TYPE vector(%s) USING NULL::vector(%s)',
                 s.dimension, s.dimension);
  UPDATE documents SET embedding_model = s.model_id
   WHERE embedding_model IS DISTINCT FROM s.model_id AND embedding_model IS NOT NULL;
  UPDATE embedding_config SET model_id = s.model_id, dimension = s.dimension,
         settings = s.settings, recorded_at = now();
  DELETE FROM embedding_switch;
  RETURN 'done';
END $$;

-- Their search path: this schema, and pgvector's (where the extension was created, maybe another).
DO $$
DECLARE
  f text;
  vector_schema text := (SELECT extnamespace::regnamespace::text FROM pg_extension WHERE extname = 'vector');
BEGIN
  FOREACH f IN ARRAY ARRAY['gw_embedding_switch_claim(integer)',
                           'gw_embedding_switch_write(uuid[], text[])',
                           'gw_embedding_switch_progress()',
                           'gw_embedding_switch_finish()'] LOOP
    EXECUTE format('ALTER FUNCTION %s SET search_path = %I, %s, pg_temp', f, current_schema(), vector_schema);
    EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', f);
  END LOOP;
END
$$;
