/** The `DocumentStore` port on PostgreSQL / PGlite: documents and their chunks. */
import type {
  ChunkRecord,
  DocumentAttributes,
  DocumentStore,
  DuplicateOf,
  RecoveryStore,
  SourceState,
  StillCurrent,
  StoredDocument,
} from '../../core/ingestion/document-store';
import { toVectorLiteral, type Database, type Queryable } from './database';
import { textSearchConfig } from './text-search';

interface DocumentRow {
  id: string;
  status: StoredDocument['status'];
  content_hash: string | null;
  embedding_model: string | null;
  ingestion_version: number;
  attributes_hash: string | null;
  source_updated_at: Date | null;
  chunk_count: number;
  failure_reason: string | null;
  reserved: boolean;
}

const UPSERT_COLUMNS = `tenant_id, source_uri, title, source_type, language, owner_user_id, visibility, metadata, source_updated_at`;

function attributeParams(a: DocumentAttributes): unknown[] {
  return [
    a.tenantId,
    a.sourceUri,
    a.title,
    a.sourceType,
    a.language,
    a.ownerUserId,
    a.visibility,
    JSON.stringify(a.metadata),
    a.sourceUpdatedAt,
  ];
}

/** `$1..$9` are the attributes above; the update keeps the newest source version. */
const UPSERT_DOCUMENT = (extraSet: string, extraCols = '', extraVals = '') => `
  INSERT INTO documents (${UPSERT_COLUMNS}${extraCols})
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9${extraVals})
  ON CONFLICT (tenant_id, source_uri) DO UPDATE SET
    title = EXCLUDED.title, source_type = EXCLUDED.source_type, language = EXCLUDED.language,
    owner_user_id = EXCLUDED.owner_user_id, visibility = EXCLUDED.visibility,
    metadata = EXCLUDED.metadata, source_updated_at = EXCLUDED.source_updated_at,
    updated_at = now(), progress = NULL${extraSet}
  WHERE documents.source_updated_at IS NULL OR EXCLUDED.source_updated_at IS NULL
     OR documents.source_updated_at <= EXCLUDED.source_updated_at
  RETURNING id`;

const INSERT_CHUNKS = `
  INSERT INTO chunks (document_id, tenant_id, chunk_index, text, start_offset, end_offset,
                      token_count, embedding, fts, metadata)
  SELECT $1, $2, t.idx, t.txt, t.s, t.e, t.tok, t.emb::vector,
         to_tsvector($3::regconfig, coalesce($4::text, '') || E'\\n' || t.txt), t.meta::jsonb
  FROM unnest($5::int[], $6::text[], $7::int[], $8::int[], $9::int[], $10::text[], $11::text[])
       AS t(idx, txt, s, e, tok, emb, meta)`;

async function insertChunks(
  tx: Queryable,
  documentId: string,
  attrs: DocumentAttributes,
  chunks: readonly ChunkRecord[],
): Promise<void> {
  if (chunks.length === 0) return;
  await tx.query(INSERT_CHUNKS, [
    documentId,
    attrs.tenantId,
    textSearchConfig(attrs.language),
    attrs.title,
    chunks.map((c) => c.index),
    chunks.map((c) => c.text),
    chunks.map((c) => c.start),
    chunks.map((c) => c.end),
    chunks.map((c) => c.tokenCount),
    chunks.map((c) => toVectorLiteral(c.embedding)),
    chunks.map((c) => JSON.stringify(c.metadata)),
  ]);
}

/** An indexed document of the same scope holding the same content, other than `attrs`'s own. */
async function findDuplicate(
  q: Queryable,
  attrs: DocumentAttributes,
  contentHash: string,
): Promise<DuplicateOf | null> {
  const { rows } = await q.query<{ id: string; title: string | null; source_uri: string }>(
    `SELECT id, title, source_uri FROM documents
      WHERE tenant_id = $1 AND content_hash = $2 AND status = 'indexed'
        AND source_uri <> $3 AND visibility = $4 AND owner_user_id IS NOT DISTINCT FROM $5
      ORDER BY created_at, id
      LIMIT 1`,
    [attrs.tenantId, contentHash, attrs.sourceUri, attrs.visibility, attrs.ownerUserId],
  );
  const row = rows[0];
  return row ? { id: row.id, title: row.title, sourceUri: row.source_uri } : null;
}

