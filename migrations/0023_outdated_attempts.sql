-- 0023: the outdated sweep (0022) leaves a document whose re-indexing the worker did not survive
-- `max_attempts` times (a file the new ingestion code cannot get through, counted in
-- `lease_expiries` of the indexed row: core/ingestion/ingest.ts), as the embedded default's
-- reconciliation at start already does. It keeps its old chunks and stays served; uploading it
-- again tries once more. Without this, the sweep took it up again at every run, each attempt
-- costing the worker's whole timeout.
DROP FUNCTION gw_outdated_documents(integer, integer);
CREATE FUNCTION gw_outdated_documents(current_version integer, max_attempts integer, batch integer)
  RETURNS TABLE (tenant_id text, source_uri text)
  LANGUAGE sql STABLE SECURITY DEFINER AS $$
  SELECT d.tenant_id, d.source_uri FROM documents d
   WHERE d.status = 'indexed' AND d.ingestion_version < current_version
     AND d.lease_expiries < max_attempts
   ORDER BY d.updated_at, d.id
   LIMIT batch
$$;
DO $$
BEGIN
  EXECUTE format('ALTER FUNCTION gw_outdated_documents(integer, integer, integer) SET search_path = %I, pg_temp',
                 current_schema());
END
$$;
REVOKE EXECUTE ON FUNCTION gw_outdated_documents(integer, integer, integer) FROM PUBLIC;
