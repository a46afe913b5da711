/** Collects positional parameters while SQL text is assembled from fixed fragments. */
export class SqlParams {
  readonly values: unknown[] = [];
  /** Each value's cast, where one was given (a routine's signature needs them all). */
  readonly types: (string | undefined)[] = [];
  /** Adds a value and returns its placeholder (`$n`), optionally with a cast. */
  add(value: unknown, cast?: string): string {
    this.values.push(value);
    this.types.push(cast);
    return cast ? `$${this.values.length}::${cast}` : `$${this.values.length}`;
  }
}

/**
 * Whether an id from a request is a UUID. Lookups of anything else are "not found" without a
 * query (a `::uuid` cast of a malformed id would fail the statement instead).
 */
export const isUuid = (id: string): boolean =>
  /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id);

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Quotes a plain lower-case identifier (a role, schema, table or column name, which cannot be a
 * bind parameter); anything else is refused rather than escaped.
 */
export function quoteIdentifier(name: string): string {
  if (!IDENTIFIER.test(name))
    throw new Error(`"${name}" is not a plain identifier (a-z, 0-9, _; at most 63 characters)`);
  return `"${name}"`;
}
