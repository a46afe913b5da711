/**
 * The exact-scan index (exact-scan-index.ts) on both databases: built when wanted, kept, built
 * again when gone (a model switch drops it with the old column), dropped when no longer wanted;
 * a small tenant's exact scan reads its vectors from it alone and returns the same hits. On
 * PostgreSQL, the largest vectors it accepts fit a b-tree entry beside the longest tenant id, and
 * larger ones are searched without it.
 */
import type { Database } from '../../lambdas/adapters/postgres/database';
import {
  EXACT_SCAN_INDEX,
  exactScanVectorFits,
  reconcileExactScanIndex,
} from '../../lambdas/adapters/postgres/exact-scan-index';
import { searchTransactionSettings } from '../../lambdas/adapters/postgres/search-plan';
import { createSearchRepository } from '../../lambdas/adapters/postgres/search-repository';
import { buildSearchSql } from '../../lambdas/adapters/postgres/search-statement';
import type { SearchQuery } from '../../lambdas/core/retrieval/types';
import { ENGINES, openTestDatabase } from '../support/databases';
import { runExplained } from '../support/plan';
import { seedWideChunks } from '../support/seed';

const SMALL = 'small';
const scope = { tenantId: SMALL, userId: 'u1', globalTenants: [] };

const query = (mode: SearchQuery['mode']): SearchQuery => ({
  text: 'refund policy',
  embedding: Array.from({ length: 512 }, (_, i) => Math.cos(i * 0.29)),
  topK: 10,
  mode,
  filters: {},
  minScore: 0,
  maxChunksPerSource: 10,
  allowedSourceTypes: null,
  fusion: { denseWeight: 0.5, candidates: 50 },
});

describe.each(ENGINES)('the exact-scan index on %s', (engine) => {
  let db: Database;

  const exists = async (): Promise<boolean> =>
    (
      await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_class
          WHERE relname = $1 AND relnamespace = current_schema()::regnamespace`,
        [EXACT_SCAN_INDEX],
      )
    ).rows[0]!.n === 1;

  /** The small tenant's search by exact scan: its hits and the plan nodes that read an index. */
  async function search(
    mode: SearchQuery['mode'],
  ): Promise<{ ids: string[]; scans: { type: string; index: string }[] }> {
    const { statistics } = await createSearchRepository(db).prepare(scope);
    const stmt = buildSearchSql(scope, query(mode), statistics, { indexCrossover: 1e9 });
    return runExplained(db, stmt, searchTransactionSettings(50, stmt.scanChunks));
  }

  beforeAll(async () => {
    db = await openTestDatabase(engine);
    await seedWideChunks(db, 'large', 3000);
    await seedWideChunks(db, SMALL, 400);
    await db.exec('VACUUM (ANALYZE) chunks');
  }, 120_000);
  afterAll(() => db?.close());

  it('is absent until wanted', async () => {
    expect(await reconcileExactScanIndex(db, false)).toBe('absent');
    expect(await exists()).toBe(false);
  });

  it("is built when wanted, and a small tenant's exact scan reads its vectors from it alone", async () => {
    const without = await search('vector');
    expect(without.scans.map((s) => s.index)).not.toContain(EXACT_SCAN_INDEX);

    const logged: string[] = [];
    expect(await reconcileExactScanIndex(db, true, (m) => logged.push(m))).toBe('built');
    expect(logged).toEqual(['exact-scan index built']);
    expect(await exists()).toBe(true);
    // An index-only scan skips the rows of pages the visibility map marks all-visible.
    await db.exec('VACUUM (ANALYZE) chunks');

    for (const mode of ['vector', 'hybrid'] as const) {
      const served = await search(mode);
      expect(served.scans).toContainEqual({ type: 'Index Only Scan', index: EXACT_SCAN_INDEX });
      expect(served.ids).toHaveLength(10);
      if (mode === 'vector') expect(served.ids).toEqual(without.ids);
    }
    expect(await reconcileExactScanIndex(db, true)).toBe('kept');
  });

  it('is built again when it is gone, and dropped when no longer wanted', async () => {
    await db.query(`DROP INDEX ${EXACT_SCAN_INDEX}`);
    expect(await reconcileExactScanIndex(db, true)).toBe('built');
    expect(await reconcileExactScanIndex(db, false)).toBe('dropped');
    expect(await exists()).toBe(false);
    expect((await search('vector')).scans.map((s) => s.index)).not.toContain(EXACT_SCAN_INDEX);
    expect(await reconcileExactScanIndex(db, false)).toBe('absent');
  });
});

describe('the exact-scan index and large vectors on postgres', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase('postgres');
  });
  afterAll(() => db?.close());

  const largest = (type: 'vector' | 'halfvec'): number => {
    let d = 1;
    while (exactScanVectorFits(type, d + 1)) d++;
    return d;
  };

  it('is not built for vectors too large for an entry, and one built before goes', async () => {
    // A fresh index of 1,536-dimension vectors (no chunk yet, so the column may change).
    await db.exec('ALTER TABLE chunks ALTER COLUMN embedding TYPE halfvec(1536)');
    await db.exec(`CREATE INDEX ${EXACT_SCAN_INDEX} ON chunks (tenant_id) INCLUDE (id)`);
    const logged: Record<string, unknown>[] = [];
    expect(await reconcileExactScanIndex(db, true, (_, fields) => logged.push(fields))).toBe(
      'too large',
    );
    expect(logged).toEqual([{ type: 'halfvec', dimension: 1536, maxBytes: 2544 }]);
    const { rows } = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_class
        WHERE relname = $1 AND relnamespace = current_schema()::regnamespace`,
      [EXACT_SCAN_INDEX],
    );
    expect(rows[0]!.n).toBe(0);
  });

  it('holds the largest vectors it accepts beside a tenant id of 64 characters', async () => {
    const halfvec = largest('halfvec');
    const vector = largest('vector');
    // Titan Text Embeddings v2 and Cohere Embed v3 (1,024) fit as halfvec; 1,536 does not.
    expect(halfvec).toBeGreaterThanOrEqual(1024);
    expect(exactScanVectorFits('halfvec', 1536)).toBe(false);
    await db.transaction(async (tx) => {
      await tx.exec(`CREATE TEMP TABLE entry (tenant_id text, document_id uuid, id uuid,
                       h halfvec(${halfvec}), v vector(${vector}))`);
      await tx.exec('CREATE INDEX ON entry (tenant_id, document_id) INCLUDE (id, h)');
      await tx.exec('CREATE INDEX ON entry (tenant_id, document_id) INCLUDE (id, v)');
      await tx.query(
        `INSERT INTO entry SELECT repeat('t', 64), gen_random_uuid(), gen_random_uuid(),
                array_fill(0.5::real, ARRAY[$1::int])::halfvec,
                array_fill(0.5::real, ARRAY[$2::int])::vector`,
        [halfvec, vector],
      );
    });
  });
});
