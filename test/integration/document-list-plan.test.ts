/**
 * A page of GET /api/documents reads the caller's tenant through the (tenant_id, source_uri)
 * index, in order, however many documents the tenant holds: the visibility rule's branches are
 * paged one by one and merged (docs/decisions/0146-one-visibility-rule.md). The OR of the rule in
 * one WHERE clause reads and sorts the whole tenant for every page, which this test tells apart.
 */
import type { Database } from '../../lambdas/adapters/postgres/database';
import { createDocumentCatalog } from '../../lambdas/adapters/postgres/document-queries';
import { ENGINES, openTestDatabase } from '../support/databases';

describe.each(ENGINES)('a page of the documents list on %s', (engine) => {
  let db: Database;

  beforeAll(async () => {
    db = await openTestDatabase(engine);
    await db.query(
      `INSERT INTO documents (tenant_id, source_uri, visibility, status)
       SELECT 'big', 's3://bucket/tenants/big/' || lpad(g::text, 6, '0'), 'tenant', 'indexed'
         FROM generate_series(1, 20000) g`,
    );
    await db.query(
      `INSERT INTO documents (tenant_id, source_uri, visibility, status)
       SELECT 'global', 's3://bucket/tenants/global/' || g, 'global', 'indexed'
         FROM generate_series(1, 20) g`,
    );
    await db.exec('ANALYZE documents');
  });
  afterAll(() => db?.close());

  it('reads the tenant through its index in order, with no scan or sort of the tenant', async () => {
    const plans: string[] = [];
    const explaining: Database = {
      ...db,
      query: async (text: string, values?: unknown[]) => {
        const plan = await db.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${text}`, values);
        plans.push(plan.rows.map((r) => r['QUERY PLAN']).join('\n'));
        return db.query(text, values);
      },
    };
    const page = await createDocumentCatalog(explaining).list(
      { tenantId: 'big', userId: 'u1', globalTenants: ['global'] },
      { after: 's3://bucket/tenants/big/010000', limit: 20 },
    );
    expect(page.map((d) => d.sourceUri)).toEqual(
      Array.from(
        { length: 20 },
        (_, i) => `s3://bucket/tenants/big/${String(10_001 + i).padStart(6, '0')}`,
      ),
    );
    expect(plans).toHaveLength(1);
    const plan = plans[0]!;
    expect(plan).toMatch(/Index (Only )?Scan using documents_tenant_source_uri_key/);
    expect(plan).not.toMatch(/Seq Scan on documents/);
  });
});
