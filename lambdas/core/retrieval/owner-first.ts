/**
 * The owner-first retrieval policy: among a request's candidates, the chunks of documents the
 * caller owns come before everyone else's, each group keeping its relevance order. A profile that
 * asks for it (`owner_first`) retrieves more candidates than it keeps, so that the caller's own
 * sources that rank below the cut still reach the context.
 */
import type { SearchHit } from './types';

/** The hits owned by `userId` first, then the others; a stable partition of `hits`. */
export function ownerFirst(hits: readonly SearchHit[], userId: string): SearchHit[] {
  const owned: SearchHit[] = [];
  const others: SearchHit[] = [];
  for (const hit of hits) (hit.ownerUserId === userId ? owned : others).push(hit);
  return [...owned, ...others];
}
