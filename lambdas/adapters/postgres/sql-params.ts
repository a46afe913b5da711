/** Collects positional parameters while SQL text is assembled from fixed fragments. */
export class SqlParams {
  readonly values: unknown[] = [];
  /** Adds a value and returns its placeholder (`$n`), optionally with a cast. */
  add(value: unknown, cast?: string): string {
    this.values.push(value);
    return cast ? `$${this.values.length}::${cast}` : `$${this.values.length}`;
  }
}

/**
 * Whether an id from a request is a UUID. Lookups of anything else are "not found" without a
 * query (a `::uuid` cast of a malformed id would fail the statement instead).
 */
export const isUuid = (id: string): boolean =>
  /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id);
