-- 0012: the lease of a document being processed (docs/ingestion.md, "Nothing stranded").
--
-- Ingestion writes `lease_renewed_at` when it starts processing a document and again with each
-- progress report. A `processing` document whose lease is older than the lease period (15 minutes
-- by default) was left by a worker that died (a Lambda timeout, an out-of-memory kill, a killed
-- local process): the lease sweep processes it again, and POST /documents/{id}/retry accepts it.
-- `lease_expiries` counts how often its lease ran out since it was last indexed, so that a document
-- that kills every worker ends `failed` instead of being retried for ever.
ALTER TABLE documents ADD COLUMN lease_renewed_at timestamptz;
ALTER TABLE documents ADD COLUMN lease_expiries integer NOT NULL DEFAULT 0;

CREATE INDEX documents_processing_lease_idx ON documents (lease_renewed_at)
  WHERE status = 'processing';
