-- 0016: a tenant's source-type policy is a tenant setting (docs/decisions/0145-harness-and-source-type-policies.md).
-- `tenant_policies.allowed_source_types` (0002) says which types retrieval returns; the mode says
-- what a request naming another type gets: `permissive` (the default) narrows it away, `strict`
-- refuses it (403), and a strict policy always has a list. A tenant without a row is permissive
-- with every type allowed.
ALTER TABLE tenant_policies
  ADD COLUMN source_type_mode text NOT NULL DEFAULT 'permissive'
    CHECK (source_type_mode IN ('permissive', 'strict')),
  ADD COLUMN updated_by text,
  ADD CONSTRAINT tenant_policies_strict_has_types
    CHECK (source_type_mode = 'permissive' OR coalesce(cardinality(allowed_source_types), 0) > 0);

-- Row-level security (0013): every reader of the tenant reads its policy (search applies it for
-- everyone); only work over all of the tenant's users, which a request does for tenant admins
-- only (db-scope.ts), may write it. 0013's one policy for every command is split accordingly.
DROP POLICY tenant_policies_scope ON tenant_policies;
CREATE POLICY tenant_policies_read ON tenant_policies FOR SELECT
  USING (tenant_id = gw_scope_tenant());
CREATE POLICY tenant_policies_insert ON tenant_policies FOR INSERT
  WITH CHECK (tenant_id = gw_scope_tenant() AND gw_scope_all_users());
CREATE POLICY tenant_policies_update ON tenant_policies FOR UPDATE
  USING (tenant_id = gw_scope_tenant() AND gw_scope_all_users())
  WITH CHECK (tenant_id = gw_scope_tenant() AND gw_scope_all_users());
CREATE POLICY tenant_policies_delete ON tenant_policies FOR DELETE
  USING (tenant_id = gw_scope_tenant() AND gw_scope_all_users());
