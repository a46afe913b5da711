/**
 * The scope of a request's database work, for row-level security (migrations/0013,
 * docs/decisions/0135-row-level-security.md).
 *
 * The HTTP handler builder and the ingestion use case run their work inside `runInDbScope`; the
 * database adapters (pg-database.ts, pglite-database.ts) read it with `currentDbScope` and open
 * every statement's transaction with the scope's settings, `set_config(.., true)`, so they end
 * with the transaction and a pooled connection never carries them. That is the one place the
 * settings are made: a repository cannot forget them, and a statement that forgets its tenant
 * predicate still sees only its scope's rows. Work outside any scope (migrations, start-up
 * checks, re-embedding, evaluation) runs as the connection's own role: in AWS the application
 * role sees nothing there, and the migrating owner is exempt.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { TenantScope } from '../../core/ports';

export interface DbScope {
  readonly tenantId: string;
  /** The caller; null for work that is no single user's (ingestion). */
  readonly userId: string | null;
  /** Every user's rows of the tenant: ingestion and tenant admins. */
  readonly allUsers: boolean;
}

/** The settings the policies read (migrations/0013). */
const SCOPE_SETTINGS = {
  tenant: 'groundwork.tenant_id',
  user: 'groundwork.user_id',
  allUsers: 'groundwork.all_users',
} as const;

const storage = new AsyncLocalStorage<DbScope>();

/** Runs `fn` with `scope` as the scope of every database statement it makes. */
export function runInDbScope<T>(scope: DbScope, fn: () => T): T {
  return storage.run(scope, fn);
}

/** Ingestion's scope: one tenant, every user of it (the `TenantScope` port). */
export const dbTenantScope: TenantScope = (tenantId, work) =>
  runInDbScope({ tenantId, userId: null, allUsers: true }, work);

/** The scope of the work running now, if any. */
export function currentDbScope(): DbScope | undefined {
  return storage.getStore();
}

/**
 * A string as an SQL literal: an escape string (E'...') with backslashes and quotes doubled, which
 * reads the same whatever `standard_conforming_strings` says (a user id comes from a token).
 */
function literal(value: string): string {
  if (/[\0]/.test(value)) throw new Error('a scope value holds a NUL character');
  return `E'${value.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}

/**
 * The statement that applies `scope` inside an open transaction: `SET LOCAL ROLE` to `role`
 * when given (a session that logs in as another role), then the settings. Literals, not bind
 * parameters, so that it travels with the BEGIN in one round trip.
 */
export function scopeSql(scope: DbScope | undefined, role?: string): string {
  const parts: string[] = [];
  if (role) parts.push(`SET LOCAL ROLE ${role}`);
  if (scope) {
    parts.push(
      `SELECT set_config('${SCOPE_SETTINGS.tenant}', ${literal(scope.tenantId)}, true), ` +
        `set_config('${SCOPE_SETTINGS.user}', ${literal(scope.userId ?? '')}, true), ` +
        `set_config('${SCOPE_SETTINGS.allUsers}', ${literal(scope.allUsers ? 'on' : 'off')}, true)`,
    );
  }
  return parts.join('; ');
}
