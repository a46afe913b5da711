/** Bounded parallelism for the embedding adapters' batched calls. */

/**
 * Maps `items` through `fn` with at most `limit` calls in flight; results keep input order.
 * After the first failure no new call starts, and that failure is thrown.
 */
export async function mapWithConcurrency<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  async function lane(): Promise<void> {
    while (!failed && next < items.length) {
      const index = next++;
      try {
        results[index] = await fn(items[index] as T, index);
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results;
}

/** `items` cut into consecutive slices of at most `size`. */
export function chunked<T>(items: readonly T[], size: number): T[][] {
  const slices: T[][] = [];
  for (let i = 0; i < items.length; i += size) slices.push(items.slice(i, i + size));
  return slices;
}

/** `vector` scaled to unit length, or null for the zero vector. */
export function normalised(vector: readonly number[]): number[] | null {
  const norm = Math.sqrt(vector.reduce((sum, x) => sum + x * x, 0));
  return norm === 0 || !Number.isFinite(norm) ? null : vector.map((x) => x / norm);
}
