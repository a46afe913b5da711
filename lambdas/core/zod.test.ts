import * as z from './zod';

// zod/mini installs no locale by itself: without lambdas/core/zod.ts every message would be
// "Invalid input". This file imports no classic zod (which would install English on its own),
// so what it sees is what a bundled Lambda sees.
describe('the zod every Lambda builds its schemas with', () => {
  it('reports errors with the English messages', () => {
    const result = z.object({ name: z.string().check(z.minLength(3)) }).safeParse({ name: 'a' });

    expect(result.error?.issues.map((i) => i.message)).toEqual([
      'Too small: expected string to have >=3 characters',
    ]);
  });

  it('describes a wrong type, a bad option and an unknown key in English', () => {
    const schema = z.strictObject({ count: z.int(), mode: z.enum(['fast', 'slow']) });

    const result = schema.safeParse({ count: 'x', mode: 'medium', extra: true });

    expect(result.error?.issues.map((i) => i.message)).toEqual([
      'Invalid input: expected number, received string',
      'Invalid option: expected one of "fast"|"slow"',
      'Unrecognized key: "extra"',
    ]);
  });
});
