-- 0025: the outdated sweep (gw_outdated_documents, 0022/0023) runs every five minutes in AWS and
-- finds nothing outdated almost every time, after a sequential scan of every document: 70 ms warm
-- and 65 MB through the buffer cache for 200,000 documents (the search benchmark's 1M-chunk
-- corpus), pushing out pages that search keeps there. A partial index on the version of the
-- indexed documents answers "none" from one index page; after an upgrade, when every document is
-- outdated, the sweep reads them through it or through the table, as its values say.
CREATE INDEX documents_outdated_idx ON documents (ingestion_version) WHERE status = 'indexed';

-- The statement is planned with the call's values (EXECUTE ... USING), so that the planner sees how
-- few documents are older than the current version. The SQL function planned it once for any
-- version, guessing a third of the table, and chose a sequential scan for tables of up to tens of
-- thousands of documents.
CREATE OR REPLACE FUNCTION gw_outdated_documents(current_version integer, max_attempts integer, batch integer)
  RETURNS TABLE (tenant_id text, source_uri text)
  LANGUAGE plpgsql STABLE SECURITY DEFINER AS $$
BEGIN
  RETURN QUERY EXECUTE
    'SELECT d.tenant_id, d.source_uri FROM documents d
      WHERE d.status = ''indexed'' AND d.ingestion_version < $1 AND d.lease_expiries < $2
      ORDER BY d.updated_at, d.id
      LIMIT $3'
    USING current_version, max_attempts, batch;
END
$$;
DO $$
BEGIN
  EXECUTE format('ALTER FUNCTION gw_outdated_documents(integer, integer, integer) SET search_path = %I, pg_temp',
                 current_schema());
END
$$;
