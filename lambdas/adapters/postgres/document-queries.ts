/**
 * The documents API's reads and writes of the `documents` and `chunks` tables. Every read is the
 * visibility rule's (visibility-sql.ts).
 */
import type { DocumentCatalog, DocumentView } from '../../core/documents/documents';
import type { DocumentStatus, Visibility } from '../../core/ingestion/document-store';
import type { Database } from './database';
import { markDocumentDeleted } from './document-repository';
import { isUuid, SqlParams } from './sql-params';
import { visibleDocumentBranches, visibleDocumentSql } from './visibility-sql';

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
  lease_renewed_at: Date | null;
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
  leaseRenewedAt: r.lease_renewed_at,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  sourceUpdatedAt: r.source_updated_at,
});

/** The columns `toView` reads. */
const VIEW_COLUMNS = `id, tenant_id, source_uri, title, source_type, language, visibility, owner_user_id,
                uploaded_by, status, failure_reason, chunk_count, metadata, progress, lease_renewed_at,
                created_at, updated_at, source_updated_at`;

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

    async findVisible(reader, id) {
      // A malformed id is simply not found (the uuid cast would otherwise fail the statement).
      if (!isUuid(id)) return null;
      const p = new SqlParams();
      const { rows } = await db.query<DocumentViewRow>(
        `SELECT ${VIEW_COLUMNS}
           FROM documents d
          WHERE d.id = ${p.add(id, 'uuid')} AND ${visibleDocumentSql('d', reader, p)}`,
        p.values,
      );
      return rows[0] ? toView(rows[0]) : null;
    },

    async list(reader, filter) {
      const p = new SqlParams();
      const optional = (value: string | undefined, test: (param: string) => string) =>
        value === undefined ? [] : [test(p.add(value, 'text'))];
      const conditions = [
        ...optional(filter.status, (v) => `d.status = ${v}`),
        ...optional(filter.sourceType, (v) => `d.source_type = ${v}`),
        ...optional(filter.uriPrefix, (v) => `starts_with(d.source_uri, ${v})`),
        ...optional(filter.after, (v) => `d.source_uri > ${v}`),
      ];
      const limit = p.add(filter.limit, 'int');
      // One page of each branch of the rule, through the (tenant_id, source_uri) index, merged:
      // their OR would read and sort every document of the tenant for each page.
      const pages = visibleDocumentBranches('d', reader, p).map(
        (branch) => `(SELECT ${VIEW_COLUMNS}
           FROM documents d
          WHERE ${[branch, ...conditions].join('\n            AND ')}
          ORDER BY d.source_uri
          LIMIT ${limit})`,
      );
      const { rows } = await db.query<DocumentViewRow>(
        `SELECT * FROM (${pages.join('\n        UNION ALL\n        ')}) page
          ORDER BY source_uri
          LIMIT ${limit}`,
        p.values,
      );
      return rows.map(toView);
    },

    async passage(reader, documentId, start, end, limit) {
      if (!isUuid(documentId)) return [];
      const p = new SqlParams();
      const { rows } = await db.query<{
        chunk_index: number;
        start_offset: number;
        end_offset: number;
        text: string;
      }>(
        `SELECT c.chunk_index, c.start_offset, c.end_offset, c.text
           FROM chunks c JOIN documents d ON d.id = c.document_id
          WHERE c.document_id = ${p.add(documentId, 'uuid')}
            AND c.start_offset < ${p.add(end, 'int')} AND c.end_offset > ${p.add(start, 'int')}
            AND ${visibleDocumentSql('d', reader, p)}
          ORDER BY c.chunk_index
          LIMIT ${p.add(limit, 'int')}`,
        p.values,
      );
      return rows.map((r) => ({
        index: r.chunk_index,
        start: r.start_offset,
        end: r.end_offset,
        text: r.text,
      }));
    },

    async markRequeued(documentId, stuckBefore) {
      const { rows } = await db.query(
        `UPDATE documents SET status = 'queued', failure_reason = NULL, progress = NULL,
                lease_renewed_at = NULL, updated_at = now()
          WHERE id = $1::uuid
            AND (status = 'failed'
                 OR (status IN ('queued', 'processing')
                     AND coalesce(lease_renewed_at, updated_at) < $2))
          RETURNING id`,
        [documentId, stuckBefore],
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

    async markDeleted(tenantId, sourceUri) {
      await markDocumentDeleted(db, tenantId, sourceUri);
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
