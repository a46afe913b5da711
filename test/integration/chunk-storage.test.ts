/**
 * Where a chunk's columns are stored (migrations 0005, 0007 and 0011): its embedding, full-text
 * vector and term counts stay in the row, so that search reads them without a TOAST lookup; the
 * text, read only for the hits returned, may go to TOAST. The control writes chunks with the
 * embedding's storage set back to pgvector's default (EXTERNAL) and sees them move out, so the
 * check can fail.
 */
import type { Database } from '../../lambdas/adapters/postgres/database';
import { ENGINES, openTestDatabase } from '../support/databases';
import { createHashEmbedder } from '../support/hash-embedder';
import { seedDocuments } from '../support/seed';

const embedder = createHashEmbedder();

describe.each(ENGINES)('chunk storage on %s', (engine) => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase(engine);
  });
  afterAll(() => db?.close());

  /** Bytes in the TOAST table of `chunks` (no privilege on the table itself is needed). */
  const toastBytes = async () => {
    const { rows } = await db.query<{ bytes: string }>(
      `SELECT pg_relation_size(reltoastrelid)::text AS bytes FROM pg_class WHERE oid = 'chunks'::regclass`,
    );
    return Number(rows[0]!.bytes);
  };
  // 20 chunks of short text: each row is over the 2 KB TOAST threshold only because of its
  // 2 KB embedding. The texts may still move out (TOAST moves text before it compresses the
  // rest), but 20 short texts fit one 8 KB page where 20 embeddings take five.
  const document = (key: string) => ({
    tenantId: 'storage',
    key,
    texts: Array.from({ length: 20 }, (_, i) => `Note ${i} on where the vectors are kept.`),
  });

  it('keeps the embedding, the full-text vector and the term counts in the row', async () => {
    const { rows } = await db.query<{ attname: string; attstorage: string }>(
      `SELECT attname, attstorage FROM pg_attribute
        WHERE attrelid = 'chunks'::regclass AND attname IN ('embedding', 'fts', 'term_counts') ORDER BY 1`,
    );
    expect(rows).toEqual([
      { attname: 'embedding', attstorage: 'm' },
      { attname: 'fts', attstorage: 'm' },
      { attname: 'term_counts', attstorage: 'm' },
    ]);
    await seedDocuments(db, embedder, [document('storage/inline')]);
    expect(await toastBytes()).toBeLessThanOrEqual(8192);

    await db.exec('ALTER TABLE chunks ALTER COLUMN embedding SET STORAGE EXTERNAL');
    try {
      await seedDocuments(db, embedder, [document('storage/external')]);
      expect(await toastBytes()).toBeGreaterThanOrEqual(20 * 2048);
    } finally {
      await db.exec('ALTER TABLE chunks ALTER COLUMN embedding SET STORAGE MAIN');
    }
  });
});
