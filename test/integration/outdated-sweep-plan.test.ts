/**
 * The outdated sweep (gw_outdated_documents, migrations 0022, 0023) runs every few minutes and
 * almost always finds nothing: it must answer that from the partial index of migrations/0025,
 * not by reading every document of every tenant, and still return the outdated ones, oldest
 * first, when there are some.
 */
import type { Database } from '../../lambdas/adapters/postgres/database';
import { ENGINES, openTestDatabase } from '../support/databases';

const CURRENT = 7;

describe.each(ENGINES)('the outdated sweep on %s', (engine) => {
  let db: Database;

  beforeAll(async () => {
    db = await openTestDatabase(engine);
    await db.query(
      `INSERT INTO documents (tenant_id, source_uri, status, ingestion_version, updated_at)
       SELECT 't' || (g % 7), 's3://bucket/' || g || '.md', 'indexed', $1, now() - g * interval '1 second'
         FROM generate_series(1, 20000) g`,
      [CURRENT],
    );
    await db.exec('VACUUM ANALYZE documents');
  }, 120_000);
  afterAll(() => db?.close());

  /**
   * The sweep's rows, and the scans of `documents` it made: this backend's counters read before and
   * after it in one transaction (they may still hold earlier transactions' scans, not yet flushed).
   */
  async function sweep(): Promise<{ uris: string[]; seqScans: number; indexScans: number }> {
    return db.transaction(async (tx) => {
      const scans = async () => {
        const { rows } = await tx.query<{ seq: string; idx: string }>(
          `SELECT coalesce(seq_scan, 0)::text AS seq, coalesce(idx_scan, 0)::text AS idx
             FROM pg_stat_xact_user_tables WHERE relid = 'documents'::regclass`,
        );
        return { seq: Number(rows[0]?.seq ?? 0), idx: Number(rows[0]?.idx ?? 0) };
      };
      const before = await scans();
      const { rows } = await tx.query<{ source_uri: string }>(
        'SELECT source_uri FROM gw_outdated_documents($1, 3, 10)',
        [CURRENT],
      );
      const after = await scans();
      return {
        uris: rows.map((r) => r.source_uri),
        seqScans: after.seq - before.seq,
        indexScans: after.idx - before.idx,
      };
    });
  }

  it('finds nothing outdated through the index, without reading every document', async () => {
    const { uris, seqScans, indexScans } = await sweep();
    expect(uris).toEqual([]);
    expect(seqScans).toBe(0);
    expect(indexScans).toBeGreaterThan(0);
  });

  it('returns the outdated documents oldest first, leaving those that failed too often', async () => {
    await db.query(
      `UPDATE documents SET ingestion_version = $1 - 1,
              lease_expiries = CASE WHEN source_uri = 's3://bucket/30.md' THEN 3 ELSE 0 END
        WHERE source_uri IN ('s3://bucket/10.md', 's3://bucket/20.md', 's3://bucket/30.md')`,
      [CURRENT],
    );
    // A document still being indexed is not the sweep's to take.
    await db.query(
      `UPDATE documents SET ingestion_version = 0, status = 'processing' WHERE source_uri = 's3://bucket/40.md'`,
    );
    const { uris } = await sweep();
    // 20.md was updated 20 s ago, 10.md 10 s ago.
    expect(uris).toEqual(['s3://bucket/20.md', 's3://bucket/10.md']);
  });
});
