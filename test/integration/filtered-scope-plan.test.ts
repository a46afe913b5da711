/**
 * A filtered search sizes its scope from the documents matching its filters (`fdocs`,
 * search-statement.ts), read through the documents' metadata index on both databases, however
 * large a share of the tenant they are and wherever they lie in the table. Documents whose
 * metadata changed lately sit together at the end of the table; a sequential scan that stops at
 * the cap read every other document first (docs/decisions/0165-filtered-scope-read-through-the-index.md).
 */
import type { Database } from '../../lambdas/adapters/postgres/database';
import {
  DEFAULT_SEARCH_SQL,
  searchTransactionSettings,
} from '../../lambdas/adapters/postgres/search-plan';
import { createSearchRepository } from '../../lambdas/adapters/postgres/search-repository';
import { buildSearchSql } from '../../lambdas/adapters/postgres/search-statement';
import type { SearchQuery } from '../../lambdas/core/retrieval/types';
import { ENGINES, openTestDatabase } from '../support/databases';
import { explained, walk, type ExplainRow, type PlanNode } from '../support/plan';

const DOCUMENTS = 20_000;
const TENANT = 'wide';
/** Percentages of the tenant's documents, each marked in turn. */
const SHARES = [90, 50, 20];

const query = (percent: number): SearchQuery => ({
  text: 'refund policy',
  embedding: Array.from({ length: 512 }, (_, i) => (i === 0 ? 1 : 0)),
  topK: 5,
  mode: 'keyword',
  filters: { metadata: { equals: { key: 'share', value: percent } } },
  minScore: 0,
  maxChunksPerSource: 5,
  allowedSourceTypes: null,
  fusion: { denseWeight: 0, candidates: 50 },
});

describe.each(ENGINES)('filtered scope on %s', (engine) => {
  let db: Database;

  beforeAll(async () => {
    db = await openTestDatabase(engine);
    await db.query(
      `INSERT INTO documents (tenant_id, source_uri, status, chunk_count, metadata)
       SELECT $1, 's3://bucket/' || i || '.md', 'indexed', 5, jsonb_build_object('n', i)
         FROM generate_series(1, $2::int) i`,
      [TENANT, DOCUMENTS],
    );
    // Shares of the tenant's documents, each marked by an update, as a team's retagging is: the
    // marked rows' new versions sit at the end of the table, after every unmarked one.
    for (const percent of SHARES)
      await db.query(
        `UPDATE documents SET metadata = metadata || jsonb_build_object('share', $1::int)
          WHERE tenant_id = $2 AND (metadata->>'n')::int % 100 < $1`,
        [percent, TENANT],
      );
    await db.exec('VACUUM ANALYZE documents');
  }, 120_000);
  afterAll(() => db?.close());

  /** The executed plan of the `fdocs` CTE, with the settings the search repository uses. */
  async function matchingDocumentsPlan(percent: number): Promise<PlanNode> {
    const scope = { tenantId: TENANT, userId: 'u1', globalTenants: [] };
    const { statistics } = await createSearchRepository(db).prepare(scope);
    const stmt = buildSearchSql(scope, query(percent), statistics);
    const { rows } = await db.transaction(
      (tx) =>
        tx.query<ExplainRow<{ Plan: PlanNode }>>(
          `EXPLAIN (ANALYZE, FORMAT JSON) ${stmt.text}`,
          stmt.values,
        ),
      searchTransactionSettings(50, statistics.tableChunks),
    );
    const plan = explained(rows).Plan;
    const fdocs = [...walk(plan)].find((n) => n['Subplan Name'] === 'CTE fdocs');
    expect(fdocs).toBeDefined();
    return fdocs!;
  }

  it.each(SHARES)(
    'reads the documents matching a filter (%i %% of the tenant, updated last) through the metadata index',
    async (percent) => {
      const fdocs = await matchingDocumentsPlan(percent);
      const nodes = [...walk(fdocs)];
      expect(nodes.some((n) => n['Index Name'] === 'documents_metadata_idx')).toBe(true);
      expect(nodes.some((n) => n['Node Type'] === 'Seq Scan')).toBe(false);
      // Read as far as sizing goes (the cap and one more), no other document read on the way.
      expect(fdocs['Actual Rows']).toBe(DEFAULT_SEARCH_SQL.filteredDocumentsCap + 1);
      const removed = nodes.reduce((sum, n) => sum + (n['Rows Removed by Filter'] ?? 0), 0);
      expect(removed).toBe(0);
    },
  );
});
