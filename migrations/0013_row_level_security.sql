-- 0013: row-level security, the database's own wall between tenants (and between the users of a
-- tenant for private documents and conversations). docs/decisions/0135-row-level-security.md.
--
-- The scope is read from transaction-local settings that the database adapter sets, with
-- set_config(.., true), in the one place that opens a request's transaction (db-scope.ts):
--   groundwork.tenant_id  the caller's tenant;
--   groundwork.user_id    the caller;
--   groundwork.all_users  'on' when the work covers every user of the tenant (ingestion, tenant admins).
-- Without them a table under a policy shows no rows and accepts no writes. The owner of the
-- tables (the migrating role) is exempt (no FORCE): it serves no request, only migrations and
-- system work. Policies name no role, so they hold for the application role and any other.

CREATE FUNCTION gw_scope_tenant() RETURNS text LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT nullif(current_setting('groundwork.tenant_id', true), '')
$$;
CREATE FUNCTION gw_scope_user() RETURNS text LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT nullif(current_setting('groundwork.user_id', true), '')
$$;
CREATE FUNCTION gw_scope_all_users() RETURNS boolean LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT coalesce(current_setting('groundwork.all_users', true) = 'on', false)
$$;

-- Documents: the tenant's documents, another user's private ones only for work over all users;
-- `global` documents are read by every tenant (what findVisible and search allow), never outside
-- a scope.
ALTER TABLE documents ENABLE ROW LEVEL SECURITY;
CREATE POLICY documents_scope ON documents
  USING (tenant_id = gw_scope_tenant()
         AND (visibility <> 'user' OR owner_user_id = gw_scope_user() OR gw_scope_all_users()))
  WITH CHECK (tenant_id = gw_scope_tenant()
              AND (visibility <> 'user' OR owner_user_id = gw_scope_user() OR gw_scope_all_users()));
CREATE POLICY documents_global_read ON documents FOR SELECT
  USING (visibility = 'global' AND gw_scope_tenant() IS NOT NULL);

-- Chunks: read when their document is (the subquery is itself under the documents policies);
-- written in the caller's tenant.
ALTER TABLE chunks ENABLE ROW LEVEL SECURITY;
CREATE POLICY chunks_read ON chunks FOR SELECT
  USING (EXISTS (SELECT 1 FROM documents d WHERE d.id = chunks.document_id));
CREATE POLICY chunks_insert ON chunks FOR INSERT WITH CHECK (tenant_id = gw_scope_tenant());
CREATE POLICY chunks_update ON chunks FOR UPDATE
  USING (tenant_id = gw_scope_tenant()) WITH CHECK (tenant_id = gw_scope_tenant());
CREATE POLICY chunks_delete ON chunks FOR DELETE USING (tenant_id = gw_scope_tenant());

