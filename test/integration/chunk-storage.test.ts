/**
 * Where a chunk's columns are stored (migrations 0007, 0011 and 0020): its embedding and term
 * counts stay in the row, so that search reads them without a TOAST lookup; the full-text vector,
 * which search does not read, and the text, read only for the hits returned, go to TOAST, so that
 * more chunks share a page. The controls write chunks with the embedding's storage set back to
 * pgvector's default (EXTERNAL) and see them move out, and with the full-text vector's set back
 * to MAIN and see it stay, so the checks can fail.
 */
import type { Database } from '../../lambdas/adapters/postgres/database';
import { ensureEmbeddingModel } from '../../lambdas/adapters/postgres/embedding-guard';
import { ENGINES, openTestDatabase } from '../support/databases';
import { createHashEmbedder } from '../support/hash-embedder';
import { seedDocuments } from '../support/seed';

// 1,024 dimensions (Titan v2's default): a 2 KB `halfvec`, as a 512-dimension `vector` was.
const embedder = createHashEmbedder(1024, 'test/hash-1024');

describe.each(ENGINES)('chunk storage on %s', (engine) => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase(engine);
    await ensureEmbeddingModel(db, embedder);
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

  it('keeps the embedding and the term counts in the row, the full-text vector out of it', async () => {
    const { rows } = await db.query<{ attname: string; attstorage: string }>(
      `SELECT attname, attstorage FROM pg_attribute
        WHERE attrelid = 'chunks'::regclass AND attname IN ('embedding', 'fts', 'term_counts') ORDER BY 1`,
    );
    expect(rows).toEqual([
      { attname: 'embedding', attstorage: 'm' },
      { attname: 'fts', attstorage: 'e' },
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

  it('moves the full-text vector out of the row', async () => {
    // Ten chunks of 250 distinct words: each full-text vector is about 3 KB, and with the
    // embedding and the term counts a row still fits a page when the vector stays in it.
    const long = (key: string) => ({
      tenantId: 'storage',
      key,
      texts: Array.from({ length: 10 }, (_, c) =>
        Array.from({ length: 250 }, (_, w) => `${key.slice(-3)}${c}q${w.toString(36)}`).join(' '),
      ),
    });
    let before = await toastBytes();
    await seedDocuments(db, embedder, [long('storage/out')]);
    const external = (await toastBytes()) - before;

    await db.exec('ALTER TABLE chunks ALTER COLUMN fts SET STORAGE MAIN');
    try {
      before = await toastBytes();
      await seedDocuments(db, embedder, [long('storage/inn')]);
      const main = (await toastBytes()) - before;
      // Out of the row: at least 10 × 2.5 KB more in TOAST than the texts alone put there.
      expect(external).toBeGreaterThanOrEqual(main + 10 * 2500);
    } finally {
      await db.exec('ALTER TABLE chunks ALTER COLUMN fts SET STORAGE EXTERNAL');
    }
  });
});
