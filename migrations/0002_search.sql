-- 0002: what hybrid search needs beyond pgvector: BM25 statistics kept up to date by the
-- database itself (so every write path, including cascades, keeps them right), and per-tenant
-- search policy. No extension beyond pgvector, so it runs on Aurora.

-- Number of indexed tokens in a tsvector (a lexeme stripped of positions counts once).
CREATE FUNCTION gw_tsvector_length(v tsvector) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(sum(coalesce(array_length(positions, 1), 1)), 0)::integer FROM unnest(v)
$$;

ALTER TABLE chunks ADD COLUMN fts_length integer GENERATED ALWAYS AS (gw_tsvector_length(fts)) STORED;

-- Document frequency of each lexeme among a tenant's chunks (BM25's idf).
CREATE TABLE term_stats (
  tenant_id text NOT NULL,
  term text NOT NULL,
  doc_freq integer NOT NULL,
  PRIMARY KEY (tenant_id, term)
);

-- Chunk count and total token length per tenant (BM25's average length).
CREATE TABLE tenant_stats (
  tenant_id text PRIMARY KEY,
  chunk_count bigint NOT NULL,
  total_length bigint NOT NULL
);

-- Statement-level triggers over transition tables: one statistics update per bulk write.
-- Rows are touched in a fixed order so that concurrent writers cannot deadlock.
CREATE FUNCTION gw_chunks_stats_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
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

CREATE FUNCTION gw_chunks_stats_remove() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE term_stats t SET doc_freq = t.doc_freq - o.n
  FROM (SELECT o.tenant_id, l.lexeme, count(*) AS n FROM old_rows o, unnest(o.fts) l GROUP BY 1, 2 ORDER BY 1, 2) o
  WHERE t.tenant_id = o.tenant_id AND t.term = o.lexeme;
  UPDATE tenant_stats t SET chunk_count = t.chunk_count - o.n, total_length = t.total_length - o.len
  FROM (SELECT tenant_id, count(*) AS n, sum(fts_length) AS len FROM old_rows GROUP BY 1 ORDER BY 1) o
  WHERE t.tenant_id = o.tenant_id;
  DELETE FROM term_stats WHERE doc_freq <= 0;
  RETURN NULL;
END $$;

CREATE TRIGGER chunks_stats_insert AFTER INSERT ON chunks
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION gw_chunks_stats_add();
CREATE TRIGGER chunks_stats_delete AFTER DELETE ON chunks
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION gw_chunks_stats_remove();
-- An update (new title in the full-text vector) is a removal of the old rows and an addition of the new.
CREATE TRIGGER chunks_stats_update_remove AFTER UPDATE ON chunks
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION gw_chunks_stats_remove();
CREATE TRIGGER chunks_stats_update_add AFTER UPDATE ON chunks
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION gw_chunks_stats_add();

-- Search policy per tenant; a tenant without a row gets the defaults.
CREATE TABLE tenant_policies (
  tenant_id text PRIMARY KEY,
  -- NULL: every source type is allowed.
  allowed_source_types text[],
  min_score real CHECK (min_score IS NULL OR (min_score >= 0 AND min_score <= 1)),
  max_chunks_per_source integer CHECK (max_chunks_per_source IS NULL OR max_chunks_per_source > 0),
  updated_at timestamptz NOT NULL DEFAULT now()
);
