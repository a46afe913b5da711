-- 0001: documents, chunks and the record of which embedding model made the vectors.
-- Runs unchanged on PGlite (PostgreSQL 18), PostgreSQL 15 + pgvector 0.8 and Aurora PostgreSQL 16/17.

CREATE EXTENSION IF NOT EXISTS vector;

-- One row per source object (s3://bucket/key) per tenant. Rows are kept after deletion
-- (status 'deleted') so that late or duplicate events can be recognised.
CREATE TABLE documents (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id text NOT NULL,
  owner_user_id text,
  visibility text NOT NULL DEFAULT 'tenant'
    CHECK (visibility IN ('user', 'tenant', 'global')),
  source_uri text NOT NULL,
  title text,
  -- Extensible: doc, faq, email, transcript, web, or any lower-case identifier.
  source_type text NOT NULL DEFAULT 'doc'
    CHECK (source_type ~ '^[a-z][a-z0-9_-]{0,31}$'),
  language text NOT NULL DEFAULT 'en',
  metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  content_hash text,
  -- Hash of the attributes (title, type, language, owner, visibility, metadata) last applied.
  attributes_hash text,
  status text NOT NULL DEFAULT 'queued'
    CHECK (status IN ('queued', 'processing', 'indexed', 'failed', 'deleted')),
  failure_reason text,
  chunk_count integer NOT NULL DEFAULT 0,
  embedding_model text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  source_updated_at timestamptz,
  CONSTRAINT documents_tenant_source_uri_key UNIQUE (tenant_id, source_uri),
  CONSTRAINT documents_user_visibility_has_owner CHECK (visibility <> 'user' OR owner_user_id IS NOT NULL)
);

CREATE INDEX documents_tenant_status_idx ON documents (tenant_id, status);

CREATE TABLE chunks (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  document_id uuid NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
  -- Denormalised from documents so that filtered search needs no join to narrow by tenant.
  tenant_id text NOT NULL,
  chunk_index integer NOT NULL,
  text text NOT NULL,
  -- Character offsets into the text extracted from the source: text = source[start_offset, end_offset).
  start_offset integer NOT NULL CHECK (start_offset >= 0),
  end_offset integer NOT NULL CHECK (end_offset > start_offset),
  token_count integer NOT NULL CHECK (token_count >= 0),
  -- 512 dimensions: the local model's size and Titan v2's default, so both modes share a schema.
  embedding vector(512) NOT NULL,
  fts tsvector NOT NULL,
  metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  CONSTRAINT chunks_document_chunk_index_key UNIQUE (document_id, chunk_index)
);

CREATE INDEX chunks_embedding_hnsw_idx ON chunks USING hnsw (embedding vector_cosine_ops);
CREATE INDEX chunks_fts_gin_idx ON chunks USING gin (fts);
CREATE INDEX chunks_tenant_document_idx ON chunks (tenant_id, document_id);

-- The embedding model the stored vectors were made with (a single row). Start-up compares it
-- with the configured model and refuses to mix two models in one index.
CREATE TABLE embedding_config (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  model_id text NOT NULL,
  dimension integer NOT NULL CHECK (dimension > 0),
  recorded_at timestamptz NOT NULL DEFAULT now()
);
