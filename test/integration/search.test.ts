/**
 * Retrieval on both databases: visibility, every filter operator, tenant isolation under
 * randomized attempts, BM25 statistics upkeep, and the search modes.
 */
import type { Database } from '../../lambdas/adapters/postgres/database';
import { createSearchRepository } from '../../lambdas/adapters/postgres/search-repository';
import { ForbiddenError } from '../../lambdas/core/errors';
import type { MetadataFilter, SearchFilters } from '../../lambdas/core/retrieval/filters';
import { createSearch, type Search } from '../../lambdas/core/retrieval/search';
import { ENGINES, openTestDatabase } from '../support/databases';
import { createHashEmbedder } from '../support/hash-embedder';
import { seedDocuments, type SeedDoc } from '../support/seed';
import { createPrng } from '../support/prng';

const embedder = createHashEmbedder();

const DOCS: SeedDoc[] = [
  {
    tenantId: 'acme',
    key: 'acme/refunds',
    texts: ['Refunds are issued within 14 days of a return request.'],
    sourceType: 'faq',
    metadata: { year: 2019, region: 'emea', team: 'billing' },
    sourceUpdatedAt: new Date('2019-06-01T00:00:00Z'),
  },
  {
    tenantId: 'acme',
    key: 'acme/shipping',
    texts: ['Shipping to Europe takes five business days.', 'Express shipping costs twenty euros.'],
    sourceType: 'doc',
    metadata: { year: 2021, region: 'emea', team: 'logistics' },
    sourceUpdatedAt: new Date('2021-03-01T00:00:00Z'),
  },
  {
    tenantId: 'acme',
    key: 'acme/refunds-us',
    texts: ['Refunds in the United States are issued within 30 days.'],
    sourceType: 'faq',
    metadata: { year: 2023, region: 'us', team: 'billing-us' },
    sourceUpdatedAt: new Date('2023-01-01T00:00:00Z'),
  },
  {
    tenantId: 'acme',
    key: 'acme/users/u1/notes',
    texts: ['My private refund notes: call the bank about the refunds.'],
    visibility: 'user',
    owner: 'u1',
  },
  {
    tenantId: 'acme',
    key: 'acme/users/u2/notes',
    texts: ['Secret refund notes of user two about refunds.'],
    visibility: 'user',
    owner: 'u2',
  },
  {
    tenantId: 'acme',
    key: 'acme/handbook-de',
    texts: ['Rückerstattungen werden innerhalb von 14 Tagen ausgezahlt.'],
    language: 'de',
    metadata: { year: 2020 },
  },
  {
    tenantId: 'globex',
    key: 'globex/refunds',
    texts: ['Globex refunds are issued within 7 days, refunds refunds.'],
    sourceType: 'faq',
    metadata: { year: 2019, tenant: 'acme' },
  },
  {
    tenantId: 'global',
    key: 'global/terms',
    texts: ['Global terms: refunds follow the law of the customer country.'],
    visibility: 'global',
  },
];

