/**
 * One configured set of publishing tenants (docs/decisions/0146-one-visibility-rule.md), through
 * the embedded default's composition: `publishingTenants` reaches ingestion (whose sidecar may say
 * `global`), the documents API (who may publish, whose documents others read) and search alike.
 * The set here is not the default, so a component left on `DEFAULT_PUBLISHING_TENANTS` fails.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { Database } from '../../lambdas/adapters/postgres/database';
import type { Caller } from '../../lambdas/core/documents/documents';
import { errorCode } from '../../lambdas/core/errors';
import { startLocalStack, type LocalStack } from '../../local/stack';
import { ENGINES, openTestDatabase } from '../support/databases';
import { createHashEmbedder } from '../support/hash-embedder';

const editor: Caller = { tenantId: 'pub', userId: 'editor', isAdmin: true };
/** An admin of the tenant the default set names, which this configuration does not. */
const formerPublisher: Caller = { tenantId: 'global', userId: 'root', isAdmin: true };
const reader: Caller = { tenantId: 'acme', userId: 'a1', isAdmin: false };

describe.each(ENGINES)('the configured publishing tenants on %s', (engine) => {
  let db: Database;
  let stack: LocalStack;

  beforeAll(async () => {
    db = await openTestDatabase(engine);
    stack = await startLocalStack({
      db,
      embedder: createHashEmbedder(),
      logLevel: 'SILENT',
      publishingTenants: ['pub'],
    });
  });
  afterAll(async () => {
    await stack?.stop();
    await db?.close();
  });

  const upload = (caller: Caller, text: string) =>
    stack.documents.storeUpload(
      caller,
      { filename: 'handbook.md', contentType: 'text/markdown', visibility: 'global' },
      new TextEncoder().encode(text),
    );
  const put = (key: string, body: string) =>
    stack.s3.client.send(new PutObjectCommand({ Bucket: stack.s3.bucket, Key: key, Body: body }));

  it('lets only the configured tenant publish, and every tenant read what it publishes', async () => {
    expect(await upload(formerPublisher, 'Not published.').catch(errorCode)).toBe('forbidden');
    const { documentId } = await upload(editor, '# Handbook\n\nThe okapi rota covers weekends.');
    await stack.queue.idle();
    expect(await stack.documents.get(editor, documentId)).toMatchObject({ status: 'indexed' });

    expect(await stack.documents.get(reader, documentId)).toMatchObject({ visibility: 'global' });
    const listed = await stack.documents.list(reader, { limit: 100 });
    expect(listed.map((d) => d.id)).toContain(documentId);
    const { hits } = await stack.search.search(reader, {
      queryText: 'okapi rota',
      topK: 5,
      mode: 'hybrid',
      filters: {},
    });
    expect(hits.map((h) => h.documentId)).toContain(documentId);
  });

  it("fails a `global` sidecar of a tenant the configuration leaves out, and publishes the configured one's", async () => {
    const sidecar = JSON.stringify({ metadataAttributes: { visibility: 'global' } });
    for (const tenant of ['global', 'pub']) {
      await put(`tenants/${tenant}/terms.md.metadata.json`, sidecar);
      await put(`tenants/${tenant}/terms.md`, '# Terms\n\nThe tapir clause applies.');
    }
    await stack.queue.idle();
    const { rows } = await db.query<{ tenant_id: string; status: string; reason: string | null }>(
      `SELECT tenant_id, status, failure_reason AS reason FROM documents
        WHERE source_uri LIKE '%/terms.md' ORDER BY tenant_id`,
    );
    expect(rows).toEqual([
      { tenant_id: 'global', status: 'failed', reason: expect.stringMatching(/may not publish/) },
      { tenant_id: 'pub', status: 'indexed', reason: null },
    ]);
  });
});
