-- 0024: the chunks' vectors are stored as `halfvec` (16-bit floats), half the bytes of `vector`
-- in the row and in the HNSW graph. On the 1M-chunk search benchmark the graph went from 2,730 to
-- 1,366 MB at recall@8 0.986 against 0.983 (each against the exact 32-bit answer); with the heap,
-- about 2.6 GB less per million chunks must stay in cache for search to stay fast
-- (docs/decisions/0170-halfvec-embeddings.md). Queries still send a `vector`: against a `halfvec`
-- column pgvector converts it (an implicit cast), once per search.
--
-- `gw_embeddings_to_halfvec()` converts `chunks.embedding`, and `embedding_next` while a model
-- switch is in progress: it drops the HNSW index, rewrites the column (kept in the row, as 0007
-- set it) and builds the index again with the same options. Chunk reads and writes wait for it.
-- It converts here an index of at most 100,000 chunks (122 s at 100k on 2 cores with the server's
-- default maintenance_work_mem); a larger one is left as it is,
-- and search goes on reading its `vector` column: convert it at a quiet time with
-- `SELECT gw_embeddings_to_halfvec();` as the migrating role (docs/retrieval.md, "Vector arm",
-- gives its time at 1M chunks). A model switch always adds its new column as `halfvec`.
CREATE FUNCTION gw_embeddings_to_halfvec() RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  col record;
  options text;
  converted integer := 0;
BEGIN
  FOR col IN
    SELECT a.attname::text AS name, a.atttypmod AS dimension,
           CASE a.attname WHEN 'embedding' THEN 'chunks_embedding_hnsw_idx'
                          ELSE 'chunks_embedding_next_hnsw_idx' END AS index_name
      FROM pg_attribute a
     WHERE a.attrelid = 'chunks'::regclass AND a.attname IN ('embedding', 'embedding_next')
       AND NOT a.attisdropped AND a.atttypid = 'vector'::regtype
  LOOP
    SELECT coalesce(' WITH (' || array_to_string(c.reloptions, ', ') || ')', '') INTO options
      FROM pg_class c
     WHERE c.relname = col.index_name AND c.relnamespace = current_schema()::regnamespace;
    EXECUTE format('DROP INDEX IF EXISTS %I', col.index_name);
    -- One statement: the rewrite then stores the rows with MAIN (a type change alone resets the
    -- column to the type's EXTERNAL, and the rewrite would move a 2 KB vector out of the row).
    EXECUTE format('ALTER TABLE chunks ALTER COLUMN %I TYPE halfvec(%s) USING %I::halfvec(%s), '
                   'ALTER COLUMN %I SET STORAGE MAIN',
                   col.name, col.dimension, col.name, col.dimension, col.name);
    EXECUTE format('CREATE INDEX %I ON chunks USING hnsw (%I halfvec_cosine_ops)%s',
                   col.index_name, col.name, coalesce(options, ' WITH (m = 16, ef_construction = 128)'));
    converted := converted + 1;
  END LOOP;
  RETURN converted;
END $$;

DO $$
DECLARE
  vector_schema text := (SELECT extnamespace::regnamespace::text FROM pg_extension WHERE extname = 'vector');
BEGIN
  EXECUTE format('ALTER FUNCTION gw_embeddings_to_halfvec() SET search_path = %I, %s, pg_temp',
                 current_schema(), vector_schema);
  EXECUTE 'REVOKE EXECUTE ON FUNCTION gw_embeddings_to_halfvec() FROM PUBLIC';
  IF (SELECT count(*) FROM (SELECT 1 FROM chunks LIMIT 100001) AS first) <= 100000 THEN
    PERFORM gw_embeddings_to_halfvec();
  END IF;
END
$$;
