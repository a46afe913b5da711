-- 0021: the chunks' HNSW graph is built with ef_construction 128 (pgvector's default is 64; m
-- stays 16). On the 1M-chunk search benchmark a graph built at 64 held recall@10 at 0.93 to 0.95
-- whatever the search width; at 128 it reached 0.978 at the ef_search the product sets there, for
-- a build about 1.4 times as long and an index of the same size
-- (docs/decisions/0152-hnsw-ef-construction.md).
--
-- The option is set on the index, so every vector inserted from now on is linked with it, a
-- REINDEX rebuilds with it, and a model switch builds its second index with the same options. An
-- index of at most 100,000 chunks is rebuilt here: a new index beside the old one (searches go on
-- reading the old one while it builds; chunk writes wait), then swapped by name. A larger one is
-- left as it is: rebuild it at a quiet time with `REINDEX INDEX CONCURRENTLY
-- chunks_embedding_hnsw_idx` (docs/retrieval.md, "Vector arm").
ALTER INDEX chunks_embedding_hnsw_idx SET (ef_construction = 128);

DO $$
BEGIN
  IF (SELECT count(*) FROM (SELECT 1 FROM chunks LIMIT 100001) AS first) <= 100000 THEN
    CREATE INDEX chunks_embedding_hnsw_idx_0021 ON chunks USING hnsw (embedding vector_cosine_ops)
      WITH (m = 16, ef_construction = 128);
    DROP INDEX chunks_embedding_hnsw_idx;
    ALTER INDEX chunks_embedding_hnsw_idx_0021 RENAME TO chunks_embedding_hnsw_idx;
  END IF;
END
$$;
