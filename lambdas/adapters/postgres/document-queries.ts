/** Queries over documents for the CLI's status reports and the documents API. */
import type { DocumentCatalog, DocumentView } from '../../core/documents/documents';
import type { DocumentStatus, Visibility } from '../../core/ingestion/document-store';
import type { Database } from './database';
import { isUuid } from './sql-params';

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

interface DocumentViewRow {
  id: string;
  tenant_id: string;
  source_uri: string;
  title: string | null;
  source_type: string;
  language: string;
  visibility: Visibility;
  owner_user_id: string | null;
  uploaded_by: string | null;
  status: DocumentStatus;
  failure_reason: string | null;
  chunk_count: number;
  metadata: Record<string, unknown>;
  progress: Record<string, unknown> | null;
  created_at: Date;
  updated_at: Date;
  source_updated_at: Date | null;
}

const toView = (r: DocumentViewRow): DocumentView => ({
  id: r.id,
  tenantId: r.tenant_id,
  sourceUri: r.source_uri,
  title: r.title,
  sourceType: r.source_type,
  language: r.language,
  visibility: r.visibility,
  ownerUserId: r.owner_user_id,
  uploadedBy: r.uploaded_by,
  status: r.status,
  failureReason: r.failure_reason,
  chunkCount: r.chunk_count,
  metadata: r.metadata,
  progress: r.progress,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  sourceUpdatedAt: r.source_updated_at,
});

/** The columns `toView` reads. */
const VIEW_COLUMNS = `id, tenant_id, source_uri, title, source_type, language, visibility, owner_user_id,
                uploaded_by, status, failure_reason, chunk_count, metadata, progress, created_at,
                updated_at, source_updated_at`;

/** The documents API's view of the `documents` and `chunks` tables. */
export function createDocumentCatalog(db: Database): DocumentCatalog {
  return {
    async reserve(doc) {
      const { rows } = await db.query<DocumentViewRow>(
        `INSERT INTO documents (id, tenant_id, source_uri, title, source_type, language, visibility,
                                owner_user_id, uploaded_by, metadata, status)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb, 'queued')
         RETURNING ${VIEW_COLUMNS}`,
        [
          doc.id,
          doc.tenantId,
          doc.sourceUri,
          doc.title,
          doc.sourceType,
          doc.language,
          doc.visibility,
          doc.ownerUserId,
          doc.uploadedBy,
          JSON.stringify(doc.metadata),
        ],
      );
      return toView(rows[0]!);
    },

    async findVisible(caller, id) {
      // A malformed id is simply not found (the uuid cast would otherwise fail the statement).
      if (!isUuid(id)) return null;
      const { rows } = await db.query<DocumentViewRow>(
        `SELECT ${VIEW_COLUMNS}
           FROM documents
          WHERE id = $1::uuid
            AND ((tenant_id = $2 AND (visibility <> 'user' OR owner_user_id = $3))
                 OR visibility = 'global')`,
        [id, caller.tenantId, caller.userId],
      );
      return rows[0] ? toView(rows[0]) : null;
    },

    async passage(documentId, start, end, limit) {
      const { rows } = await db.query<{
        chunk_index: number;
        start_offset: number;
        end_offset: number;
        text: string;
      }>(
        `SELECT chunk_index, start_offset, end_offset, text
           FROM chunks
          WHERE document_id = $1::uuid AND start_offset < $3 AND end_offset > $2
          ORDER BY chunk_index
          LIMIT $4`,
        [documentId, start, end, limit],
      );
      return rows.map((r) => ({
        index: r.chunk_index,
        start: r.start_offset,
        end: r.end_offset,
        text: r.text,
      }));
    },

    async markRequeued(documentId) {
      const { rows } = await db.query(
        `UPDATE documents SET status = 'queued', failure_reason = NULL, progress = NULL,
                updated_at = now()
          WHERE id = $1::uuid AND status = 'failed'
          RETURNING id`,
        [documentId],
      );
      return rows.length > 0;
    },

    async expireReservations(tenantId, queuedBefore, reason) {
      // Only rows the documents API reserved (uploaded_by) and the pipeline never touched since.
      const { rowCount } = await db.query(
        `UPDATE documents SET status = 'failed', failure_reason = $3, progress = NULL,
                updated_at = now()
          WHERE tenant_id = $1 AND status = 'queued' AND uploaded_by IS NOT NULL
            AND updated_at < $2`,
        [tenantId, queuedBefore, reason],
      );
      return rowCount;
    },

    async markFailed(documentId, reason) {
      await db.query(
        `UPDATE documents SET status = 'failed', failure_reason = $2, progress = NULL,
                updated_at = now()
          WHERE id = $1::uuid AND status = 'queued'`,
        [documentId, reason],
      );
    },
  };
}
