/**
 * Opaque keyset cursors for list endpoints: the key of the last row returned, as base64url JSON.
 * A cursor is checked against the key's schema when it comes back, so a cursor this API did not
 * return is a 422 naming the `cursor` parameter, never a query on garbage.
 */
import * as z from '../core/zod';
import { ValidationError } from '../core/errors';
import { findUnstorable } from '../core/text/storable';

export interface CursorCodec<K> {
  encode(key: K): string;
  /** @throws ValidationError when `cursor` is not one `encode` made. */
  decode(cursor: string): K;
}

export function cursorCodec<S extends z.ZodMiniType>(schema: S): CursorCodec<z.infer<S>> {
  return {
    encode: (key) => Buffer.from(JSON.stringify(key), 'utf8').toString('base64url'),
    decode(cursor) {
      const invalid = new ValidationError('cursor: is not a cursor this API returned');
      let key: unknown;
      try {
        key = schema.parse(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')));
      } catch {
        throw invalid;
      }
      // A forged cursor may hold text the database cannot compare with (NUL, lone surrogates).
      if (findUnstorable(key)) throw invalid;
      return key as z.infer<S>;
    },
  };
}
