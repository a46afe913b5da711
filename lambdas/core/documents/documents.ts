/**
 * The documents use cases behind /api/documents: hand out a presigned upload for a key under the
 * caller's own tenant prefix, report status and progress, remove a document, retry a failed one,
 * and read the passage a citation points at.
 *
 * Who may do what:
 * - Everyone sees what the visibility rule lets them read (docs/decisions/0146): their tenant's
 *   `tenant` and `global` documents and their own `user` documents, in every status, and the
 *   publishing tenants' indexed `global` documents; another user's private document is a 404,
 *   never a 403.
 * - Removing or retrying a private document: its owner. A tenant document: the user who uploaded
 *   it through this API, or a tenant admin. A document that arrived by another route (a direct
 *   S3 upload, a global publication): admins of its tenant only.
 *
 * The object is the source of truth: removal deletes the object and marks the document deleted
 * (as the S3 removal event also does); a retry re-announces the object, so the ingestion pipeline
 * runs exactly as it does for a new upload.
 */
import { randomUUID } from 'node:crypto';
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../errors';
import {
  containerFormat,
  CONTENT_TYPES,
  EXTENSIONS,
  extensionOf,
  GENERIC_CONTENT_TYPES,
  mediaTypeOf,
  SUPPORTED_TYPES,
  UPLOAD_CONTENT_TYPES,
} from '../ingestion/formats';
import {
  isSidecarKey,
  reservedAttributeName,
  SIDECAR_SUFFIX,
} from '../ingestion/object-attributes';
import {
  DEFAULT_PROCESSING_LEASE_SECONDS,
  type DocumentStatus,
  type Visibility,
} from '../ingestion/document-store';
import { DEFAULT_PUBLISHING_TENANTS, type Reader } from '../visibility';

/** Who is asking (the identity the API verified). */
export interface Caller {
  readonly tenantId: string;
  readonly userId: string;
  readonly isAdmin: boolean;
}

/** A document as the API reports it. */
export interface DocumentView {
  readonly id: string;
  readonly tenantId: string;
  readonly sourceUri: string;
  readonly title: string | null;
  readonly sourceType: string;
  readonly language: string;
  readonly visibility: Visibility;
  readonly ownerUserId: string | null;
  readonly uploadedBy: string | null;
  readonly status: DocumentStatus;
  readonly failureReason: string | null;
  readonly chunkCount: number;
  readonly metadata: Readonly<Record<string, unknown>>;
  /** While processing: `{ stage, chunks_total, chunks_embedded }`. */
  readonly progress: Readonly<Record<string, unknown>> | null;
  /** When ingestion last renewed its lease on the document (while processing). */
  readonly leaseRenewedAt: Date | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  readonly sourceUpdatedAt: Date | null;
}

/** One chunk of a passage, with its offsets into the document's extracted text. */
interface PassageChunk {
  readonly index: number;
  readonly start: number;
  readonly end: number;
  readonly text: string;
}

/** The database side (adapters/postgres/document-queries.ts). */
export interface DocumentCatalog {
  /** Records an announced upload as `queued` before its object exists. */
  reserve(doc: {
    id: string;
    tenantId: string;
    sourceUri: string;
    title: string | null;
    sourceType: string;
    language: string;
    visibility: Visibility;
    ownerUserId: string | null;
    uploadedBy: string;
    metadata: Readonly<Record<string, unknown>>;
  }): Promise<DocumentView>;
  /** The document if the visibility rule lets the reader see it, else null. */
  findVisible(reader: Reader, id: string): Promise<DocumentView | null>;
  /** One page of the documents the reader sees, ordered by source URI (keyset paging). */
  list(reader: Reader, filter: DocumentListFilter): Promise<DocumentView[]>;
  /**
   * The chunks that overlap [start, end), in order (at most `limit`), of the document if the
   * reader sees it; none otherwise.
   */
  passage(
    reader: Reader,
    documentId: string,
    start: number,
    end: number,
    limit: number,
  ): Promise<PassageChunk[]>;
  /**
   * Marks a failed document, or a stuck one (`queued` or `processing` with no lease renewed
   * since `stuckBefore`), queued again; false if it was neither.
   */
  markRequeued(documentId: string, stuckBefore: Date): Promise<boolean>;
  /** Puts a queued document back to failed (a retry that could not be announced). */
  markFailed(documentId: string, reason: string): Promise<void>;
  /**
   * Marks the tenant's document at `sourceUri` deleted and removes its chunks (no-op when it is
   * deleted already).
   */
  markDeleted(tenantId: string, sourceUri: string): Promise<void>;
  /**
   * Fails the tenant's uploads announced through the API that are still `queued` and were
   * last changed before `queuedBefore` (their file never arrived); returns how many.
   */
  expireReservations(tenantId: string, queuedBefore: Date, reason: string): Promise<number>;
}

