-- Finds an indexed copy of the same content in a tenant, so ingestion records a duplicate
-- upload instead of indexing it twice (DocumentStore.findDuplicate).
CREATE INDEX documents_content_hash_idx ON documents (tenant_id, content_hash)
  WHERE status = 'indexed';
