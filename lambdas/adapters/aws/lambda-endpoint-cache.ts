/**
 * `@aws-sdk/endpoint-cache` as the Lambda bundles have it: the same class on a Map instead of
 * mnemonist's LRU cache.
 *
 * Every DynamoDB client builds an EndpointCache for endpoint discovery at construction, which
 * brings mnemonist (and obliterator) into every bundle that uses DynamoDB: about 7 KB minified,
 * for a cache the functions leave empty (they never turn endpoint discovery on). lib/bundling.ts
 * aliases the package to this module: the SDK's class, method for method, over a Map kept in
 * least-recently-used order, evicting the oldest key beyond its capacity as mnemonist does.
 * lambda-endpoint-cache.test.ts runs both on the same random operations.
 */

/** An endpoint as DescribeEndpoints returns it. */
export interface Endpoint {
  readonly Address: string;
  readonly CachePeriodInMinutes: number;
}

/** An endpoint with the time it stops being valid (epoch milliseconds). */
export interface EndpointWithExpiry {
  readonly Address: string;
  readonly Expires: number;
}

/** A least-recently-used map of discovered endpoints, as in `@aws-sdk/endpoint-cache`. */
export class EndpointCache {
  private readonly cache = new Map<string, EndpointWithExpiry[]>();

  constructor(private readonly capacity: number) {}

  /** A random unexpired address for the key, or undefined. */
  getEndpoint(key: string): string | undefined {
    const endpoints = this.get(key);
    if (!endpoints || endpoints.length === 0) return undefined;
    return endpoints[Math.floor(Math.random() * endpoints.length)]?.Address;
  }

  /** The key's unexpired endpoints (marks it recently used); a key left with none is emptied. */
  get(key: string): EndpointWithExpiry[] | undefined {
    if (!this.has(key)) return undefined;
    const value = this.cache.get(key);
    if (!value) return undefined;
    this.touch(key, value);
    const now = Date.now();
    const live = value.filter((endpoint) => now < endpoint.Expires);
    if (live.length === 0) {
      this.delete(key);
      return undefined;
    }
    return live;
  }

  /** Stores the key's endpoints with their expiry times. */
  set(key: string, endpoints: readonly Endpoint[]): void {
    const now = Date.now();
    this.put(
      key,
      endpoints.map(({ Address, CachePeriodInMinutes }) => ({
        Address,
        Expires: now + CachePeriodInMinutes * 60 * 1000,
      })),
    );
  }

  /** Empties the key (it stays in the cache, as in the SDK). */
  delete(key: string): void {
    this.put(key, []);
  }

  /** Whether the key holds endpoints (does not mark it used). */
  has(key: string): boolean {
    return (this.cache.get(key)?.length ?? 0) > 0;
  }

  clear(): void {
    this.cache.clear();
  }

  /** Moves the key to the most recently used end. */
  private touch(key: string, value: EndpointWithExpiry[]): void {
    this.cache.delete(key);
    this.cache.set(key, value);
  }

  /** Stores as most recently used, evicting the least recently used key beyond the capacity. */
  private put(key: string, value: EndpointWithExpiry[]): void {
    this.touch(key, value);
    if (this.cache.size > this.capacity) {
      const oldest = this.cache.keys().next();
      if (!oldest.done) this.cache.delete(oldest.value);
    }
  }
}
