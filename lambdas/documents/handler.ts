/** GET /documents: what is indexed for the caller, with status and failure reasons, paged. */
import * as z from 'zod';
import type { Database } from '../adapters/postgres/database';
import { listDocuments } from '../adapters/postgres/document-queries';
import { createHttpHandler, parseOrThrow, type HttpHandlerDeps } from '../http/http-handler';

export const listDocumentsQuerySchema = z
  .object({
    status: z.enum(['queued', 'processing', 'indexed', 'failed', 'deleted']).optional(),
    source_type: z
      .string()
      .regex(/^[a-z][a-z0-9_-]{0,31}$/)
      .optional(),
    /** Only sources whose URI starts with this (e.g. `s3://bucket/tenants/acme/reports/`). */
    prefix: z.string().min(1).max(1024).optional(),
    limit: z.coerce.number().int().min(1).max(100).default(50),
    cursor: z.string().max(2048).optional(),
  })
  .strict();

const encodeCursor = (uri: string) => Buffer.from(uri, 'utf8').toString('base64url');
const decodeCursor = (cursor: string) => Buffer.from(cursor, 'base64url').toString('utf8');

export function makeListHandler(deps: HttpHandlerDeps & { db: Database }) {
  return createHttpHandler(
    deps,
    { route: 'documents.list', schema: z.object({}).loose() },
    async ({ identity, query }) => {
      const q = parseOrThrow(listDocumentsQuerySchema, query);
      const rows = await listDocuments(deps.db, identity, {
        ...(q.status ? { status: q.status } : {}),
        ...(q.source_type ? { sourceType: q.source_type } : {}),
        ...(q.prefix ? { uriPrefix: q.prefix } : {}),
        ...(q.cursor ? { after: decodeCursor(q.cursor) } : {}),
        limit: q.limit,
      });
      const last = rows[rows.length - 1];
      return {
        body: {
          documents: rows.map((r) => ({
            id: r.id,
            source_uri: r.source_uri,
            title: r.title,
            source_type: r.source_type,
            language: r.language,
            visibility: r.visibility,
            status: r.status,
            failure_reason: r.failure_reason,
            chunk_count: r.chunk_count,
            created_at: r.created_at.toISOString(),
            updated_at: r.updated_at.toISOString(),
            source_updated_at: r.source_updated_at?.toISOString() ?? null,
          })),
          next_cursor: rows.length === q.limit && last ? encodeCursor(last.source_uri) : null,
        },
      };
    },
  );
}
