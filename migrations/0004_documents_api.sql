-- 0004: what the documents and admin APIs need.
--
-- Ingestion progress, shown by GET /documents/{id} while a document is processing:
-- {"stage": "embedding", "chunks_total": 40, "chunks_embedded": 16}. Cleared when it ends.
ALTER TABLE documents ADD COLUMN progress jsonb;
-- Who announced the upload through POST /documents (NULL for objects put into S3 directly): that
-- user may remove or retry a tenant document without being an admin.
ALTER TABLE documents ADD COLUMN uploaded_by text;

-- Prompt configurations per tenant. A row with tenant_id NULL is a built-in default that every
-- tenant uses until its admins create and activate a version of their own for that profile.
ALTER TABLE prompt_configs ADD COLUMN tenant_id text;
ALTER TABLE prompt_configs ADD COLUMN created_by text;
ALTER TABLE prompt_configs DROP CONSTRAINT prompt_configs_profile_version_key;
DROP INDEX prompt_configs_one_active_idx;
CREATE UNIQUE INDEX prompt_configs_scope_profile_version_key
  ON prompt_configs ((coalesce(tenant_id, '')), profile, version);
CREATE UNIQUE INDEX prompt_configs_one_active_idx
  ON prompt_configs ((coalesce(tenant_id, '')), profile) WHERE active;
