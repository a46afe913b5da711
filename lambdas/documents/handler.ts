/**
 * The /api/documents routes: presigned uploads under the caller's tenant prefix, listing, status
 * with progress, removal, retry of a failed document, and the passage a citation points at.
 * Thin: validation, identity, one use case each (core/documents).
 */
import * as z from '../core/zod';
import type { DocumentView, Documents } from '../core/documents/documents';
import type { Database } from '../adapters/postgres/database';
import { cursorCodec } from '../http/cursor';
import { createHttpHandler, parseQuery, type HttpHandlerDeps } from '../http/http-handler';
import {
  createDocumentRequestSchema,
  listDocumentsQuerySchema,
  passageQuerySchema,
  type DocumentDetail,
  type DocumentSummary,
} from './schema';

const noBody = z.strictObject({});
/** GET /api/documents pages by source URI. */
const documentsCursor = cursorCodec(z.object({ after: z.string().check(z.minLength(1)) }));

/** A document as a page of GET /documents lists it. */
function toSummary(d: DocumentView): DocumentSummary {
  return {
    id: d.id,
    source_uri: d.sourceUri,
    title: d.title,
    source_type: d.sourceType,
    language: d.language,
    visibility: d.visibility,
    status: d.status,
    failure_reason: d.failureReason,
    chunk_count: d.chunkCount,
    created_at: d.createdAt.toISOString(),
    updated_at: d.updatedAt.toISOString(),
    source_updated_at: d.sourceUpdatedAt?.toISOString() ?? null,
  };
}

/** A document as the API shows it (GET /documents/{id}). */
export function toDetail(d: DocumentView): DocumentDetail {
  const progress = d.progress as DocumentDetail['progress'];
  return {
    ...toSummary(d),
    metadata: { ...d.metadata },
    progress: d.status === 'processing' ? progress : null,
    uploaded_by: d.uploadedBy,
  };
}

/** GET /api/documents: what is indexed for the caller, with status and failure reasons, paged. */
function makeListHandler(deps: HttpHandlerDeps & { db: Database; documents: Documents }) {
  return createHttpHandler(
    deps,
    { route: 'documents.list', schema: z.looseObject({}) },
    async ({ identity, query }) => {
      const q = parseQuery(listDocumentsQuerySchema, query);
      await deps.documents.expireStaleUploads(identity);
      const rows = await deps.documents.list(identity, {
        ...(q.status ? { status: q.status } : {}),
        ...(q.source_type ? { sourceType: q.source_type } : {}),
        ...(q.prefix ? { uriPrefix: q.prefix } : {}),
        ...(q.cursor ? { after: documentsCursor.decode(q.cursor).after } : {}),
        limit: q.limit,
      });
      const last = rows[rows.length - 1];
      return {
        body: {
          documents: rows.map(toSummary),
          next_cursor:
            rows.length === q.limit && last
              ? documentsCursor.encode({ after: last.sourceUri })
              : null,
        },
      };
    },
  );
}

/** Every /api/documents route, by name. */
export function makeDocumentHandlers(
  deps: HttpHandlerDeps & { db: Database; documents: Documents },
) {
  const { documents } = deps;
  return {
    'documents.list': makeListHandler(deps),

    'documents.create': createHttpHandler(
      deps,
      { route: 'documents.create', schema: createDocumentRequestSchema },
      async ({ identity, body }) => {
        const ticket = await documents.createUpload(identity, {
          filename: body.filename,
          contentType: body.content_type,
          sizeBytes: body.size_bytes,
          visibility: body.visibility,
          ...(body.title ? { title: body.title } : {}),
          ...(body.source_type ? { sourceType: body.source_type } : {}),
          ...(body.language ? { language: body.language } : {}),
          ...(body.metadata ? { metadata: body.metadata } : {}),
        });
        return {
          status: 201,
          headers: { location: `/api/documents/${ticket.documentId}` },
          body: {
            document: toDetail(ticket.document),
            upload: {
              url: ticket.upload.url,
              method: ticket.upload.method,
              headers: { ...ticket.upload.headers },
              expires_at: ticket.upload.expiresAt.toISOString(),
            },
          },
        };
      },
    ),

    'documents.get': createHttpHandler(
      deps,
      { route: 'documents.get', schema: noBody },
      async ({ identity, pathParameters }) => ({
        body: toDetail(await documents.get(identity, pathParameters.id ?? '')),
      }),
    ),

    'documents.delete': createHttpHandler(
      deps,
      { route: 'documents.delete', schema: noBody },
      async ({ identity, pathParameters }) => {
        const doc = await documents.remove(identity, pathParameters.id ?? '');
        // 202 as the route has always answered; the document and its chunks are already removed.
        return { status: 202, body: toDetail(doc) };
      },
    ),

    'documents.retry': createHttpHandler(
      deps,
      { route: 'documents.retry', schema: noBody },
      async ({ identity, pathParameters }) => ({
        status: 202,
        body: toDetail(await documents.retry(identity, pathParameters.id ?? '')),
      }),
    ),

    'documents.passage': createHttpHandler(
      deps,
      { route: 'documents.passage', schema: noBody },
      async ({ identity, pathParameters, query }) => {
        const range = parseQuery(passageQuerySchema, query);
        const { document, chunks } = await documents.passage(
          identity,
          pathParameters.id ?? '',
          range,
        );
        return { body: { document: toDetail(document), chunks } };
      },
    ),
  };
}
