-- 0005: what the bounded keyword arm reads (search-repository.ts).
--
-- The full-text index names each chunk's tenant, so that a search reads the postings of its own
-- tenants only. With one index over every tenant, a small tenant's query for a word common in a
-- large tenant would otherwise visit each of the large tenant's matching rows just to discard
-- it. The tenant is one more lexeme, prefixed with a control character that to_tsvector never
-- emits; a query ANDs it with its own lexemes and GIN reads the rarer side first.

CREATE FUNCTION gw_search_lexemes(fts tsvector, tenant_id text) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT fts || array_to_tsvector(ARRAY[chr(1) || tenant_id])
$$;

-- Built before the old index is dropped: the build blocks writes to chunks but not searches,
-- which wait only for the drop at the end.
CREATE INDEX chunks_search_gin_idx ON chunks USING gin (gw_search_lexemes(fts, tenant_id));
DROP INDEX chunks_fts_gin_idx;

-- Full-text vectors stay in the row (compressed when that helps) rather than in the TOAST table,
-- unless a row would not fit a page: the keyword arm reads the vector of every chunk it scores,
-- and fetching it from TOAST was more than half of that cost. The chunk text moves to TOAST
-- instead; it is read only for the hits returned. Applies to rows written from now on.
ALTER TABLE chunks ALTER COLUMN fts SET STORAGE MAIN;