/** What GET /api/documents narrows a page to. */
interface DocumentListFilter {
  readonly status?: string;
  readonly sourceType?: string;
  readonly uriPrefix?: string;
  /** The source URI the page continues after. */
  readonly after?: string;
  readonly limit: number;
}

/** The bucket side (adapters/s3/upload-bucket.ts). */
export interface UploadBucket {
  readonly name: string;
  /** A presigned PUT whose signature covers the content type and the exact length. */
  presignPut(
    key: string,
    options: { contentType: string; contentLength: number; expiresInSeconds: number },
  ): Promise<string>;
  put(key: string, body: string | Uint8Array, contentType: string): Promise<void>;
  /** Deletes the object (and nothing else); a missing object is not an error. */
  delete(key: string): Promise<void>;
  /** Re-announces an object (an S3 "created" event for the same bytes); false if it is gone. */
  touch(key: string): Promise<boolean>;
}

export interface DocumentsSettings {
  /** Largest upload accepted (the ingestion pipeline's own limit should match). */
  readonly maxUploadBytes: number;
  /** How long a presigned upload URL stays valid. */
  readonly uploadUrlTtlSeconds: number;
  /**
   * An announced upload still `queued` this long after its URL expired is failed: its file
   * never arrived (or ingestion is that far behind, in which case the pipeline's own status
   * replaces the failure when the file is processed).
   */
  readonly uploadGraceSeconds: number;
  /**
   * The publishing tenants: whose admins may publish `global` documents, and whose indexed
   * `global` documents every tenant reads (core/visibility.ts; ingestion's key layout holds the
   * same set).
   */
  readonly globalPublishers: readonly string[];
  /**
   * A `queued` or `processing` document that nothing has touched for this long is stuck (its
   * worker died or its event was lost): POST /api/documents/{id}/retry accepts it.
   */
  readonly processingLeaseSeconds: number;
}

const DEFAULT_DOCUMENTS_SETTINGS: DocumentsSettings = {
  maxUploadBytes: 50 * 1024 * 1024,
  uploadUrlTtlSeconds: 900,
  uploadGraceSeconds: 2700,
  globalPublishers: DEFAULT_PUBLISHING_TENANTS,
  processingLeaseSeconds: DEFAULT_PROCESSING_LEASE_SECONDS,
};

/**
 * Who may place a document where: scope comes from the verified caller, never from the request.
 * Metadata naming a reserved attribute (owner, visibility, tenant, ...) is refused, naming the key;
 * `global` needs an admin of a publishing tenant.
 */
function checkUploadScope(
  caller: Caller,
  request: Pick<UploadRequest, 'visibility' | 'metadata'>,
  globalPublishers: readonly string[],
): void {
  for (const name of Object.keys(request.metadata ?? {})) {
    const reserved = reservedAttributeName(name);
    if (reserved) {
      throw new ValidationError(
        `metadata.${name}: "${name}" is reserved: the server sets a document's owner, tenant and ` +
          'visibility from your token (use the request fields visibility, title, source_type and language).',
      );
    }
  }
  if (request.visibility === 'global') {
    if (!caller.isAdmin) {
      throw new ForbiddenError('Only a tenant admin can publish a document to every tenant.');
    }
    if (!globalPublishers.includes(caller.tenantId)) {
      throw new ForbiddenError(`Tenant "${caller.tenantId}" may not publish global documents.`);
    }
  }
}