/** Thrown inside a write's transaction to roll it back and answer `result` instead. */
class RolledBack extends Error {
  constructor(readonly result: unknown) {
    super('write rolled back');
  }
}

/** The write's result, or the result it rolled back with ({@link RolledBack}). */
async function orRolledBack<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (err instanceof RolledBack) return err.result as T;
    throw err;
  }
}

/**
 * Rolls the write back, answering `superseded`, when its object is no longer the version it read;
 * asked while the write holds the document's row, so a deletion or a newer version waits for it.
 */
async function rollBackUnlessCurrent<T>(
  stillCurrent: StillCurrent | undefined,
  superseded: T,
): Promise<void> {
  if (stillCurrent && !(await stillCurrent())) throw new RolledBack(superseded);
}

/**
 * Marks the document at `sourceUri` deleted and removes its chunks, in one transaction; false
 * when there was none, or it was deleted already. Ingestion calls it for an object's removal,
 * the documents API for a removal it was asked for (document-queries.ts).
 */
export function markDocumentDeleted(
  db: Database,
  tenantId: string,
  sourceUri: string,
): Promise<boolean> {
  return db.transaction(async (tx) => {
    const { rows } = await tx.query<{ id: string }>(
      `UPDATE documents SET status = 'deleted', chunk_count = 0, content_hash = NULL,
              attributes_hash = NULL, failure_reason = NULL, progress = NULL, updated_at = now()
        WHERE tenant_id = $1 AND source_uri = $2 AND status <> 'deleted'
        RETURNING id`,
      [tenantId, sourceUri],
    );
    const documentId = rows[0]?.id;
    if (!documentId) return false;
    await tx.query('DELETE FROM chunks WHERE document_id = $1', [documentId]);
    return true;
  });
}

