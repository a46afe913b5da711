/**
 * The visibility rule (docs/decisions/0146-one-visibility-rule.md) through every reader, on both
 * databases: search (every arm, with and without filters), get, list and passages of the
 * documents API, its passage read on its own, and the admin statistics. Documents of every
 * visibility, status and kind of tenant (a publishing one, two that are not) are read by callers
 * of several kinds; each reader must return exactly the rule's set. Each reader runs in the
 * caller's request scope, as the API runs it (row-level security on), and as the owner outside
 * any scope (row-level security off), so the rule holds by itself, not by the policies around it.
 */
import { APP_GROUP_ROLE, ensureRequestRole } from '../../lambdas/adapters/postgres/app-role';
import { createAdminStore } from '../../lambdas/adapters/postgres/admin-queries';
import type { Database } from '../../lambdas/adapters/postgres/database';
import { runInDbScope } from '../../lambdas/adapters/postgres/db-scope';
import { createDocumentCatalog } from '../../lambdas/adapters/postgres/document-queries';
import { createSearchRepository } from '../../lambdas/adapters/postgres/search-repository';
import {
  createDocuments,
  type Caller,
  type UploadBucket,
} from '../../lambdas/core/documents/documents';
import type { DocumentStatus, Visibility } from '../../lambdas/core/ingestion/document-store';
import type { SearchFilters } from '../../lambdas/core/retrieval/filters';
import { createSearch } from '../../lambdas/core/retrieval/search';
import { ENGINES, openTestDatabase } from '../support/databases';
import { createHashEmbedder } from '../support/hash-embedder';
import { seedDocuments } from '../support/seed';

const embedder = createHashEmbedder();
/** Not the default (`global`): the readers must take the configured set. */
const PUBLISHERS = ['pub'];

interface Doc {
  readonly key: string;
  readonly tenantId: string;
  readonly visibility: Visibility;
  readonly owner?: string;
  readonly status: DocumentStatus;
}

/**
 * Every visibility in every kind of tenant, in the statuses that matter. Each keeps its one chunk
 * whatever its status, so only the rule, never a missing chunk, can hide it.
 */
const DOCS: readonly Doc[] = [
  { key: 'acme/tenant', tenantId: 'acme', visibility: 'tenant', status: 'indexed' },
  { key: 'acme/tenant-failed', tenantId: 'acme', visibility: 'tenant', status: 'failed' },
  { key: 'acme/a1', tenantId: 'acme', visibility: 'user', owner: 'a1', status: 'indexed' },
  { key: 'acme/a1-failed', tenantId: 'acme', visibility: 'user', owner: 'a1', status: 'failed' },
  { key: 'acme/a2', tenantId: 'acme', visibility: 'user', owner: 'a2', status: 'indexed' },
  // `global` in a tenant that does not publish: its own tenant's, nobody else's.
  { key: 'acme/global', tenantId: 'acme', visibility: 'global', status: 'indexed' },
  { key: 'beta/tenant', tenantId: 'beta', visibility: 'tenant', status: 'indexed' },
  { key: 'beta/global', tenantId: 'beta', visibility: 'global', status: 'indexed' },
  { key: 'pub/global', tenantId: 'pub', visibility: 'global', status: 'indexed' },
  { key: 'pub/global-failed', tenantId: 'pub', visibility: 'global', status: 'failed' },
  // Being indexed again: its old chunks are still there.
  { key: 'pub/global-reindexing', tenantId: 'pub', visibility: 'global', status: 'processing' },
  { key: 'pub/tenant', tenantId: 'pub', visibility: 'tenant', status: 'indexed' },
  { key: 'pub/p1', tenantId: 'pub', visibility: 'user', owner: 'p1', status: 'indexed' },
];

interface Case {
  readonly name: string;
  readonly caller: Caller;
  /** What get, list and passages show the caller: the rule's set. */
  readonly sees: readonly string[];
}

const CASES: readonly Case[] = [
  {
    name: 'a user of a tenant that does not publish',
    caller: { tenantId: 'acme', userId: 'a1', isAdmin: false },
    sees: [
      'acme/tenant',
      'acme/tenant-failed',
      'acme/a1',
      'acme/a1-failed',
      'acme/global',
      'pub/global',
    ],
  },
  {
    name: 'another user of the same tenant',
    caller: { tenantId: 'acme', userId: 'a2', isAdmin: false },
    sees: ['acme/tenant', 'acme/tenant-failed', 'acme/a2', 'acme/global', 'pub/global'],
  },
  {
    name: "that tenant's admin",
    caller: { tenantId: 'acme', userId: 'boss', isAdmin: true },
    sees: ['acme/tenant', 'acme/tenant-failed', 'acme/global', 'pub/global'],
  },
  {
    name: 'a user of another tenant',
    caller: { tenantId: 'beta', userId: 'b1', isAdmin: false },
    sees: ['beta/tenant', 'beta/global', 'pub/global'],
  },
  {
    name: 'a user of the publishing tenant',
    caller: { tenantId: 'pub', userId: 'p1', isAdmin: false },
    sees: ['pub/global', 'pub/global-failed', 'pub/global-reindexing', 'pub/tenant', 'pub/p1'],
  },
  {
    name: "the publishing tenant's admin",
    caller: { tenantId: 'pub', userId: 'editor', isAdmin: true },
    sees: ['pub/global', 'pub/global-failed', 'pub/global-reindexing', 'pub/tenant'],
  },
];

const STATUS = new Map(DOCS.map((d) => [d.key, d.status]));
/** What search finds: what the caller sees, indexed. */
const searchable = (keys: readonly string[]) => keys.filter((k) => STATUS.get(k) === 'indexed');
const sorted = (keys: Iterable<string>) => [...keys].sort();

