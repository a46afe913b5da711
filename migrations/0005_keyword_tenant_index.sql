-- 0005: the keyword arm's full-text index names each chunk's tenant, so that a search reads the
-- postings of its own tenants only. With one index over every tenant, a small tenant's query for
-- a word common in a large tenant would otherwise visit each of the large tenant's matching rows
-- just to discard it. The tenant is one more lexeme, prefixed with a control character that
-- to_tsvector never emits; a query ANDs it with its own lexemes (search-repository.ts) and GIN
-- reads the rarer side first.

CREATE FUNCTION gw_search_lexemes(fts tsvector, tenant_id text) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT fts || array_to_tsvector(ARRAY[chr(1) || tenant_id])
$$;

-- Built before the old index is dropped: the build blocks writes to chunks but not searches,
-- which wait only for the drop at the end.
CREATE INDEX chunks_search_gin_idx ON chunks USING gin (gw_search_lexemes(fts, tenant_id));
DROP INDEX chunks_fts_gin_idx;