/** Creates the repository over a pool or the embedded database. */
export function createDocumentRepository(db: Database): DocumentStore & RecoveryStore {
  return {
    async find(tenantId, sourceUri) {
      const { rows } = await db.query<DocumentRow>(
        `SELECT id, status, content_hash, embedding_model, ingestion_version, attributes_hash,
                source_updated_at, chunk_count, failure_reason, uploaded_by IS NOT NULL AS reserved
           FROM documents WHERE tenant_id = $1 AND source_uri = $2`,
        [tenantId, sourceUri],
      );
      const row = rows[0];
      if (!row) return null;
      return {
        id: row.id,
        status: row.status,
        contentHash: row.content_hash,
        embeddingModel: row.embedding_model,
        ingestionVersion: row.ingestion_version,
        attributesHash: row.attributes_hash,
        sourceUpdatedAt: row.source_updated_at,
        chunkCount: row.chunk_count,
        failureReason: row.failure_reason,
        reserved: row.reserved,
      };
    },

    async markProcessing(attrs) {
      const { rows } = await db.query<{ id: string }>(
        UPSERT_DOCUMENT(
          `, status = 'processing', failure_reason = NULL, lease_renewed_at = now()`,
          ', status, lease_renewed_at',
          `, 'processing', now()`,
        ),
        attributeParams(attrs),
      );
      if (rows[0]) return rows[0].id;
      // A newer version is already recorded; report its id without touching it.
      const existing = await this.find(attrs.tenantId, attrs.sourceUri);
      return existing?.id ?? '';
    },

    async replaceChunks(attrs, content, chunks, stillCurrent) {
      type Written = { documentId: string; written: boolean; duplicateOf?: DuplicateOf };
      return orRolledBack(() =>
        db.transaction(async (tx): Promise<Written> => {
          const { rows } = await tx.query<{ id: string }>(
            UPSERT_DOCUMENT(
              `, status = 'indexed', failure_reason = NULL, content_hash = $10, attributes_hash = $11,
               embedding_model = $12, chunk_count = $13, ingestion_version = $14,
               lease_renewed_at = NULL, lease_expiries = 0`,
              ', status, content_hash, attributes_hash, embedding_model, chunk_count, ingestion_version',
              `, 'indexed', $10, $11, $12, $13, $14`,
            ),
            [
              ...attributeParams(attrs),
              content.contentHash,
              content.attributesHash,
              content.embeddingModel,
              chunks.length,
              content.ingestionVersion,
            ],
          );
          const documentId = rows[0]?.id;
          if (!documentId) {
            const existing = await tx.query<{ id: string }>(
              'SELECT id FROM documents WHERE tenant_id = $1 AND source_uri = $2',
              [attrs.tenantId, attrs.sourceUri],
            );
            return { documentId: existing.rows[0]?.id ?? '', written: false };
          }
          await rollBackUnlessCurrent(stillCurrent, { documentId, written: false });
          // Writes of the same content in a tenant wait for each other here, so that of copies
          // indexed at once the first to commit is kept and the others see it.
          await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [
            `groundwork:content:${attrs.tenantId}:${content.contentHash}`,
          ]);
          const duplicateOf = await findDuplicate(tx, attrs, content.contentHash);
          if (duplicateOf) throw new RolledBack({ documentId, written: false, duplicateOf });
          await tx.query('DELETE FROM chunks WHERE document_id = $1', [documentId]);
          // Holding its lock on chunks, the write sees a model switch that completed while the
          // document was embedded (the swap waits for it otherwise): the old model's vectors must
          // not land in the new model's column. The retry embeds with the new model.
          const { rows: recorded } = await tx.query<{ model_id: string }>(
            'SELECT model_id FROM embedding_config WHERE singleton',
          );
          const live = recorded[0]?.model_id;
          if (live !== undefined && live !== content.embeddingModel)
            throw new Error(
              `The index switched to embedding model ${live} while this document was embedded with ${content.embeddingModel}`,
            );
          await insertChunks(tx, documentId, attrs, chunks);
          return { documentId, written: true };
        }),
      );
    },

    async countReindexAttempt(tenantId, sourceUri, step) {
      await db.query(
        `UPDATE documents SET lease_expiries = greatest(lease_expiries + $3, 0),
                updated_at = CASE WHEN $3 > 0 THEN now() ELSE updated_at END
          WHERE tenant_id = $1 AND source_uri = $2 AND status = 'indexed'`,
        [tenantId, sourceUri, step],
      );
    },

    async recordSourceDate(tenantId, sourceUri, sourceUpdatedAt) {
      await db.query(
        `UPDATE documents SET source_updated_at = $3
          WHERE tenant_id = $1 AND source_uri = $2
            AND (source_updated_at IS NULL OR source_updated_at < $3)`,
        [tenantId, sourceUri, sourceUpdatedAt],
      );
    },

    async updateAttributes(attrs, attributesHash) {
      await db.transaction(async (tx) => {
        const { rows } = await tx.query<{ id: string }>(
          UPSERT_DOCUMENT(`, attributes_hash = $10`, ', attributes_hash', ', $10'),
          [...attributeParams(attrs), attributesHash],
        );
        const documentId = rows[0]?.id;
        // The title is part of each chunk's full-text vector, so refresh it with the attributes.
        if (documentId) {
          await tx.query(
            `UPDATE chunks SET tenant_id = $2,
                    fts = to_tsvector($3::regconfig, coalesce($4::text, '') || E'\\n' || text)
              WHERE document_id = $1`,
            [documentId, attrs.tenantId, textSearchConfig(attrs.language), attrs.title],
          );
        }
      });
    },

    async markFailed(attrs, reason, stillCurrent?: StillCurrent) {
      return orRolledBack(() =>
        db.transaction(async (tx) => {
          const { rows } = await tx.query<{ id: string }>(
            UPSERT_DOCUMENT(
              `, status = 'failed', failure_reason = $10, chunk_count = 0, content_hash = NULL, attributes_hash = NULL`,
              ', status, failure_reason',
              `, 'failed', $10`,
            ),
            [...attributeParams(attrs), reason],
          );
          const documentId = rows[0]?.id ?? '';
          if (documentId) {
            await rollBackUnlessCurrent(stillCurrent, documentId);
            await tx.query('DELETE FROM chunks WHERE document_id = $1', [documentId]);
          }
          return documentId;
        }),
      );
    },

    async reportProgress(documentId, progress) {
      await db.query(
        `UPDATE documents SET progress = $2::jsonb, lease_renewed_at = now()
          WHERE id = $1 AND status = 'processing'`,
        [documentId, JSON.stringify(progress)],
      );
    },

    markDeleted: (tenantId, sourceUri) => markDocumentDeleted(db, tenantId, sourceUri),

    findDuplicate: (attrs, contentHash) => findDuplicate(db, attrs, contentHash),

    async listSources(sourceUriPrefix) {
      const { rows } = await db.query<{
        tenant_id: string;
        source_uri: string;
        status: SourceState['status'];
        failure_reason: string | null;
        source_updated_at: Date | null;
        updated_at: Date;
        ingestion_version: number;
        lease_expiries: number;
        reserved: boolean;
      }>(
        `SELECT tenant_id, source_uri, status, failure_reason, source_updated_at, updated_at,
                ingestion_version, lease_expiries, uploaded_by IS NOT NULL AS reserved
           FROM documents WHERE starts_with(source_uri, $1)`,
        [sourceUriPrefix],
      );
      return rows.map((r) => ({
        tenantId: r.tenant_id,
        sourceUri: r.source_uri,
        status: r.status,
        failureReason: r.failure_reason,
        sourceUpdatedAt: r.source_updated_at,
        updatedAt: r.updated_at,
        ingestionVersion: r.ingestion_version,
        reindexAttempts: r.status === 'indexed' ? r.lease_expiries : 0,
        reserved: r.reserved,
      }));
    },

    async claimExpiredLeases(renewedBefore, limit) {
      // Across tenants, through the migrations' SECURITY DEFINER function (row-level security,
      // migrations/0013); SKIP LOCKED inside it: two sweeps at once claim different documents.
      const { rows } = await db.query<{
        tenant_id: string;
        source_uri: string;
        lease_expiries: number;
      }>('SELECT * FROM gw_claim_expired_leases($1, $2)', [renewedBefore, limit]);
      return rows.map((r) => ({
        tenantId: r.tenant_id,
        sourceUri: r.source_uri,
        expiries: r.lease_expiries,
      }));
    },

    async listOutdated(version, maxAttempts, limit) {
      // Across tenants, through the migrations' SECURITY DEFINER function (migrations/0022, 0023).
      const { rows } = await db.query<{ tenant_id: string; source_uri: string }>(
        'SELECT * FROM gw_outdated_documents($1, $2, $3)',
        [version, maxAttempts, limit],
      );
      return rows.map((r) => ({ tenantId: r.tenant_id, sourceUri: r.source_uri }));
    },

    async failUnfinished(tenantId, sourceUri, reason) {
      return db.transaction(async (tx) => {
        const { rows } = await tx.query<{ id: string }>(
          `UPDATE documents SET status = 'failed', failure_reason = $3, progress = NULL,
                  chunk_count = 0, content_hash = NULL, attributes_hash = NULL,
                  lease_renewed_at = NULL, lease_expiries = 0, updated_at = now()
            WHERE tenant_id = $1 AND source_uri = $2
              AND status IN ('queued', 'processing', 'failed')
            RETURNING id`,
          [tenantId, sourceUri, reason],
        );
        const documentId = rows[0]?.id;
        if (!documentId) return null;
        await tx.query('DELETE FROM chunks WHERE document_id = $1', [documentId]);
        return documentId;
      });
    },
  };
}
