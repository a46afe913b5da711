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
