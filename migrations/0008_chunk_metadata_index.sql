-- 0008: the chunks that carry metadata of their own (none are written today: ingestion gives
-- every chunk `{}`, and filters see the document's metadata overlaid by the chunk's). A filtered
-- vector search that reads a small scope from its matching documents also reads these, through
-- this index, so a chunk whose own metadata matches a filter its document does not is not missed.
CREATE INDEX chunks_own_metadata_idx ON chunks (tenant_id, document_id) WHERE metadata <> '{}'::jsonb;
