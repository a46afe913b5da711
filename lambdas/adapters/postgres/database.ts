/**
 * One small database interface over two drivers: `pg` for PostgreSQL / Aurora and PGlite
 * (PostgreSQL compiled to WebAssembly, in-process) for the embedded default. Repositories are
 * written once against `Database` and run unchanged on both.
 */

/** Anything that runs a parameterised query. */
export interface Queryable {
  query<R extends object = Record<string, unknown>>(
    text: string,
    params?: readonly unknown[],
  ): Promise<{ rows: R[]; rowCount: number }>;
  /** Runs a multi-statement script without parameters (migrations only). */
  exec(script: string): Promise<void>;
}

/** A connection pool (or the single in-process PGlite connection). */
export interface Database extends Queryable {
  readonly kind: 'postgres' | 'pglite';
  /**
   * Runs `fn` in one transaction: committed when it resolves, rolled back when it throws.
   * `settings` are `SET LOCAL` for this transaction only (never the pooled session), sent with
   * the BEGIN in one round trip on a server.
   */
  transaction<T>(fn: (tx: Queryable) => Promise<T>, settings?: LocalSettings): Promise<T>;
  /**
   * Runs one statement as is, outside the transaction that `query` opens for a request's scope
   * (db-scope.ts): for a routine call that sets its own role and settings (search-repository.ts),
   * in one round trip.
   */
  call<R extends object = Record<string, unknown>>(
    text: string,
    params?: readonly unknown[],
  ): Promise<{ rows: R[]; rowCount: number }>;
  close(): Promise<void>;
}

/** Options of both adapters. */
export interface DatabaseOptions {
  /**
   * The role a request's statements run as (`SET LOCAL ROLE`) when the session logs in as
   * another one: PGlite's superuser, or the owner on a developer's server. Unset where the
   * session already is the application role (AWS). @default undefined
   */
  readonly requestRole?: string;
}

/** Run-time parameters for one transaction: name to value, both plain (checked, never quoted). */
export type LocalSettings = Readonly<Record<string, string | number>>;

const SETTING_NAME = /^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)?$/;
const SETTING_VALUE = /^[A-Za-z0-9_.-]+$/;

/** `SET LOCAL` statements for `settings`; a name or value that is not plain is refused. */
export function setLocalSql(settings: LocalSettings): string {
  return Object.entries(settings)
    .map(([name, value]) => {
      if (!SETTING_NAME.test(name) || !SETTING_VALUE.test(String(value)))
        throw new Error(`not a plain setting: ${name} = ${String(value)}`);
      return `SET LOCAL ${name} = ${value}`;
    })
    .join('; ');
}

/** Formats a vector for a `$n::vector` parameter (pgvector's text form). */
export function toVectorLiteral(vector: readonly number[]): string {
  return `[${vector.join(',')}]`;
}