interface UploadRequest {
  readonly filename: string;
  readonly contentType: string;
  readonly sizeBytes: number;
  /**
   * `tenant` (default): the whole tenant sees it; `user`: only the uploader; `global`: every
   * tenant (a tenant admin of a publishing tenant only).
   */
  readonly visibility: Visibility;
  readonly title?: string;
  readonly sourceType?: string;
  readonly language?: string;
  readonly metadata?: Readonly<Record<string, string | number | boolean | string[]>>;
}

interface UploadTicket {
  readonly documentId: string;
  /** The reserved document, as GET /api/documents/{id} shows it (status `queued`). */
  readonly document: DocumentView;
  readonly key: string;
  readonly sourceUri: string;
  readonly upload: {
    readonly url: string;
    readonly method: 'PUT';
    /** Send exactly these headers with the PUT: they are part of the signature. */
    readonly headers: Readonly<Record<string, string>>;
    readonly expiresAt: Date;
  };
}

/** A file received whole by the API (`POST /api/upload`), stored by the server itself. */
interface StoredUpload {
  readonly documentId: string;
  /** The reserved document, as GET /api/documents/{id} shows it (status `queued`). */
  readonly document: DocumentView;
  readonly key: string;
  readonly sourceUri: string;
}

export interface Documents {
  createUpload(caller: Caller, request: UploadRequest): Promise<UploadTicket>;
  /**
   * The same checks and reservation as `createUpload`, for a file the API already holds: the
   * server writes the object itself, and its S3 event indexes it as any upload.
   */
  storeUpload(
    caller: Caller,
    request: Omit<UploadRequest, 'sizeBytes'>,
    bytes: Uint8Array,
  ): Promise<StoredUpload>;
  /**
   * Fails the caller's tenant's announced uploads whose file never arrived (see
   * `uploadGraceSeconds`), so that lists and status pages do not show them queued for ever.
   * Called before a list is read; `get` and the other calls on one document do it only when
   * that document is such an upload.
   */
  expireStaleUploads(caller: Caller): Promise<number>;
  /** One page of the documents the caller sees (call `expireStaleUploads` first). */
  list(caller: Caller, filter: DocumentListFilter): Promise<DocumentView[]>;
  get(caller: Caller, id: string): Promise<DocumentView>;
  remove(caller: Caller, id: string): Promise<DocumentView>;
  retry(caller: Caller, id: string): Promise<DocumentView>;
  passage(
    caller: Caller,
    id: string,
    range: { start: number; end: number },
  ): Promise<{ document: DocumentView; chunks: PassageChunk[] }>;
}

/**
 * The longest stored file name, in UTF-8 bytes: with its sidecar's suffix it stays within the
 * 255 bytes a file name may take where objects are files (the local S3 emulator).
 */
const MAX_FILE_NAME_BYTES = 200;

/** A file name that is safe as the last segment of an S3 key, or a 422. */
function safeFileName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? '';
  const cleaned = base
    .normalize('NFC')
    .replace(/[\u0000-\u001f\u007f]/g, '')
    .replace(/[^\p{L}\p{N}._ ()-]+/gu, '_')
    .replace(/\s+/g, ' ')
    .trim();
  if (
    cleaned === '' ||
    cleaned === '.' ||
    cleaned === '..' ||
    new TextEncoder().encode(cleaned).length > MAX_FILE_NAME_BYTES
  ) {
    throw new ValidationError(
      `filename: use a plain file name of 1 to ${MAX_FILE_NAME_BYTES} bytes in UTF-8 (${MAX_FILE_NAME_BYTES} letters of the Latin alphabet, fewer of most other scripts)`,
    );
  }
  return cleaned;
}

/**
 * The key the documents API stores an upload under: `tenants/<tenant>/[users/<user>/]uploads/<id>/
 * <name>`, the user's own folder for a private one. The caller never chooses it.
 */
function apiUploadKey(tenantId: string, privateTo: string | null, id: string, fileName: string) {
  const owner = privateTo === null ? '' : `users/${privateTo}/`;
  return `tenants/${tenantId}/${owner}uploads/${id}/${fileName}`;
}

/**
 * Whether an object key is one {@link apiUploadKey} makes: a file no folder holds, which
 * `groundwork ingest --prune` leaves alone.
 */
