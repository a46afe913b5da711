/**
 * The writer and the reads: which connection each repository is given, in one place
 * (docs/decisions/0147-reads-on-aurora-readers.md).
 *
 * `reads` may lag the writer (an Aurora reader replays the writer's log a few milliseconds
 * behind) and may refuse writes (a reader, or a role with SELECT only). It serves only reads that
 * do not depend on a write of the same request:
 *
 * - reads: the search repository (search-repository.ts: a search and its preparation, the
 *   tenant's statistics and source-type policy), behind POST /api/rag/search, answer retrieval
 *   (POST /api/rag/answer, streamed or not, seed 000's and seed 003's chat, the harness) and
 *   seed 004's GET /api/search.
 * - writer: everything else. Ingestion and the documents API; conversations (threads, messages,
 *   feedback, memory), because a thread's own messages are read right after they are written in
 *   the same request; prompts and admin statistics, read right after an admin's change; the
 *   migrations, the embedding guard and the lease sweep.
 *
 * Both connections are the same adapter, so a request's identity scope (db-scope.ts) applies on
 * each. Without a read endpoint `reads` is the writer itself: one pool, one code path.
 */
import type { Database } from './database';

export interface Databases {
  /** Writes, and the reads that must see them. */
  readonly writer: Database;
  /** Reads that may lag the writer: the search repository only (see above). */
  readonly reads: Database;
}

/** The writer and, when one is configured, a separate connection for reads; else the writer. */
export function databases(writer: Database, reads?: Database): Databases {
  return { writer, reads: reads ?? writer };
}
