-- 0022: each document records the version of the ingestion code that indexed it
-- (lambdas/core/ingestion/version.ts). A document indexed before this column existed reads 0,
-- older than any version: it is indexed again at its next sync, and the embedded default
-- announces it again at its next start, so that it gets what the parsers and the chunker make
-- of it now (docs/ingestion.md, "Upgrades").
ALTER TABLE documents ADD COLUMN ingestion_version integer NOT NULL DEFAULT 0;

-- In AWS the lease sweep (core/ingestion/recovery.ts, `sweepOutdated`) indexes such documents
-- again a few at a time, across tenants: as for gw_claim_expired_leases (0013), this one
-- function, owned by the migrating role, names them (tenant and source only); the sweep then
-- works on each in its tenant's scope. The oldest first, so that one that cannot be indexed
-- again for now does not hold back the others for long.
CREATE FUNCTION gw_outdated_documents(current_version integer, batch integer)
  RETURNS TABLE (tenant_id text, source_uri text)
  LANGUAGE sql STABLE SECURITY DEFINER AS $$
  SELECT d.tenant_id, d.source_uri FROM documents d
   WHERE d.status = 'indexed' AND d.ingestion_version < current_version
   ORDER BY d.updated_at, d.id
   LIMIT batch
$$;
DO $$
BEGIN
  EXECUTE format('ALTER FUNCTION gw_outdated_documents(integer, integer) SET search_path = %I, pg_temp',
                 current_schema());
END
$$;
REVOKE EXECUTE ON FUNCTION gw_outdated_documents(integer, integer) FROM PUBLIC;