/** Uploads are not read here: any call to the bucket fails the test. */
const noBucket: UploadBucket = {
  name: 'bucket',
  presignPut: () => Promise.reject(new Error('no upload in this test')),
  put: () => Promise.reject(new Error('no upload in this test')),
  delete: () => Promise.reject(new Error('no upload in this test')),
  touch: () => Promise.reject(new Error('no upload in this test')),
};

describe.each(ENGINES)('the visibility rule on %s', (engine) => {
  let db: Database;
  const idOf = new Map<string, string>();
  const keyOf = new Map<string, string>();

  beforeAll(async () => {
    db = await openTestDatabase(engine);
    await ensureRequestRole(db, APP_GROUP_ROLE);
    const ids = await seedDocuments(
      db,
      embedder,
      DOCS.map((d) => ({
        tenantId: d.tenantId,
        key: d.key,
        texts: [`Zebra crossings, as the ${d.key.replace(/\W/g, ' ')} notes tell.`],
        visibility: d.visibility,
        owner: d.owner ?? null,
      })),
    );
    DOCS.forEach((d, i) => {
      idOf.set(d.key, ids[i]!);
      keyOf.set(ids[i]!, d.key);
    });
    for (const d of DOCS.filter((x) => x.status !== 'indexed')) {
      await db.query('UPDATE documents SET status = $2 WHERE id = $1::uuid', [
        idOf.get(d.key),
        d.status,
      ]);
    }
  });
  afterAll(() => db?.close());

  const keysOf = (ids: Iterable<string>) => sorted([...ids].map((id) => keyOf.get(id) ?? id));

  /** Runs `read` as the API does (the caller's scope), and as the owner with no scope. */
  const both = async <T>(caller: Caller, read: () => Promise<T>): Promise<[T, T]> => [
    await runInDbScope(
      { tenantId: caller.tenantId, userId: caller.userId, allUsers: caller.isAdmin },
      read,
    ),
    await read(),
  ];

  describe.each(CASES)('for $name', ({ caller, sees }) => {
    const documents = () =>
      createDocuments({
        catalog: createDocumentCatalog(db),
        bucket: noBucket,
        settings: { globalPublishers: PUBLISHERS },
      });
    const reader = { ...caller, globalTenants: PUBLISHERS };

    it('gets exactly the documents of the rule, failed and re-indexing ones included', async () => {
      const got = async () => {
        const found: string[] = [];
        for (const d of DOCS) {
          const doc = await documents()
            .get(caller, idOf.get(d.key)!)
            .catch(() => null);
          if (doc) found.push(doc.id);
        }
        return keysOf(found);
      };
      for (const result of await both(caller, got)) expect(result).toEqual(sorted(sees));
    });

    it('lists exactly the documents of the rule, page by page', async () => {
      const listed = async () => {
        const found: string[] = [];
        let after: string | undefined;
        for (;;) {
          const page = await documents().list(caller, { limit: 2, ...(after ? { after } : {}) });
          found.push(...page.map((d) => d.id));
          if (page.length < 2) return keysOf(found);
          after = page[page.length - 1]!.sourceUri;
        }
      };
      for (const result of await both(caller, listed)) expect(result).toEqual(sorted(sees));
    });

    it('reads passages of exactly those documents, through the API and the catalog alone', async () => {
      const viaApi = async () => {
        const found: string[] = [];
        for (const d of DOCS) {
          const passage = await documents()
            .passage(caller, idOf.get(d.key)!, { start: 0, end: 1_000 })
            .catch(() => null);
          if (passage && passage.chunks.length > 0) found.push(passage.document.id);
        }
        return keysOf(found);
      };
      const viaCatalog = async () => {
        const found: string[] = [];
        for (const d of DOCS) {
          const id = idOf.get(d.key)!;
          const chunks = await createDocumentCatalog(db).passage(reader, id, 0, 1_000, 5);
          if (chunks.length > 0) found.push(id);
        }
        return keysOf(found);
      };
      for (const result of await both(caller, viaApi)) expect(result).toEqual(sorted(sees));
      for (const result of await both(caller, viaCatalog)) expect(result).toEqual(sorted(sees));
    });

    it.each<[string, 'hybrid' | 'vector' | 'keyword', SearchFilters]>([
      ['hybrid', 'hybrid', {}],
      ['vector', 'vector', {}],
      ['keyword', 'keyword', {}],
      ['hybrid with a filter', 'hybrid', { source_type: ['doc'] }],
    ])('searches (%s) exactly the indexed documents of the rule', async (_, mode, filters) => {
      const search = createSearch({
        store: createSearchRepository(db),
        embedder,
        settings: { globalTenants: PUBLISHERS },
      });
      const found = async () => {
        const { hits } = await search.search(caller, {
          queryText: 'zebra crossings notes',
          topK: 50,
          mode,
          filters,
        });
        return keysOf(new Set(hits.map((h) => h.documentId)));
      };
      for (const result of await both(caller, found))
        expect(result).toEqual(sorted(searchable(sees)));
    });
  });

  it.each([
    ['acme', { indexed: 4, failed: 2 }],
    ['pub', { indexed: 3, failed: 1, processing: 1 }],
    ['beta', { indexed: 2 }],
  ])(
    "counts in %s's statistics every document the tenant holds, and no other tenant's",
    async (tenantId, counts) => {
      const admin: Caller = { tenantId, userId: 'admin', isAdmin: true };
      const stats = () => createAdminStore(db).stats(tenantId, new Date(0));
      for (const result of await both(admin, stats)) expect(result.documents).toEqual(counts);
    },
  );
});
