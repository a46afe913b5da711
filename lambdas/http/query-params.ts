/**
 * Query-string values as the routes' schemas read them. A query parameter is always a string; a
 * whole number is written in decimal digits and nothing else: `z.coerce.number()` would also take
 * `0x10`, `1e1`, ` 5 ` and the empty string (as 0).
 */
import * as z from '../core/zod';

/** A whole number from `min` to `max`, written in decimal digits (422 otherwise). */
export const queryInteger = (min: number, max: number) =>
  z.pipe(
    z.string().check(z.regex(/^\d{1,10}$/, 'a whole number in decimal digits')),
    z.pipe(z.transform(Number), z.number().check(z.int(), z.gte(min), z.lte(max))),
  );