-- Keyword statistics (kept by the chunks' triggers, which run as the writer) and search policy.
ALTER TABLE term_stats ENABLE ROW LEVEL SECURITY;
CREATE POLICY term_stats_scope ON term_stats USING (tenant_id = gw_scope_tenant());
ALTER TABLE tenant_stats ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_stats_scope ON tenant_stats USING (tenant_id = gw_scope_tenant());
ALTER TABLE tenant_policies ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_policies_scope ON tenant_policies USING (tenant_id = gw_scope_tenant());

-- Conversations: the caller's own; the whole tenant's for tenant admins (statistics, feedback).
ALTER TABLE threads ENABLE ROW LEVEL SECURITY;
CREATE POLICY threads_scope ON threads
  USING (tenant_id = gw_scope_tenant() AND (user_id = gw_scope_user() OR gw_scope_all_users()));
ALTER TABLE messages ENABLE ROW LEVEL SECURITY;
CREATE POLICY messages_scope ON messages
  USING (tenant_id = gw_scope_tenant() AND (user_id = gw_scope_user() OR gw_scope_all_users()));
ALTER TABLE feedback ENABLE ROW LEVEL SECURITY;
CREATE POLICY feedback_scope ON feedback
  USING (tenant_id = gw_scope_tenant() AND (user_id = gw_scope_user() OR gw_scope_all_users()));
ALTER TABLE training_consent ENABLE ROW LEVEL SECURITY;
CREATE POLICY training_consent_scope ON training_consent
  USING (tenant_id = gw_scope_tenant()
         AND (user_id IN ('*', gw_scope_user()) OR gw_scope_all_users()));

-- Prompts: the built-in defaults (no tenant) are read in every scope; a tenant's versions are its own.
ALTER TABLE prompt_configs ENABLE ROW LEVEL SECURITY;
CREATE POLICY prompt_configs_scope ON prompt_configs USING (tenant_id = gw_scope_tenant());
CREATE POLICY prompt_configs_defaults_read ON prompt_configs FOR SELECT
  USING (tenant_id IS NULL AND gw_scope_tenant() IS NOT NULL);

-- The search statement's role. Its keyword arm and metadata filters are GIN index conditions
-- (`@@`, `@>`), which PostgreSQL does not apply before a policy's condition because their
-- functions are not LEAKPROOF: under the policies above, every search would read all of a
-- tenant's chunks. The search statement (search-repository.ts), and nothing else, switches to
-- this role for its own transaction or routine call: SELECT on the five tables it reads, under
-- a policy that is constant true, so the planner keeps its indexes. The statement carries its
-- scope's predicates itself (filter-sql.ts). Roles are cluster-wide: created once, under the
-- same lock as ensureAppRole's.
SELECT pg_advisory_xact_lock(hashtext('groundwork:app-role'));
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'groundwork_search') THEN
    CREATE ROLE groundwork_search NOLOGIN NOINHERIT;
  END IF;
  -- The migrating role runs searches in tests and on a developer's server as the owner.
  IF NOT pg_has_role(current_user, 'groundwork_search', 'MEMBER') THEN
    EXECUTE format('GRANT groundwork_search TO %I', current_user);
  END IF;
  EXECUTE format('GRANT USAGE ON SCHEMA %I TO groundwork_search', current_schema());
END
$$;
GRANT SELECT ON chunks, documents, term_stats, tenant_stats, tenant_policies TO groundwork_search;
CREATE POLICY chunks_search ON chunks FOR SELECT TO groundwork_search USING (true);
CREATE POLICY documents_search ON documents FOR SELECT TO groundwork_search USING (true);
CREATE POLICY term_stats_search ON term_stats FOR SELECT TO groundwork_search USING (true);
CREATE POLICY tenant_stats_search ON tenant_stats FOR SELECT TO groundwork_search USING (true);
CREATE POLICY tenant_policies_search ON tenant_policies FOR SELECT TO groundwork_search USING (true);

-- The lease sweep (core/ingestion/recovery.ts) is system work over every tenant, run by the
-- ingest function, which logs in as the application: this one function, owned by the migrating
-- role (exempt from the policies), claims the expired leases, and returns no more than each
-- document's tenant, source and count of expiries. Only the application's group may call it
-- (app-role.ts grants it); the sweep then works on each document in its tenant's scope.
CREATE FUNCTION gw_claim_expired_leases(renewed_before timestamptz, batch integer)
  RETURNS TABLE (tenant_id text, source_uri text, lease_expiries integer)
  LANGUAGE sql VOLATILE SECURITY DEFINER AS $$
  UPDATE documents d SET lease_renewed_at = now(), lease_expiries = d.lease_expiries + 1
   WHERE d.id IN (SELECT id FROM documents
                   WHERE status = 'processing'
                     AND coalesce(lease_renewed_at, updated_at) < renewed_before
                   ORDER BY coalesce(lease_renewed_at, updated_at)
                   LIMIT batch FOR UPDATE SKIP LOCKED)
  RETURNING d.tenant_id, d.source_uri, d.lease_expiries
$$;
DO $$
BEGIN
  EXECUTE format('ALTER FUNCTION gw_claim_expired_leases(timestamptz, integer) SET search_path = %I, pg_temp',
                 current_schema());
END
$$;
REVOKE EXECUTE ON FUNCTION gw_claim_expired_leases(timestamptz, integer) FROM PUBLIC;
