-- 0011: each chunk's term counts, kept in a form the keyword arm reads without unnesting its
-- full-text vector (search-repository.ts).
--
-- BM25 needs, for each chunk it scores, how often each of the question's lexemes occurs. From the
-- tsvector that took setweight (a copy of the vector marking the question's lexemes), ts_filter
-- (a second pass keeping them) and unnest (a row and two arrays per lexeme kept), then a join and
-- a grouping: the largest part of a search (docs/retrieval.md). Here every lexeme of the chunk is
-- one bigint, the top 56 bits of its hash and, in the low 8 bits, its count less one (a tsvector
-- keeps at most 255 positions of a lexeme), sorted. A question's lexeme is found with one binary
-- search (width_bucket over the array) and no copy. Two lexemes of one chunk whose hashes agree in
-- 56 bits (about 2 in 10^13 for a chunk of 150 lexemes) would share a count.
--
-- A generated column, so that every write of `fts` keeps it in step. Adding it rewrites the table
-- and rebuilds its indexes, under a lock that blocks searches meanwhile: 146 s for the 100k-chunk
-- benchmark (docs/retrieval.md) on a 2-core machine. STORAGE MAIN before the rewrite (the same
-- statement), so that the counts stay in the row like the vector they come from (0005, 0007);
-- the rewrite also brings into the row the embeddings that 0007 left in TOAST.

CREATE FUNCTION gw_term_key(lexeme text) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT (hashtextextended(lexeme, 0) >> 8) << 8
$$;

CREATE FUNCTION gw_term_counts(fts tsvector) RETURNS bigint[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT ARRAY(SELECT gw_term_key(lexeme) | (least(coalesce(array_length(positions, 1), 1), 256) - 1)
               FROM unnest(fts) ORDER BY 1)
$$;

ALTER TABLE chunks
  ADD COLUMN term_counts bigint[] GENERATED ALWAYS AS (gw_term_counts(fts)) STORED,
  ALTER COLUMN term_counts SET STORAGE MAIN;