export function isApiUploadKey(key: string): boolean {
  return /^tenants\/[^/]+\/(?:users\/[^/]+\/)?uploads\/[^/]+\/[^/]/.test(key);
}

/**
 * Checks that the file's extension and declared type are a supported, matching pair. A declared
 * type that names no format (`application/octet-stream`, what curl sends for a .md or .docx)
 * leaves the format to the extension, as ingestion's detector does (GENERIC_CONTENT_TYPES); the
 * declared type itself is kept, so a presigned PUT is signed for what the client sends.
 */
function checkUploadType(fileName: string, contentType: string): void {
  // Such an object is read as the metadata of the file its name ends in, never as a document.
  if (isSidecarKey(fileName)) {
    throw new ValidationError(
      `filename: names ending in "${SIDECAR_SUFFIX}" are reserved for metadata sidecars`,
    );
  }
  const mediaType = mediaTypeOf(contentType);
  const extension = extensionOf(fileName) ?? '';
  const byExtension = EXTENSIONS[extension];
  if (GENERIC_CONTENT_TYPES.has(mediaType)) {
    if (byExtension) return;
    throw new ValidationError(
      `content_type: "${mediaType}" does not say which format the file is in, and ${
        extension === ''
          ? 'its name has no extension'
          : `its extension ".${extension}" is not supported`
      }; supported types are ${SUPPORTED_TYPES}`,
    );
  }
  const byType = CONTENT_TYPES[mediaType];
  if (!byType) {
    throw new ValidationError(
      `content_type: "${mediaType}" is not supported; supported types are ${SUPPORTED_TYPES}`,
    );
  }
  if (!byExtension) {
    throw new ValidationError(
      `filename: the extension ".${extension}" is not supported; supported types are ${SUPPORTED_TYPES}`,
    );
  }
  // text/plain is what many clients send for any text file; binary formats must match exactly.
  const compatible =
    byType === byExtension ||
    (byType === 'text' && byExtension !== 'pdf' && byExtension !== 'docx');
  if (!compatible) {
    throw new ValidationError(
      `content_type: "${mediaType}" does not match the file's extension ".${extension}"`,
    );
  }
}

/**
 * The type an uploaded file is stored with: the declared one, unless it is plain text and the
 * bytes are a PDF or DOCX. A multipart file part without a Content-Type is text/plain (RFC 7578),
 * and common clients send none (Python's `requests` with `files={"file": f}`): such a PDF is
 * stored as the PDF it is when its name says so too (a PDF named .txt keeps the declared type,
 * and ingestion's detector still reads it by its bytes).
 */
function storedContentType(declared: string, fileName: string, bytes: Uint8Array): string {
  const format = mediaTypeOf(declared) === 'text/plain' ? containerFormat(bytes) : undefined;
  return format && EXTENSIONS[extensionOf(fileName) ?? ''] === format
    ? UPLOAD_CONTENT_TYPES[format]
    : declared;
}

/** The object key of an S3 URI in this bucket, or null for a URI elsewhere. */
function keyOf(bucket: string, sourceUri: string): string | null {
  const prefix = `s3://${bucket}/`;
  return sourceUri.startsWith(prefix) ? sourceUri.slice(prefix.length) : null;
}

/**
 * A document as the caller may see it: who uploaded a document of another tenant (a global one)
 * is that tenant's to know, not every reader's.
 */
function seenBy(caller: Caller, doc: DocumentView): DocumentView {
  return doc.tenantId === caller.tenantId ? doc : { ...doc, uploadedBy: null };
}

