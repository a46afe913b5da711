/**
 * Each chunk's term counts (migrations/0011), which the keyword arm reads instead of unnesting
 * the full-text vector: one sorted entry per lexeme, found by its key with a binary search and
 * holding the lexeme's count. Checked against the vector itself on both databases, and the
 * keyword arm's BM25 and coverage against the formula computed here from the vectors; and the
 * migration fills the column for chunks written before it.
 */
import type { Database } from '../../lambdas/adapters/postgres/database';
import { loadMigrations, migrate } from '../../lambdas/adapters/postgres/migrate';
import { createSearchRepository } from '../../lambdas/adapters/postgres/search-repository';
import { createSearch } from '../../lambdas/core/retrieval/search';
import { ENGINES, openTestDatabase, seededTestDatabase } from '../support/databases';
import { createHashEmbedder } from '../support/hash-embedder';
import { seedDocuments, type SeedDoc } from '../support/seed';

const embedder = createHashEmbedder();
const TENANT = 'counts';

const DOCS: SeedDoc[] = [
  {
    tenantId: TENANT,
    key: 'counts/echo',
    // 300 occurrences: a tsvector keeps 255 positions of a lexeme, and the count is theirs.
    texts: [`${'echo '.repeat(300)}and one canyon.`],
  },
  {
    tenantId: TENANT,
    key: 'counts/canyon',
    texts: ['The canyon echoes: canyon walls, canyon floor, a river in the canyon.'],
  },
  {
    tenantId: TENANT,
    key: 'counts/river',
    texts: [
      'A river runs through the valley; the river bends twice before the falls.',
      'Walls of granite rise above the valley floor, and nothing echoes there.',
    ],
  },
  { tenantId: TENANT, key: 'counts/short', texts: ['Granite.'] },
  { tenantId: 'other', key: 'other/echo', texts: ['Echo echo canyon river granite valley.'] },
];

/** Each chunk's lexemes and their counts, from the full-text vector itself. */
async function countsFromVectors(db: Database, tenantId: string) {
  const { rows } = await db.query<{ id: string; lexeme: string; tf: number; length: number }>(
    `SELECT c.id, u.lexeme, coalesce(array_length(u.positions, 1), 1) AS tf, c.fts_length AS length
       FROM chunks c, unnest(c.fts) u WHERE c.tenant_id = $1`,
    [tenantId],
  );
  const chunks = new Map<string, { length: number; tf: Map<string, number> }>();
  for (const r of rows) {
    const chunk = chunks.get(r.id) ?? { length: r.length, tf: new Map<string, number>() };
    chunk.tf.set(r.lexeme, r.tf);
    chunks.set(r.id, chunk);
  }
  return chunks;
}

