/** Writes documents and chunks straight through the repository, for search tests and benchmarks. */
import type { Database } from '../../lambdas/adapters/postgres/database';
import { createDocumentRepository } from '../../lambdas/adapters/postgres/document-repository';
import type { DocumentAttributes, Visibility } from '../../lambdas/core/ingestion/document-store';
import type { Embedder } from '../../lambdas/core/ports';
import { INGESTION_VERSION } from '../../lambdas/core/ingestion/version';

export interface SeedDoc {
  tenantId: string;
  key: string;
  texts: string[];
  title?: string;
  sourceType?: string;
  language?: string;
  visibility?: Visibility;
  owner?: string | null;
  metadata?: Record<string, unknown>;
  sourceUpdatedAt?: Date;
}

/** The topics of {@link largeAndSmallTenants}' notes. */
export const NOTE_TOPICS = [
  'refund policy',
  'shipping times',
  'warranty claims',
  'invoice disputes',
];

/**
 * A vector-plan crossover for {@link largeAndSmallTenants}: with it the vector arm reads the index
 * for `large` (48² ≥ 30 × 50) and scans `small` exactly (2² < 30 × 50). The product's default
 * (300, fitted on tables of 100k to 1M chunks) scans both exactly at this size.
 */
export const FIXTURE_INDEX_CROSSOVER = 30;

/**
 * 48 one-chunk notes in tenant `large` and 2 in `small` (see {@link FIXTURE_INDEX_CROSSOVER}).
 * `metadata` gives the i-th note of `large` its metadata.
 */
export function largeAndSmallTenants(metadata?: (i: number) => Record<string, unknown>): SeedDoc[] {
  return [
    ...Array.from({ length: 48 }, (_, i): SeedDoc => ({
      tenantId: 'large',
      key: `large/doc-${i}`,
      texts: [
        `Note ${i} on ${NOTE_TOPICS[i % NOTE_TOPICS.length]}: case ${i * 7} was settled in week ${i}.`,
      ],
      ...(metadata ? { metadata: metadata(i) } : {}),
    })),
    { tenantId: 'small', key: 'small/a', texts: ['Refund policy: refunds within 14 days.'] },
    { tenantId: 'small', key: 'small/b', texts: ['Shipping times: five business days.'] },
  ];
}

/** Indexes the documents; returns their ids in order. */
export async function seedDocuments(
  db: Database,
  embedder: Embedder,
  docs: SeedDoc[],
): Promise<string[]> {
  const repo = createDocumentRepository(db);
  const ids: string[] = [];
  for (const d of docs) {
    const attrs: DocumentAttributes = {
      tenantId: d.tenantId,
      sourceUri: `s3://bucket/${d.key}`,
      title: d.title ?? d.key,
      sourceType: d.sourceType ?? 'doc',
      language: d.language ?? 'en',
      ownerUserId: d.owner ?? null,
      visibility: d.visibility ?? 'tenant',
      metadata: d.metadata ?? {},
      sourceUpdatedAt: d.sourceUpdatedAt ?? new Date('2024-01-01T00:00:00Z'),
    };
    const vectors = await embedder.embed(d.texts);
    let offset = 0;
    const chunks = d.texts.map((text, index) => {
      const start = offset;
      offset += text.length + 1;
      return {
        index,
        text,
        start,
        end: start + text.length,
        tokenCount: text.split(/\s+/).length,
        embedding: vectors[index] ?? [],
        metadata: {},
      };
    });
    const { documentId } = await repo.replaceChunks(
      attrs,
      {
        contentHash: d.key,
        attributesHash: d.key,
        embeddingModel: embedder.modelId,
        ingestionVersion: INGESTION_VERSION,
      },
      chunks,
    );
    ids.push(documentId);
  }
  return ids;
}

/**
 * Writes `count` chunks of `tenantId` (10 per document, visibility `tenant`) straight in SQL, of
 * about the width real chunks have (a 2 KB text and its full-text vector, a 512-dimension
 * embedding), for tests that depend on the planner's view of the table rather than on what the
 * chunks say. Cheaper than embedding through the repository: 1,000 chunks load in seconds on
 * both databases.
 */
export async function seedWideChunks(db: Database, tenantId: string, count: number): Promise<void> {
  const documents = Math.ceil(count / 10);
  await db.query(
    `INSERT INTO documents (id, tenant_id, source_uri, title, source_type, language, visibility, status, chunk_count)
     SELECT md5($1 || ':' || g)::uuid, $1, 's3://bucket/wide/' || g,
            'wide ' || g, 'doc', 'en', 'tenant', 'indexed', 10
       FROM generate_series(1, $2::int) g`,
    [tenantId, documents],
  );
  await db.query(
    `INSERT INTO chunks (document_id, tenant_id, chunk_index, text, start_offset, end_offset, token_count, embedding, fts)
     SELECT md5($1 || ':' || (1 + (g - 1) / 10))::uuid, $1, (g - 1) % 10,
            w.text, 0, length(w.text), 60,
            (SELECT array_agg(sin(g * 7.1 + i * 1.3 + (g % 13) * i))::vector(512) FROM generate_series(1, 512) i),
            to_tsvector('english', w.text)
       FROM generate_series(1, $2::int) g,
            LATERAL (SELECT string_agg(md5((g * 1000 + i)::text), ' ') AS text FROM generate_series(1, 60) i) w`,
    [tenantId, count],
  );
  await db.exec('ANALYZE');
}
