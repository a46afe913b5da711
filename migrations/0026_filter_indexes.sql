-- 0026: filter indexes, an HNSW graph of their own for the chunks one metadata value selects
-- (docs/decisions/0172-filter-indexes.md).
--
-- A metadata filter that selects a few percent of a big tenant is too wide to read exactly and
-- too narrow for the whole graph: HNSW visits about fifty chunks for each one the filter keeps.
-- An operator declares the values that such filters ask for (`filterIndexes` in cdk.json,
-- `GROUNDWORK_FILTER_INDEXES` locally); each gets a partial HNSW index over exactly its chunks and
-- a partial index of their lexemes (both built by filter-indexes.ts), which a filter `equals` on
-- that value is served by. pgvector recommends partial indexes for filters on a few distinct
-- values.
--
-- A partial index can only test the chunk's own row, while a filter sees the document's metadata
-- overlaid by the chunk's. So each chunk carries, in `indexed_metadata`, the declared key/value
-- pairs its metadata (the document's overlaid by its own) holds, NULL when none. The triggers
-- below keep it when a chunk is written and when a document's metadata changes; a declaration
-- fills it for the chunks that already exist, then the indexes are built and the graph is
-- described with its value (a comment). Search uses the values of the valid, described graphs
-- (search-preparation.ts reads them from the catalog) and adds `indexed_metadata @> {key: value}`,
-- which the full filter still tests, so the copy only ever narrows what the filter would keep.
ALTER TABLE chunks ADD COLUMN indexed_metadata jsonb;

-- The declared values: deployment-wide, written only by the migrating role (app-role.ts makes it
-- read-only for the application).
CREATE TABLE filter_indexes (
  key text NOT NULL CHECK (key <> '' AND length(key) <= 200),
  -- A scalar: `equals` on anything else matches no metadata value (filter-sql.ts).
  value jsonb NOT NULL CHECK (jsonb_typeof(value) IN ('string', 'number', 'boolean')),
  -- Every existing chunk's copy is filled: the index may be built.
  ready boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (key, value)
);

-- The declared pairs that `meta` holds, NULL when none (or none is declared).
CREATE FUNCTION gw_indexed_metadata(meta jsonb) RETURNS jsonb
  LANGUAGE sql STABLE SECURITY DEFINER AS $$
  SELECT jsonb_object_agg(f.key, f.value) FROM filter_indexes f
   WHERE meta @> jsonb_build_object(f.key, f.value)
$$;

-- A chunk written (ingestion, or its own metadata changed): its copy from its document's metadata
-- overlaid by its own. Nothing is read while no value is declared.
CREATE FUNCTION gw_chunks_indexed_metadata() RETURNS trigger
  LANGUAGE plpgsql SECURITY DEFINER AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM filter_indexes) THEN
    NEW.indexed_metadata := NULL;
    RETURN NEW;
  END IF;
  NEW.indexed_metadata := gw_indexed_metadata(
    (SELECT d.metadata FROM documents d WHERE d.id = NEW.document_id) || NEW.metadata);
  RETURN NEW;
END $$;
CREATE TRIGGER chunks_indexed_metadata BEFORE INSERT OR UPDATE OF metadata, document_id ON chunks
  FOR EACH ROW EXECUTE FUNCTION gw_chunks_indexed_metadata();

-- A document's metadata changed: the copies of its chunks whose declared pairs changed.
CREATE FUNCTION gw_documents_indexed_metadata() RETURNS trigger
  LANGUAGE plpgsql SECURITY DEFINER AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM filter_indexes) THEN RETURN NULL; END IF;
  UPDATE chunks c SET indexed_metadata = gw_indexed_metadata(NEW.metadata || c.metadata)
   WHERE c.document_id = NEW.id
     AND c.indexed_metadata IS DISTINCT FROM gw_indexed_metadata(NEW.metadata || c.metadata);
  RETURN NULL;
END $$;
CREATE TRIGGER documents_indexed_metadata AFTER UPDATE OF metadata ON documents
  FOR EACH ROW WHEN (OLD.metadata IS DISTINCT FROM NEW.metadata)
  EXECUTE FUNCTION gw_documents_indexed_metadata();

-- The partial index of one declared value, named after it, over the live vectors with the main
-- index's options and operator class (`halfvec` or `vector`, as the column is).
CREATE FUNCTION gw_filter_index_name(key text, value jsonb) RETURNS text
  LANGUAGE sql IMMUTABLE AS $$
  SELECT 'chunks_filter_' || left(md5(key || E'\n' || value::text), 16) || '_hnsw'
$$;
CREATE FUNCTION gw_filter_index_ddl(key text, value jsonb) RETURNS text
  LANGUAGE sql STABLE AS $$
  SELECT format('CREATE INDEX CONCURRENTLY IF NOT EXISTS %I ON chunks USING hnsw (embedding %s)%s '
                'WHERE indexed_metadata @> %L::jsonb',
                gw_filter_index_name(key, value),
                CASE WHEN a.atttypid = 'halfvec'::regtype THEN 'halfvec_cosine_ops' ELSE 'vector_cosine_ops' END,
                coalesce((SELECT ' WITH (' || array_to_string(c.reloptions, ', ') || ')'
                            FROM pg_class c
                           WHERE c.relname = 'chunks_embedding_hnsw_idx'
                             AND c.relnamespace = current_schema()::regnamespace), ''),
                jsonb_build_object(key, value)::text)
    FROM pg_attribute a
   WHERE a.attrelid = 'chunks'::regclass AND a.attname = 'embedding' AND NOT a.attisdropped
$$;

-- The index's description, which tells search the value it serves: `{"filterIndex": {"key": ..,
-- "value": ..}}`, set once it is built.
CREATE FUNCTION gw_filter_index_describe(key text, value jsonb) RETURNS void
  LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('COMMENT ON INDEX %I IS %L', gw_filter_index_name(key, value),
                 jsonb_build_object('filterIndex', jsonb_build_object('key', key, 'value', value))::text);
END $$;

DO $$
DECLARE
  vector_schema text := (SELECT extnamespace::regnamespace::text FROM pg_extension WHERE extname = 'vector');
BEGIN
  EXECUTE format('ALTER FUNCTION gw_indexed_metadata(jsonb) SET search_path = %I, pg_temp', current_schema());
  EXECUTE format('ALTER FUNCTION gw_chunks_indexed_metadata() SET search_path = %I, pg_temp', current_schema());
  EXECUTE format('ALTER FUNCTION gw_documents_indexed_metadata() SET search_path = %I, pg_temp', current_schema());
  EXECUTE format('ALTER FUNCTION gw_filter_index_ddl(text, jsonb) SET search_path = %I, %s, pg_temp',
                 current_schema(), vector_schema);
  EXECUTE format('ALTER FUNCTION gw_filter_index_describe(text, jsonb) SET search_path = %I, pg_temp', current_schema());
END
$$;