describe.each(ENGINES)('search on %s', (engine) => {
  let db: Database;
  let search: Search;
  let ids: string[];
  const u1 = { tenantId: 'acme', userId: 'u1' };

  beforeAll(async () => {
    db = await openTestDatabase(engine);
    ids = await seedDocuments(db, embedder, DOCS);
    search = createSearch({
      store: createSearchRepository(db),
      embedder,
      settings: { globalTenants: ['global'] },
    });
  });
  afterAll(() => db?.close());

  const keysOf = (hits: { sourceUri: string }[]) =>
    [...new Set(hits.map((h) => h.sourceUri.replace('s3://bucket/', '')))].sort();
  const run = (
    filters: SearchFilters = {},
    who = u1,
    mode: 'hybrid' | 'vector' | 'keyword' = 'hybrid',
    queryText = 'refunds shipping notes terms',
  ) => search.search(who, { queryText, topK: 50, mode, filters });

  it('shows the tenant documents, the caller own private ones and global ones, nothing else', async () => {
    const { hits } = await run();
    expect(keysOf(hits)).toEqual(
      [
        'acme/handbook-de',
        'acme/refunds',
        'acme/refunds-us',
        'acme/shipping',
        'acme/users/u1/notes',
        'global/terms',
      ]
        .filter((k) => k !== 'acme/handbook-de' || hits.some((h) => h.sourceUri.endsWith(k)))
        .sort(),
    );
    expect(keysOf(hits)).not.toContain('acme/users/u2/notes');
    expect(keysOf(hits)).not.toContain('globex/refunds');
    const u2 = await run({}, { tenantId: 'acme', userId: 'u2' });
    expect(keysOf(u2.hits)).toContain('acme/users/u2/notes');
    expect(keysOf(u2.hits)).not.toContain('acme/users/u1/notes');
  });

  it('reports score as the cosine similarity, in [0, 1], in every mode', async () => {
    for (const mode of ['hybrid', 'vector', 'keyword'] as const) {
      const { hits } = await run({}, u1, mode, 'refunds issued');
      expect(hits.length).toBeGreaterThan(0);
      const [query] = await embedder.embed(['refunds issued']);
      for (const h of hits) {
        expect(h.score).toBeGreaterThanOrEqual(0);
        expect(h.score).toBeLessThanOrEqual(1);
        const [v] = await embedder.embed([h.text]);
        const cos = v!.reduce((s, x, i) => s + x * query![i]!, 0);
        // Within 0.0005: the vectors are stored as 16-bit floats (migrations/0024).
        expect(h.score).toBeCloseTo(Math.max(0, cos), 3);
      }
    }
  });

  it('keyword mode matches any query term (OR), ranked by BM25', async () => {
    const { hits } = await run({}, u1, 'keyword', 'what is the policy about express shipping');
    expect(keysOf(hits)).toEqual(['acme/shipping']);
    const none = await run({}, u1, 'keyword', 'zebra xylophone');
    expect(none.hits).toHaveLength(0);
  });

  it('filters by source type, language, date range and document ids', async () => {
    expect(keysOf((await run({ source_type: ['faq'] })).hits)).toEqual([
      'acme/refunds',
      'acme/refunds-us',
    ]);
    expect(keysOf((await run({ lang: ['de'] }, u1, 'vector')).hits)).toEqual(['acme/handbook-de']);
    expect(keysOf((await run({ date_from: '2020-01-01', date_to: '2022-01-01' })).hits)).toEqual([
      'acme/shipping',
    ]);
    // A date-only date_to includes the whole day: shipping is dated 2021-03-01T00:00Z.
    expect(keysOf((await run({ date_from: '2021-03-01', date_to: '2021-03-01' })).hits)).toEqual([
      'acme/shipping',
    ]);
    expect(keysOf((await run({ date_to: '2021-02-28' }, u1, 'vector')).hits)).not.toContain(
      'acme/shipping',
    );
    expect(keysOf((await run({ document_ids: [ids[0]!, ids[6]!] })).hits)).toEqual([
      'acme/refunds',
    ]);
  });

  const metadataCases: [string, MetadataFilter, string[]][] = [
    ['equals', { equals: { key: 'region', value: 'emea' } }, ['acme/refunds', 'acme/shipping']],
    [
      'notEquals',
      { notEquals: { key: 'region', value: 'emea' } },
      ['acme/handbook-de', 'acme/refunds-us', 'acme/users/u1/notes', 'global/terms'],
    ],
    ['in', { in: { key: 'year', value: [2019, 2023] } }, ['acme/refunds', 'acme/refunds-us']],
    [
      'notIn',
      { notIn: { key: 'year', value: [2019, 2023] } },
      ['acme/handbook-de', 'acme/shipping', 'acme/users/u1/notes', 'global/terms'],
    ],
    [
      'greaterThan',
      { greaterThan: { key: 'year', value: 2020 } },
      ['acme/refunds-us', 'acme/shipping'],
    ],
    [
      'greaterThanOrEquals',
      { greaterThanOrEquals: { key: 'year', value: 2021 } },
      ['acme/refunds-us', 'acme/shipping'],
    ],
    ['lessThan', { lessThan: { key: 'year', value: 2020 } }, ['acme/refunds']],
    [
      'lessThanOrEquals',
      { lessThanOrEquals: { key: 'year', value: 2020 } },
      ['acme/handbook-de', 'acme/refunds'],
    ],
    [
      'startsWith',
      { startsWith: { key: 'team', value: 'billing' } },
      ['acme/refunds', 'acme/refunds-us'],
    ],
    ['startsWith escapes LIKE wildcards', { startsWith: { key: 'team', value: 'billing_' } }, []],
    [
      'andAll',
      {
        andAll: [
          { equals: { key: 'region', value: 'emea' } },
          { lessThan: { key: 'year', value: 2020 } },
        ],
      },
      ['acme/refunds'],
    ],
    [
      'orAll',
      {
        orAll: [
          { equals: { key: 'region', value: 'us' } },
          { equals: { key: 'year', value: 2021 } },
        ],
      },
      ['acme/refunds-us', 'acme/shipping'],
    ],
  ];
  it.each(metadataCases)('metadata filter %s', async (_name, metadata, expected) => {
    const { hits } = await run({ metadata }, u1, 'vector');
    expect(keysOf(hits)).toEqual(expected);
  });

  it('refuses org_id of another tenant with 403, and accepts the caller own', async () => {
    await expect(run({ org_id: 'globex' })).rejects.toBeInstanceOf(ForbiddenError);
    expect((await run({ org_id: 'acme' })).hits.length).toBeGreaterThan(0);
  });

  it('applies the tenant policy: allowed source types and minimum score', async () => {
    await db.query(
      `INSERT INTO tenant_policies (tenant_id, allowed_source_types) VALUES ('acme', ARRAY['doc'])`,
    );
    try {
      const { hits } = await run();
      expect(hits.every((h) => h.sourceType === 'doc')).toBe(true);
      expect(keysOf((await run({ source_type: ['faq'] })).hits)).toEqual([]);
    } finally {
      await db.query(`DELETE FROM tenant_policies WHERE tenant_id = 'acme'`);
    }
    const strict = await search.search(u1, {
      queryText: 'refunds issued',
      topK: 50,
      mode: 'hybrid',
      filters: {},
      minScore: 0.5,
    });
    expect(strict.hits.every((h) => h.score >= 0.5)).toBe(true);
  });

  it('never returns another tenant data, whatever the filters say (randomized)', async () => {
    const prng = createPrng(42);
    const rng = () => prng.next();
    const tenants = ['t1', 't2', 't3', 't4'];
    const words = [
      'alpha',
      'beta',
      'gamma',
      'delta',
      'refund',
      'policy',
      'secret',
      'budget',
      'plan',
      'launch',
    ];
    const docs: SeedDoc[] = [];
    for (let i = 0; i < 60; i++) {
      const tenantId = tenants[i % tenants.length]!;
      const vis = rng() < 0.2 ? 'user' : 'tenant';
      docs.push({
        tenantId,
        key: `${tenantId}/doc-${i}`,
        texts: [Array.from({ length: 8 }, () => words[Math.floor(rng() * words.length)]).join(' ')],
        visibility: vis,
        owner: vis === 'user' ? `user-${i % 3}` : null,
        metadata: { tenant: tenants[Math.floor(rng() * tenants.length)], n: i },
      });
    }
    const docIds = await seedDocuments(db, embedder, docs);
    const byId = new Map(docIds.map((id, i) => [id, docs[i]!]));
    for (let trial = 0; trial < 40; trial++) {
      const tenantId = tenants[Math.floor(rng() * tenants.length)]!;
      const userId = `user-${Math.floor(rng() * 3)}`;
      const other = tenants.find((t) => t !== tenantId)!;
      const otherIds = docIds.filter((_, i) => docs[i]!.tenantId !== tenantId).slice(0, 5);
      const filters: SearchFilters[] = [
        {},
        { metadata: { equals: { key: 'tenant', value: other } } },
        { document_ids: otherIds },
        {
          metadata: {
            orAll: [
              { equals: { key: 'tenant', value: other } },
              { greaterThan: { key: 'n', value: -1 } },
            ],
          },
        },
      ];
      const f = filters[trial % filters.length]!;
      const mode = (['hybrid', 'vector', 'keyword'] as const)[trial % 3]!;
      const query = Array.from({ length: 3 }, () => words[Math.floor(rng() * words.length)]).join(
        ' ',
      );
      const { hits } = await search.search(
        { tenantId, userId },
        { queryText: query, topK: 50, mode, filters: f },
      );
      for (const h of hits) {
        const d = byId.get(h.documentId);
        if (!d) {
          // One of the shared fixture documents: only global ones may cross tenants.
          expect(h.sourceUri.startsWith('s3://bucket/global/')).toBe(true);
          continue;
        }
        expect(d.tenantId).toBe(tenantId);
        if (d.visibility === 'user') expect(d.owner).toBe(userId);
      }
    }
  });

  it('keeps BM25 statistics in step with writes and deletes', async () => {
    const stats = async () =>
      (
        await db.query<{ chunk_count: string; total_length: string }>(
          `SELECT chunk_count::text, total_length::text FROM tenant_stats WHERE tenant_id = 'stats'`,
        )
      ).rows[0];
    const df = async (term: string) =>
      (
        await db.query<{ doc_freq: number }>(
          `SELECT doc_freq FROM term_stats WHERE tenant_id = 'stats' AND term = $1`,
          [term],
        )
      ).rows[0]?.doc_freq ?? 0;
    const [id] = await seedDocuments(db, embedder, [
      { tenantId: 'stats', key: 'stats/a', texts: ['apples and pears', 'apples again'] },
    ]);
    expect(await df('appl')).toBe(2);
    const truth = await db.query<{ n: string; len: string }>(
      `SELECT count(*)::text AS n, sum(gw_tsvector_length(fts))::text AS len FROM chunks WHERE tenant_id = 'stats'`,
    );
    expect(await stats()).toEqual({ chunk_count: '2', total_length: truth.rows[0]!.len });
    expect(Number(truth.rows[0]!.len)).toBeGreaterThanOrEqual(3);
    await db.query('DELETE FROM chunks WHERE document_id = $1', [id]);
    expect(await df('appl')).toBe(0);
    expect(await stats()).toEqual({ chunk_count: '0', total_length: '0' });
  });
});
