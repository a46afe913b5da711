/**
 * The owner-first retrieval policy on both databases: among a request's candidates, the chunks of
 * documents the caller owns come first, so an owned document below the final cut still reaches
 * it; other callers' ordering is unchanged, and nobody sees another user's private document.
 */
import type { Database } from '../../lambdas/adapters/postgres/database';
import { createSearchRepository } from '../../lambdas/adapters/postgres/search-repository';
import { createSearch, type Search } from '../../lambdas/core/retrieval/search';
import { ENGINES, openTestDatabase } from '../support/databases';
import { createHashEmbedder } from '../support/hash-embedder';
import { seedDocuments, type SeedDoc } from '../support/seed';

const embedder = createHashEmbedder();

const DOCS: SeedDoc[] = [
  {
    tenantId: 'shop',
    key: 'shop/listing-bob',
    texts: ['Vintage wedding rings listing: best selling vintage wedding rings, free shipping.'],
    sourceType: 'listing',
    owner: 'bob',
  },
  {
    tenantId: 'shop',
    key: 'shop/listing-a',
    texts: ['Vintage wedding rings listing with engraved vintage wedding bands.'],
    sourceType: 'listing',
  },
  {
    tenantId: 'shop',
    key: 'shop/listing-b',
    texts: ['Wedding rings listing: vintage gold wedding rings for sale.'],
    sourceType: 'listing',
  },
  {
    tenantId: 'shop',
    key: 'shop/listing-alice',
    texts: ['A studio listing for silver bracelets and pendants.'],
    sourceType: 'listing',
    owner: 'alice',
  },
  {
    tenantId: 'shop',
    key: 'shop/users/alice/notes',
    texts: ['My notes on pricing bracelets for the holiday season.'],
    visibility: 'user',
    owner: 'alice',
  },
];

describe.each(ENGINES)('owner-first retrieval on %s', (engine) => {
  let db: Database;
  let search: Search;

  beforeAll(async () => {
    db = await openTestDatabase(engine);
    await seedDocuments(db, embedder, DOCS);
    search = createSearch({ store: createSearchRepository(db), embedder });
  });
  afterAll(() => db?.close());

  const keys = (hits: { sourceUri: string }[]) =>
    hits.map((h) => h.sourceUri.replace('s3://bucket/shop/', ''));
  const query = (userId: string, ownerFirst: boolean, candidates?: number) =>
    search.search(
      { tenantId: 'shop', userId },
      {
        queryText: 'vintage wedding rings listing',
        topK: 2,
        mode: 'hybrid',
        filters: {},
        ...(candidates ? { candidates } : {}),
        ...(ownerFirst ? { ownerFirst } : {}),
      },
    );

  it("brings the caller's own documents from below the cut to the top", async () => {
    const plain = keys((await query('alice', false, 10)).hits);
    expect(plain).toHaveLength(2);
    expect(plain).not.toContain('listing-alice');
    const owned = await query('alice', true, 10);
    expect(keys(owned.hits).sort()).toEqual(['listing-alice', 'users/alice/notes']);
    expect(owned.hits.every((h) => h.ownerUserId === 'alice')).toBe(true);
  });

  it("keeps each caller's own first and leaves a caller who owns nothing as relevance ranks", async () => {
    const bob = keys((await query('bob', true, 10)).hits);
    expect(bob[0]).toBe('listing-bob');
    const carolPlain = keys((await query('carol', false, 10)).hits);
    expect(keys((await query('carol', true, 10)).hits)).toEqual(carolPlain);
    // Another user's private document is never a candidate, owner-first or not.
    const wide = await search.search(
      { tenantId: 'shop', userId: 'bob' },
      {
        queryText: 'bracelets notes pricing',
        topK: 10,
        mode: 'hybrid',
        filters: {},
        ownerFirst: true,
      },
    );
    expect(keys(wide.hits)).not.toContain('users/alice/notes');
  });

  it('chooses only among the candidates: a pool of the final count reorders, adds nothing', async () => {
    const pool = keys((await query('alice', false)).hits);
    expect(keys((await query('alice', true)).hits).sort()).toEqual([...pool].sort());
  });
});
