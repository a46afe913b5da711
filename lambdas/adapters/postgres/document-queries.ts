/** Read-side queries over documents (status reports for the CLI and, later, the documents API). */
import type { Database } from './database';

export interface DocumentStatusRow {
  id: string;
  source_uri: string;
  title: string | null;
  status: string;
  failure_reason: string | null;
  chunk_count: number;
}

/** Status of the given sources in one tenant (tenant scope is mandatory). */
export async function findDocumentStatuses(
  db: Database,
  tenantId: string,
  sourceUris: readonly string[],
): Promise<DocumentStatusRow[]> {
  const { rows } = await db.query<DocumentStatusRow>(
    `SELECT id, source_uri, title, status, failure_reason, chunk_count
       FROM documents WHERE tenant_id = $1 AND source_uri = ANY($2::text[])
      ORDER BY source_uri`,
    [tenantId, [...sourceUris]],
  );
  return rows;
}

export interface DocumentListRow {
  id: string;
  source_uri: string;
  title: string | null;
  source_type: string;
  language: string;
  visibility: string;
  status: string;
  failure_reason: string | null;
  chunk_count: number;
  created_at: Date;
  updated_at: Date;
  source_updated_at: Date | null;
}

/**
 * One page of the documents a user may see in their tenant (tenant documents and their own),
 * ordered by source URI, continuing after `after` (keyset paging).
 */
export async function listDocuments(
  db: Database,
  scope: { tenantId: string; userId: string },
  filter: {
    status?: string;
    sourceType?: string;
    uriPrefix?: string;
    after?: string;
    limit: number;
  },
): Promise<DocumentListRow[]> {
  const { rows } = await db.query<DocumentListRow>(
    `SELECT id, source_uri, title, source_type, language, visibility, status, failure_reason, chunk_count,
            created_at, updated_at, source_updated_at
       FROM documents
      WHERE tenant_id = $1
        AND (visibility <> 'user' OR owner_user_id = $2)
        AND ($3::text IS NULL OR status = $3)
        AND ($4::text IS NULL OR source_type = $4)
        AND ($5::text IS NULL OR starts_with(source_uri, $5))
        AND ($6::text IS NULL OR source_uri > $6)
      ORDER BY source_uri
      LIMIT $7`,
    [
      scope.tenantId,
      scope.userId,
      filter.status ?? null,
      filter.sourceType ?? null,
      filter.uriPrefix ?? null,
      filter.after ?? null,
      filter.limit,
    ],
  );
  return rows;
}
