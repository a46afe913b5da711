-- 0006: what lets the keyword arm check documents only for its best chunks (search-repository.ts,
-- kw_defer). A search counts, per side, the documents in its scope that not every caller sees;
-- both sets are usually small, and these partial indexes hold just them (with their chunk counts,
-- for index-only scans).

-- In a caller's own tenant: private (`user`) documents, `global` ones and documents not indexed.
CREATE INDEX documents_restricted_idx ON documents (tenant_id) INCLUDE (chunk_count)
  WHERE NOT (visibility = 'tenant' AND status = 'indexed');

-- In a publishing (global) tenant, as other tenants see it: everything but indexed `global` documents.
CREATE INDEX documents_unpublished_idx ON documents (tenant_id) INCLUDE (chunk_count)
  WHERE NOT (visibility = 'global' AND status = 'indexed');
