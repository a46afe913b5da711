/**
 * Seeded pseudo-random numbers for benchmark data and randomized tests: the same seed gives the
 * same vectors, texts, queries and test cases on every machine and every run.
 */

/** A source of uniform numbers in [0, 1) with a few derived distributions. */
export interface Prng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform integer in [0, n). */
  int(n: number): number;
  /** Standard normal (Box-Muller, both values used). */
  gaussian(): number;
  /** A new generator whose stream is independent of this one's later draws. */
  fork(label: string): Prng;
}

/** 32-bit FNV-1a, to turn a label into a seed. */
function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * sfc32 (Chris Doty-Humphrey's Small Fast Counting generator): passes PractRand to 2^40+ bytes,
 * fast in JavaScript's 32-bit integer arithmetic, and a counter guarantees no short cycles.
 */
export function createPrng(seed: number | string): Prng {
  const s = typeof seed === 'string' ? hash32(seed) : seed >>> 0;
  let a = s ^ 0x9e3779b9;
  let b = Math.imul(s, 0x85ebca6b) >>> 0;
  let c = Math.imul(s ^ 0xc2b2ae35, 0x27d4eb2f) >>> 0;
  let d = 1;
  const raw = (): number => {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return t >>> 0;
  };
  // Discard the first outputs: the state is poorly mixed right after seeding.
  for (let i = 0; i < 15; i += 1) raw();
  let spare: number | null = null;

  const prng: Prng = {
    next: () => raw() / 4294967296,
    int: (n) => Math.floor((raw() / 4294967296) * n),
    gaussian() {
      if (spare !== null) {
        const value = spare;
        spare = null;
        return value;
      }
      let u = 0;
      while (u === 0) u = prng.next();
      const v = prng.next();
      const r = Math.sqrt(-2 * Math.log(u));
      spare = r * Math.sin(2 * Math.PI * v);
      return r * Math.cos(2 * Math.PI * v);
    },
    fork: (label) => createPrng((raw() ^ hash32(label)) >>> 0),
  };
  return prng;
}

/**
 * Draws ranks 0..n-1 with probability proportional to 1 / (rank + 1)^exponent (Zipf's law), by
 * binary search over the cumulative distribution.
 */
export function createZipf(n: number, exponent: number): (rng: Prng) => number {
  const cdf = new Float64Array(n);
  let total = 0;
  for (let k = 0; k < n; k += 1) {
    total += 1 / Math.pow(k + 1, exponent);
    cdf[k] = total;
  }
  for (let k = 0; k < n; k += 1) cdf[k] = (cdf[k] ?? 0) / total;
  return (rng) => {
    const u = rng.next();
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((cdf[mid] ?? 1) < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}