describe.each(ENGINES)('term counts on %s', (engine) => {
  const db = seededTestDatabase(engine, DOCS, embedder);

  it('holds every lexeme of the vector, sorted, each found by its key with its count', async () => {
    const { rows } = await db().query<{
      lexemes: number;
      entries: number;
      sorted: boolean;
      wrong: number;
      capped: number | null;
    }>(
      `SELECT length(c.fts) AS lexemes, cardinality(c.term_counts) AS entries,
              c.term_counts = ARRAY(SELECT e FROM unnest(c.term_counts) e ORDER BY e) AS sorted,
              (SELECT count(*) FROM unnest(c.fts) u
                WHERE c.term_counts[width_bucket(gw_term_key(u.lexeme) + 255, c.term_counts)]
                      IS DISTINCT FROM gw_term_key(u.lexeme) | (array_length(u.positions, 1) - 1))::int AS wrong,
              (SELECT array_length(u.positions, 1) FROM unnest(c.fts) u WHERE u.lexeme = 'echo') AS capped
         FROM chunks c WHERE c.tenant_id = $1`,
      [TENANT],
    );
    expect(rows).toHaveLength(5);
    for (const r of rows) {
      expect(r.entries).toBe(r.lexemes);
      expect(r.sorted).toBe(true);
      expect(r.wrong).toBe(0);
    }
    expect(rows.map((r) => r.capped)).toContain(255);
  });

  it('finds no entry for a lexeme the chunk does not hold', async () => {
    // Every lexeme of the corpus against every chunk that lacks it.
    const { rows } = await db().query<{ probes: number; found: number }>(
      `SELECT count(*)::int AS probes,
              count(*) FILTER (WHERE c.term_counts[width_bucket(gw_term_key(l.lexeme) + 255, c.term_counts)] >> 8
                               = gw_term_key(l.lexeme) >> 8)::int AS found
         FROM chunks c
         CROSS JOIN (SELECT DISTINCT u.lexeme FROM chunks, unnest(fts) u) l
        WHERE NOT c.fts @@ l.lexeme::tsquery`,
    );
    expect(rows[0]!.probes).toBeGreaterThan(50);
    expect(rows[0]!.found).toBe(0);
  });

  it('follows a change of the full-text vector', async () => {
    const { rows } = await db().query<{ before: string[]; after: string[]; expected: string }>(
      `WITH target AS (SELECT id, term_counts FROM chunks WHERE tenant_id = 'other' LIMIT 1),
            changed AS (
              UPDATE chunks c SET fts = to_tsvector('english', 'zephyr zephyr zephyr')
                FROM target t WHERE c.id = t.id RETURNING c.term_counts)
       SELECT (SELECT term_counts::text[] FROM target) AS before,
              (SELECT term_counts::text[] FROM changed) AS after,
              (SELECT (gw_term_key('zephyr') | 2)::text) AS expected`,
    );
    expect(rows[0]!.after).not.toEqual(rows[0]!.before);
    expect(rows[0]!.after).toEqual([rows[0]!.expected]);
  });

  it("scores keyword hits with BM25 and coverage computed from the chunks' vectors", async () => {
    const question = 'echo in the canyon by the river granite';
    const search = createSearch({ store: createSearchRepository(db()), embedder });
    const { hits } = await search.search(
      { tenantId: TENANT, userId: 'u1' },
      { queryText: question, topK: 10, mode: 'keyword', filters: {} },
    );

    const chunks = await countsFromVectors(db(), TENANT);
    const terms = (
      await db().query<{ lexeme: string }>(
        `SELECT DISTINCT lexeme FROM unnest(to_tsvector('english', $1::text))`,
        [question],
      )
    ).rows.map((r) => r.lexeme);
    const n = chunks.size;
    const avgdl = [...chunks.values()].reduce((a, c) => a + c.length, 0) / n;
    const idf = new Map(
      terms.map((t) => {
        const df = [...chunks.values()].filter((c) => c.tf.has(t)).length;
        return [t, Math.log(1 + (n - df + 0.5) / (df + 0.5))];
      }),
    );
    const totalIdf = [...idf.values()].reduce((a, b) => a + b, 0);
    const expected = new Map(
      [...chunks].map(([id, c]) => {
        let bm25 = 0;
        let matched = 0;
        for (const t of terms) {
          const tf = c.tf.get(t);
          if (tf === undefined) continue;
          const w = idf.get(t)!;
          bm25 += (w * tf * 2.2) / (tf + 1.2 * (0.25 + (0.75 * c.length) / avgdl));
          matched += w;
        }
        return [id, { bm25, coverage: matched / totalIdf }];
      }),
    );

    expect(hits.length).toBe([...expected.values()].filter((e) => e.bm25 > 0).length);
    for (const h of hits) {
      expect(h.keywordScore).toBeCloseTo(expected.get(h.chunkId)!.bm25, 9);
      expect(h.keywordCoverage).toBeCloseTo(expected.get(h.chunkId)!.coverage, 9);
    }
    const ranked = [...expected].sort((a, b) => b[1].bm25 - a[1].bm25).map(([id]) => id);
    expect(hits.map((h) => h.chunkId)).toEqual(ranked.slice(0, hits.length));
  });
});

describe.each(ENGINES)('migrations/0011 on %s', (engine) => {
  it('fills the counts of chunks written before it, and search reads them', async () => {
    const db = await openTestDatabase(engine, { migrate: false });
    try {
      // Every other migration first: the repository that seeds writes columns of later ones.
      const before = (await loadMigrations()).filter((m) => m.version !== '0011');
      await migrate(db, before, []);
      await seedDocuments(db, embedder, DOCS);
      expect((await migrate(db)).applied).toEqual(['0011']);

      const { rows } = await db.query<{ chunks: number; filled: number }>(
        `SELECT count(*)::int AS chunks,
                count(*) FILTER (WHERE cardinality(term_counts) = length(fts)
                                   AND term_counts = gw_term_counts(fts))::int AS filled
           FROM chunks`,
      );
      expect(rows[0]).toEqual({ chunks: 6, filled: 6 });
      const search = createSearch({ store: createSearchRepository(db), embedder });
      const { hits } = await search.search(
        { tenantId: TENANT, userId: 'u1' },
        { queryText: 'canyon echo', topK: 3, mode: 'keyword', filters: {} },
      );
      expect(hits.map((h) => h.sourceUri)).toEqual([
        expect.stringContaining('counts/canyon'),
        expect.stringContaining('counts/echo'),
        expect.stringContaining('counts/river'),
      ]);
    } finally {
      await db.close();
    }
  });
});
