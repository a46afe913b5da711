-- 0009: the keyword arm's index names the tenant in every lexeme (replaces 0005's index).
--
-- 0005 added one lexeme naming the tenant to each chunk's vector, and a query ANDed it with the
-- question's lexemes. GIN then had to intersect the lexeme's postings with the tenant's, which
-- in a large tenant hold nearly every row: on the 100k-chunk benchmark, finding the 946 chunks
-- of one lexeme in the 89k-chunk tenant took 1.3 ms in the index, 0.27 ms here
-- (docs/retrieval.md). Here each lexeme is the tenant id, a control character that to_tsvector
-- never emits, and the lexeme; a query asks for exactly its tenants' lexemes, so the postings it
-- reads are its own and nothing is intersected.

CREATE FUNCTION gw_tenant_lexemes(fts tsvector, tenant_id text) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT array_to_tsvector(ARRAY(SELECT tenant_id || chr(1) || l FROM unnest(tsvector_to_array(fts)) AS l))
$$;

-- Built before the old index is dropped, as in 0005. gw_search_lexemes stays: a search of the
-- previous release still running while this deploys calls it.
CREATE INDEX chunks_tenant_lexemes_idx ON chunks USING gin (gw_tenant_lexemes(fts, tenant_id));
DROP INDEX chunks_search_gin_idx;
