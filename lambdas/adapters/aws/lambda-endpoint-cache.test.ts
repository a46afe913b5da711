import { EndpointCache as SdkEndpointCache } from '@aws-sdk/endpoint-cache';
import { createPrng } from '../../../test/support/prng';
import { EndpointCache } from './lambda-endpoint-cache';

describe('the Lambda bundles’ endpoint cache', () => {
  afterEach(() => jest.restoreAllMocks());

  it('answers as the SDK’s on the same random operations: recency, eviction, expiry', () => {
    let now = 1_000_000;
    jest.spyOn(Date, 'now').mockImplementation(() => now);
    // getEndpoint picks at random: both caches get the same draws.
    jest.spyOn(Math, 'random').mockReturnValue(0.5);
    const prng = createPrng(7);
    const next = () => prng.next();
    const keys = ['a', 'b', 'c', 'd', 'e', 'f'];
    for (const capacity of [1, 3, 5]) {
      const ours = new EndpointCache(capacity);
      const sdk = new SdkEndpointCache(capacity);
      for (let step = 0; step < 3000; step += 1) {
        const key = keys[Math.floor(next() * keys.length)] ?? 'a';
        const op = Math.floor(next() * 6);
        const endpoints = Array.from({ length: Math.floor(next() * 3) }, (_, i) => ({
          Address: `${key}-${step}-${i}.example`,
          CachePeriodInMinutes: 1 + Math.floor(next() * 3),
        }));
        const results = [ours, sdk].map((cache) => {
          switch (op) {
            case 0:
            case 1:
              return cache.set(key, endpoints);
            case 2:
              return cache.get(key);
            case 3:
              return cache.getEndpoint(key);
            case 4:
              return cache.delete(key);
            default:
              return step % 500 === 0 ? cache.clear() : cache.has(key);
          }
        });
        expect({ step, op, result: results[0] }).toEqual({ step, op, result: results[1] });
        // The whole state, without touching recency (has does not mark a key used).
        expect(keys.map((k) => ours.has(k))).toEqual(keys.map((k) => sdk.has(k)));
        now += Math.floor(next() * 20_000);
      }
    }
  });
});
