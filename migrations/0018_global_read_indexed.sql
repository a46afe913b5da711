-- 0018: row-level security reads another tenant's `global` documents (and so their chunks) only
-- once they are indexed, as the visibility rule does (lambdas/adapters/postgres/visibility-sql.ts,
-- docs/decisions/0146-one-visibility-rule.md). A document being indexed again, or failed, stays
-- its own tenant's (documents_scope). The publishing tenants are configuration the database does
-- not hold: the rule, inside this wall, keeps to them.
DROP POLICY documents_global_read ON documents;
CREATE POLICY documents_global_read ON documents FOR SELECT
  USING (visibility = 'global' AND status = 'indexed' AND gw_scope_tenant() IS NOT NULL);
