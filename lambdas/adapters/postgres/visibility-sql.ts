/**
 * The visibility rule: which documents a reader sees, as SQL predicates over a `documents` row.
 * Every reader builds its predicate here and nowhere else: search (filter-sql.ts), the documents
 * API's get, list and passages (document-queries.ts) and the admin statistics
 * (admin-queries.ts); test/unit/visibility-home.test.ts fails when another module writes a
 * predicate on `visibility` of its own. The rule and its reasons:
 * docs/decisions/0146-one-visibility-rule.md.
 *
 * - In the reader's own tenant, every status: `tenant` and `global` documents, and the reader's
 *   own `user` documents (another user's private document is not there, for admins too).
 * - In another tenant: its `global` documents once `indexed`, and only if it is a publishing tenant.
 *
 * Row-level security (migrations/0013, 0018) is the coarser wall around it: the tenant, the
 * caller's private rows, and any tenant's indexed `global` documents.
 */
import type { Reader } from '../../core/visibility';
import type { SqlParams } from './sql-params';

/** A table alias or a qualified column, checked: the fragments are SQL text. */
function name(n: string): string {
  if (!/^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)?$/.test(n)) throw new Error(`not a name: ${n}`);
  return n;
}

/**
 * {@link visibleDocumentSql} as two disjoint predicates, each with its own tenant test: the
 * reader's tenant, and the publishing tenants seen from another tenant. A reader that pages in
 * the order of an index on (tenant_id, ...) reads each through it, which their OR would not allow.
 */
export function visibleDocumentBranches(
  d: string,
  reader: Reader,
  p: SqlParams,
): readonly [own: string, published: string] {
  const a = name(d);
  const tenant = p.add(reader.tenantId, 'text');
  const user = p.add(reader.userId, 'text');
  const publishers = p.add([...reader.globalTenants], 'text[]');
  return [
    `${a}.tenant_id = ${tenant} AND (${a}.visibility <> 'user' OR ${a}.owner_user_id = ${user})`,
    `${a}.tenant_id = ANY(${publishers}) AND ${a}.tenant_id <> ${tenant}
      AND ${a}.visibility = 'global' AND ${a}.status = 'indexed'`,
  ];
}

/** The documents of `d` the reader sees, in every status (get, passages, search). */
export function visibleDocumentSql(d: string, reader: Reader, p: SqlParams): string {
  const [own, published] = visibleDocumentBranches(d, reader, p);
  return `((${own})
      OR (${published}))`;
}

/** The documents the reader can find by their content: visible and `indexed` (search). */
export function searchableDocumentSql(d: string, reader: Reader, p: SqlParams): string {
  return `${name(d)}.status = 'indexed'
    AND ${visibleDocumentSql(d, reader, p)}`;
}

/**
 * The tenants whose rows a reader's documents can be in (its own and the publishing ones), as a
 * test on `column`: a condition an index on the tenant can serve, always AND-ed with one of the
 * predicates above.
 */
export function readerTenantsSql(column: string, reader: Reader, p: SqlParams): string {
  return `${name(column)} = ANY(${p.add([reader.tenantId, ...reader.globalTenants], 'text[]')})`;
}

/**
 * What a tenant holds: every document of the tenant, each visibility and status. Not what anyone
 * reads: what its admin statistics count (counts show no document's content).
 */
export function tenantHoldingsSql(d: string, tenantId: string, p: SqlParams): string {
  return `${name(d)}.tenant_id = ${p.add(tenantId, 'text')}`;
}