export function createDocuments(deps: {
  catalog: DocumentCatalog;
  bucket: UploadBucket;
  settings?: Partial<DocumentsSettings>;
  clock?: { now(): Date };
  newId?: () => string;
}): Documents {
  const settings = { ...DEFAULT_DOCUMENTS_SETTINGS, ...deps.settings };
  const now = () => deps.clock?.now() ?? new Date();
  const newId = deps.newId ?? randomUUID;
  const { catalog, bucket } = deps;

  const expiry = settings.uploadUrlTtlSeconds + settings.uploadGraceSeconds;
  const cutoff = (): Date => new Date(now().getTime() - expiry * 1000);
  const expireStaleUploads = (caller: Caller): Promise<number> =>
    catalog.expireReservations(
      caller.tenantId,
      cutoff(),
      `No file arrived within ${Math.round(expiry / 60)} minutes of the upload URL being issued. ` +
        'Announce and upload the file again (POST /api/documents), or retry once it is in the bucket.',
    );

  /** The caller as a reader of documents. */
  const reader = (caller: Caller): Reader => ({
    tenantId: caller.tenantId,
    userId: caller.userId,
    globalTenants: settings.globalPublishers,
  });

  /**
   * The document if the caller may see it. Reads are not writes: only when the document itself
   * is an expired reservation are the tenant's stale uploads failed, and it is read again.
   */
  async function visible(caller: Caller, id: string): Promise<DocumentView> {
    let doc = await catalog.findVisible(reader(caller), id);
    if (
      doc?.status === 'queued' &&
      doc.uploadedBy !== null &&
      doc.tenantId === caller.tenantId &&
      doc.updatedAt < cutoff()
    ) {
      await expireStaleUploads(caller);
      doc = await catalog.findVisible(reader(caller), id);
    }
    if (!doc) throw new NotFoundError(`No document ${id}`);
    return seenBy(caller, doc);
  }

  /** May the caller change (remove, retry) this document? */
  function assertMayChange(caller: Caller, doc: DocumentView): void {
    if (doc.tenantId !== caller.tenantId) {
      throw new ForbiddenError(
        'This document is published by another tenant; only it can change it.',
      );
    }
    const allowed =
      doc.tenantId === caller.tenantId &&
      (caller.isAdmin ||
        (doc.visibility === 'user' && doc.ownerUserId === caller.userId) ||
        (doc.visibility === 'tenant' && doc.uploadedBy === caller.userId));
    if (!allowed) {
      throw new ForbiddenError(
        doc.visibility === 'tenant'
          ? 'Only the user who uploaded this document or a tenant admin can change it.'
          : 'Only a tenant admin can change this document.',
      );
    }
  }

  function objectKey(doc: DocumentView): string {
    const key = keyOf(bucket.name, doc.sourceUri);
    if (key === null) {
      throw new ConflictError(
        'source_elsewhere',
        `The document's object is not in this deployment's bucket (${doc.sourceUri}).`,
      );
    }
    return key;
  }

  /**
   * Checks an upload (name, type, scope, size), reserves its document as `queued` and writes the
   * sidecar: everything both upload routes do before the file's bytes reach the bucket.
   */
  async function reserveUpload(caller: Caller, request: UploadRequest) {
    const fileName = safeFileName(request.filename);
    checkUploadType(fileName, request.contentType);
    checkUploadScope(caller, request, settings.globalPublishers);
    if (request.sizeBytes > settings.maxUploadBytes) {
      throw new ValidationError(
        `size_bytes: the file is ${request.sizeBytes} bytes; the limit is ${settings.maxUploadBytes} bytes (${(settings.maxUploadBytes / 1048576).toFixed(0)} MB)`,
      );
    }
    const id = newId();
    // The caller never chooses the prefix: it is built from the verified identity.
    const key = apiUploadKey(
      caller.tenantId,
      request.visibility === 'user' ? caller.userId : null,
      id,
      fileName,
    );
    const sourceUri = `s3://${bucket.name}/${key}`;
    // Custom attributes first, then the fields the server decides: the reserved names are
    // refused above, and the visibility is always written, so the sidecar alone cannot move
    // the document out of the scope chosen here.
    const attributes: Record<string, unknown> = {
      ...request.metadata,
      ...(request.title ? { title: request.title } : {}),
      ...(request.sourceType ? { source_type: request.sourceType } : {}),
      ...(request.language ? { language: request.language } : {}),
      visibility: request.visibility,
    };
    // The sidecar goes first, so the object's event finds it; alone it is ignored (ingest.ts), so
    // a store that refuses it leaves nothing behind.
    await bucket.put(
      key + SIDECAR_SUFFIX,
      JSON.stringify({ metadataAttributes: attributes }),
      'application/json',
    );
    const document = await catalog.reserve({
      id,
      tenantId: caller.tenantId,
      sourceUri,
      title: request.title ?? fileName,
      sourceType: request.sourceType ?? 'doc',
      language: request.language ?? 'en',
      visibility: request.visibility,
      ownerUserId: request.visibility === 'user' ? caller.userId : null,
      uploadedBy: caller.userId,
      metadata: request.metadata ?? {},
    });
    return { id, key, sourceUri, document };
  }

  return {
    expireStaleUploads,

    async createUpload(caller, request) {
      const { id, key, sourceUri, document } = await reserveUpload(caller, request);
      const url = await bucket.presignPut(key, {
        contentType: request.contentType,
        contentLength: request.sizeBytes,
        expiresInSeconds: settings.uploadUrlTtlSeconds,
      });
      return {
        documentId: id,
        document,
        key,
        sourceUri,
        upload: {
          url,
          method: 'PUT',
          headers: { 'content-type': request.contentType },
          expiresAt: new Date(now().getTime() + settings.uploadUrlTtlSeconds * 1000),
        },
      };
    },

    async storeUpload(caller, request, bytes) {
      const contentType = storedContentType(request.contentType, request.filename, bytes);
      const { id, key, sourceUri, document } = await reserveUpload(caller, {
        ...request,
        contentType,
        sizeBytes: bytes.byteLength,
      });
      try {
        await bucket.put(key, bytes, contentType);
      } catch (err) {
        // Recorded, not left queued until it expires as if the caller never sent it.
        await catalog
          .markFailed(id, 'The file could not be stored; upload it again.')
          .catch(() => undefined);
        throw err;
      }
      return { documentId: id, document, key, sourceUri };
    },

    list: async (caller, filter) =>
      (await catalog.list(reader(caller), filter)).map((doc) => seenBy(caller, doc)),

    get: visible,

    async remove(caller, id) {
      const doc = await visible(caller, id);
      assertMayChange(caller, doc);
      if (doc.status === 'deleted') return doc;
      const key = objectKey(doc);
      await bucket.delete(key);
      await bucket.delete(key + SIDECAR_SUFFIX);
      // Recorded now rather than by the removal event alone: an announced upload whose file has
      // not arrived has no object to remove, and the file that arrives later is then not indexed
      // (ingest.ts).
      await catalog.markDeleted(doc.tenantId, doc.sourceUri);
      // As it is now (deleted, its chunks gone), not as it was before the removal.
      const removed = await catalog.findVisible(reader(caller), id);
      return removed ? seenBy(caller, removed) : { ...doc, status: 'deleted', chunkCount: 0 };
    },

    async retry(caller, id) {
      const doc = await visible(caller, id);
      assertMayChange(caller, doc);
      const stuckBefore = new Date(now().getTime() - settings.processingLeaseSeconds * 1000);
      const lastTouched = doc.leaseRenewedAt ?? doc.updatedAt;
      const stuck =
        (doc.status === 'queued' || doc.status === 'processing') && lastTouched < stuckBefore;
      if (doc.status !== 'failed' && !stuck) {
        throw new ConflictError(
          'not_failed',
          doc.status === 'queued' || doc.status === 'processing'
            ? `This document is ${doc.status}; it can be retried if nothing moves it for ${Math.round(settings.processingLeaseSeconds / 60)} minutes.`
            : `Only a failed or stuck document can be retried; this one is ${doc.status}.`,
        );
      }
      const key = objectKey(doc);
      // Queued before the object is re-announced, so the pipeline's own status always wins.
      if (!(await catalog.markRequeued(doc.id, stuckBefore))) {
        throw new ConflictError('not_failed', 'The document is already being retried.');
      }
      if (!(await bucket.touch(key))) {
        const reason =
          'The file is not in the bucket: it never arrived, or was removed since. Upload it again.';
        await catalog.markFailed(doc.id, reason);
        throw new ConflictError('object_missing', reason);
      }
      return { ...doc, status: 'queued', failureReason: null, progress: null };
    },

    async passage(caller, id, range) {
      const document = await visible(caller, id);
      if (range.end <= range.start) throw new ValidationError('end: must be greater than start');
      const chunks = await catalog.passage(reader(caller), document.id, range.start, range.end, 5);
      return { document, chunks };
    },
  };
}
