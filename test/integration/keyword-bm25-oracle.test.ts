/**
 * The keyword arm against a plain BM25 reference, on both databases: fast-check generates small
 * corpora (one chunk per document) over a vocabulary that the `english` configuration keeps as it
 * is, plus a stop word, and questions over the same vocabulary; each corpus goes into a tenant of
 * its own and a keyword search runs through the repository.
 *
 * What must agree, within a relative 1e-9: the hits are the reference's top k by score, in order,
 * up to ties (the i-th hit's BM25 is the reference's i-th best score, and the hit's own reference
 * score); each hit's BM25 and keyword coverage are the reference's for its chunk; and no chunk
 * without a lexeme of the question is a hit. The budget (1,000) exceeds any corpus here, so the
 * arm scores every matching chunk.
 */
import fc from 'fast-check';
import type { Database } from '../../lambdas/adapters/postgres/database';
import { createSearchRepository } from '../../lambdas/adapters/postgres/search-repository';
import type { SearchQuery, SearchScope } from '../../lambdas/core/retrieval/types';
import { ENGINES, openTestDatabase } from '../support/databases';
import { createHashEmbedder } from '../support/hash-embedder';
import { seedDocuments } from '../support/seed';

const embedder = createHashEmbedder();

/** Words `to_tsvector('english', ..)` keeps unchanged (checked below), and a stop word it drops. */
const WORDS = ['zorb', 'klat', 'vemp', 'drak', 'quib', 'flon', 'brix', 'gramp'];
const STOP_WORD = 'the';

/** BM25 as the keyword arm computes it: Robertson's idf with the +1 inside the log (Lucene's). */
const K1 = 1.2;
const B = 0.75;

interface Reference {
  readonly score: number;
  readonly coverage: number;
}

/**
 * Plain BM25 over a corpus of token lists: a document's length is its count of lexemes (stop words
 * are not lexemes), the average over the corpus; df the documents holding a lexeme; idf
 * ln(1 + (N - df + 0.5) / (df + 0.5)); a document scores Σ idf·tf·(k1 + 1) / (tf + k1·(1 − b +
 * b·dl / avgdl)) over the question's distinct lexemes it holds, and its coverage is the idf it
 * holds over the question's whole idf. Documents holding none of them are left out.
 */
function bm25(corpus: readonly string[][], question: readonly string[]): Map<number, Reference> {
  const docs = corpus.map((tokens) => tokens.filter((t) => t !== STOP_WORD));
  const n = docs.length;
  const avgdl = docs.reduce((sum, d) => sum + d.length, 0) / n;
  const terms = [...new Set(question.filter((t) => t !== STOP_WORD))];
  const idf = new Map(
    terms.map((t) => {
      const df = docs.filter((d) => d.includes(t)).length;
      return [t, Math.log(1 + (n - df + 0.5) / (df + 0.5))];
    }),
  );
  const totalIdf = terms.reduce((sum, t) => sum + idf.get(t)!, 0);
  const scores = new Map<number, Reference>();
  docs.forEach((d, i) => {
    let score = 0;
    let held = 0;
    for (const t of terms) {
      const tf = d.filter((w) => w === t).length;
      if (tf === 0) continue;
      score += (idf.get(t)! * (tf * (K1 + 1))) / (tf + K1 * (1 - B + (B * d.length) / avgdl));
      held += idf.get(t)!;
    }
    if (held > 0) scores.set(i, { score, coverage: totalIdf > 0 ? held / totalIdf : 0 });
  });
  return scores;
}

const close = (actual: number, expected: number) =>
  Math.abs(actual - expected) <= 1e-9 * Math.max(1, Math.abs(expected));

const word = fc.constantFrom(...WORDS, STOP_WORD);
/**
 * Documents of 1 to 14 words and questions of 1 to 4, each with at least one lexeme; k from 1 to
 * 6.
 */
const cases = fc.record({
  corpus: fc.array(
    fc.array(word, { minLength: 1, maxLength: 14 }).filter((d) => d.some((w) => w !== STOP_WORD)),
    { minLength: 1, maxLength: 10 },
  ),
  question: fc
    .array(word, { minLength: 1, maxLength: 4 })
    .filter((q) => q.some((w) => w !== STOP_WORD)),
  topK: fc.integer({ min: 1, max: 6 }),
});

/** Corpora per database (about 10 s on PGlite, less on PostgreSQL); more with BM25_ORACLE_RUNS. */
const RUNS = Number(process.env.BM25_ORACLE_RUNS ?? 40);

describe.each(ENGINES)('the keyword arm against a BM25 reference on %s', (engine) => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase(engine);
  });
  afterAll(async () => {
    await db?.close();
  });

  it('keeps the vocabulary as lexemes, the stop word out', async () => {
    const { rows } = await db.query<{ lexemes: string[] }>(
      `SELECT array_agg(lexeme ORDER BY lexeme) AS lexemes
         FROM unnest(to_tsvector('english', $1::text))`,
      [[...WORDS, STOP_WORD].join(' ')],
    );
    expect(rows[0]!.lexemes).toEqual([...WORDS].sort());
  });

  it('ranks as the reference does', async () => {
    const store = createSearchRepository(db);
    let run = 0;
    await fc.assert(
      fc.asyncProperty(cases, async ({ corpus, question, topK }) => {
        run += 1;
        const tenantId = `bm25-${run}`;
        const ids = await seedDocuments(
          db,
          embedder,
          corpus.map((tokens, i) => ({
            tenantId,
            key: `${tenantId}/doc-${i}`,
            // A chunk's full-text vector holds its document's title too: none here.
            title: '',
            texts: [tokens.join(' ')],
          })),
        );
        const scope: SearchScope = { tenantId, userId: 'u1', globalTenants: [] };
        const text = question.join(' ');
        const query: SearchQuery = {
          text,
          embedding: (await embedder.embed([text]))[0]!,
          topK,
          mode: 'keyword',
          filters: {},
          minScore: 0,
          maxChunksPerSource: 1,
          allowedSourceTypes: null,
          fusion: { denseWeight: 0, candidates: 50 },
        };
        const { statistics } = await store.prepare(scope);
        const hits = await store.search(scope, query, statistics);

        const reference = bm25(corpus, question);
        const best = [...reference.values()].map((r) => r.score).sort((a, b) => b - a);
        expect(hits).toHaveLength(Math.min(topK, best.length));
        hits.forEach((hit, i) => {
          const expected = reference.get(ids.indexOf(hit.documentId));
          expect(expected).toBeDefined();
          expect(close(hit.keywordScore, expected!.score)).toBe(true);
          expect(close(hit.keywordScore, best[i]!)).toBe(true);
          expect(close(hit.keywordCoverage, expected!.coverage)).toBe(true);
        });
      }),
      { numRuns: RUNS },
    );
  });
});
