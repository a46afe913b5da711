/** Writes documents and chunks straight through the repository, for search tests and benchmarks. */
import type { Database } from '../../lambdas/adapters/postgres/database';
import { createDocumentRepository } from '../../lambdas/adapters/postgres/document-repository';
import type { DocumentAttributes, Visibility } from '../../lambdas/core/ingestion/document-store';
import type { Embedder } from '../../lambdas/core/ports';

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
      { contentHash: d.key, attributesHash: d.key, embeddingModel: embedder.modelId },
      chunks,
    );
    ids.push(documentId);
  }
  return ids;
}
