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
  /** Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** Formats a vector for a `$n::vector` parameter (pgvector's text form). */
export function toVectorLiteral(vector: readonly number[]): string {
  return `[${vector.join(',')}]`;
}
