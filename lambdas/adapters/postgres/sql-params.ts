/** Collects positional parameters while SQL text is assembled from fixed fragments. */
export class SqlParams {
  readonly values: unknown[] = [];
  /** Adds a value and returns its placeholder (`$n`), optionally with a cast. */
  add(value: unknown, cast?: string): string {
    this.values.push(value);
    return cast ? `$${this.values.length}::${cast}` : `$${this.values.length}`;
  }
}
