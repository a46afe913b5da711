/**
 * The migrations declare vector(512); a fresh index takes the configured model's dimension on
 * its first start (Titan v2 at 256 or 1024), on both databases, and then holds to it.
 */
import type { Database } from '../../lambdas/adapters/postgres/database';
import { createConversationRepository } from '../../lambdas/adapters/postgres/conversation-repository';
import {
  embeddingColumns,
  ensureEmbeddingModel,
} from '../../lambdas/adapters/postgres/embedding-guard';
import { createSearchRepository } from '../../lambdas/adapters/postgres/search-repository';
import { ConfigError } from '../../lambdas/core/errors';
import { createSearch } from '../../lambdas/core/retrieval/search';
import { ENGINES, openTestDatabase } from '../support/databases';
import { createHashEmbedder } from '../support/hash-embedder';
import { seedDocuments } from '../support/seed';

describe.each(ENGINES)('embedding dimension on %s', (engine) => {
  let db: Database;
  beforeEach(async () => {
    db = await openTestDatabase(engine);
  });
  afterEach(() => db?.close());

  it('fits the embedding columns of a fresh index to the configured dimension', async () => {
    expect((await embeddingColumns(db)).map((c) => c.dimension)).toEqual([512, 512]);
    const titan1024 = createHashEmbedder(1024, 'amazon.titan-embed-text-v2:0');
    await ensureEmbeddingModel(db, titan1024);
    expect(await embeddingColumns(db)).toEqual([
      { table: 'chunks', column: 'embedding', type: 'halfvec', dimension: 1024 },
      { table: 'messages', column: 'embedding', type: 'vector', dimension: 1024 },
    ]);

    // PostgreSQL rebuilt the HNSW index with the column.
    const { rows: indexes } = await db.query<{ indexdef: string }>(
      "SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'chunks' AND indexdef LIKE '%hnsw%'",
    );
    expect(indexes.map((i) => i.indexdef).join()).toMatch(/hnsw \(embedding halfvec_cosine_ops\)/);
    // Each column keeps its storage through the change of type (chunks' in the row: 0007).
    const { rows: storage } = await db.query<{ attname: string; attstorage: string }>(
      `SELECT c.relname || '.' || a.attname AS attname, a.attstorage FROM pg_attribute a
         JOIN pg_class c ON c.oid = a.attrelid
        WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r'
          AND a.attname = 'embedding'
        ORDER BY 1`,
    );
    expect(storage).toEqual([
      { attname: 'chunks.embedding', attstorage: 'm' },
      { attname: 'messages.embedding', attstorage: 'e' },
    ]);
    const [id] = await seedDocuments(db, titan1024, [
      { tenantId: 'acme', key: 'acme/returns', texts: ['Returns are accepted within 30 days.'] },
      { tenantId: 'acme', key: 'acme/shipping', texts: ['Parcels ship from Rotterdam daily.'] },
    ]);
    const search = createSearch({ store: createSearchRepository(db), embedder: titan1024 });
    const { hits } = await search.search(
      { tenantId: 'acme', userId: 'u' },
      { queryText: 'returns accepted days', topK: 2, mode: 'vector', filters: {} },
    );
    expect(hits[0]?.documentId).toBe(id);
    const owner = { tenantId: 'acme', userId: 'u' };
    const conversations = createConversationRepository(db);
    const thread = await conversations.createThread(owner, 'returns');
    await conversations.addUserMessage(owner, thread.id, {
      id: '00000000-0000-4000-8000-0000000000aa',
      content: 'returns?',
      embedding: (await titan1024.embed(['returns?']))[0]!,
    });

    // Restarting with the same model changes nothing; another dimension is refused.
    await ensureEmbeddingModel(db, titan1024);
    await expect(
      ensureEmbeddingModel(db, createHashEmbedder(256, 'amazon.titan-embed-text-v2:0')),
    ).rejects.toThrow(/1024 dimensions.*256 dimensions/s);
  });

  it('keeps 512 when that is the configured dimension, and never alters a column holding vectors', async () => {
    const local = createHashEmbedder(512, 'test/hash-512');
    await seedDocuments(db, local, [{ tenantId: 'acme', key: 'acme/a', texts: ['Alpha.'] }]);
    // Vectors stored but no model recorded (an index from before the guard): not refitted.
    const err = await ensureEmbeddingModel(db, createHashEmbedder(256, 'titan-256')).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(/chunks\.embedding holds 512-dimension vectors/);
    expect((await embeddingColumns(db)).map((c) => c.dimension)).toEqual([512, 512]);
    await ensureEmbeddingModel(db, local);
    expect((await embeddingColumns(db)).map((c) => c.dimension)).toEqual([512, 512]);
  });
});
