/** The /api/documents routes: request and response contracts (also the source of the OpenAPI document). */
import * as z from '../core/zod';
import { queryInteger } from '../http/query-params';

const sourceType = z.string().check(z.regex(/^[a-z][a-z0-9_-]{0,31}$/));
const attributeName = z
  .string()
  .check(z.regex(/^[A-Za-z_][A-Za-z0-9_.-]{0,99}$/, 'use letters, digits, "_", "." and "-"'));
const attributeValue = z.union([
  z.string().check(z.maxLength(1000)),
  z.number(),
  z.boolean(),
  z.array(z.string().check(z.maxLength(200))).check(z.maxLength(50)),
]);
const attributes = z
  .record(attributeName, attributeValue)
  .check(z.refine((m) => Object.keys(m).length <= 50, 'at most 50 attributes'));

export const createDocumentRequestSchema = z.strictObject({
  /** The file's name; only its last path segment is kept. */
  filename: z.string().check(z.minLength(1), z.maxLength(255)),
  /** The type the PUT will send (signed: S3 refuses another). */
  content_type: z.string().check(z.minLength(1), z.maxLength(255)),
  /** The exact size the PUT will send (signed: S3 refuses another). */
  size_bytes: z.int().check(z.gte(1)),
  /**
   * `tenant` (default): everyone in the tenant; `user`: only you; `global`: every tenant (an admin
   * of a publishing tenant only).
   */
  visibility: z._default(z.enum(['tenant', 'user', 'global']), 'tenant'),
  title: z.optional(z.string().check(z.trim(), z.minLength(1), z.maxLength(500))),
  source_type: z.optional(sourceType),
  language: z.optional(z.string().check(z.regex(/^[a-z]{2,3}(?:[-_][a-z0-9]{2,8})?$/))),
  /**
   * Filterable attributes, written as the Bedrock-KB metadata sidecar. Reserved names (owner,
   * owner_user_id, visibility, tenant, tenant_id, org_id, uploaded_by, title, source_type,
   * language...) are refused: the server sets them.
   */
  metadata: z.optional(attributes),
});

export const listDocumentsQuerySchema = z.strictObject({
  status: z.optional(z.enum(['queued', 'processing', 'indexed', 'failed', 'deleted'])),
  source_type: z.optional(sourceType),
  /** Only sources whose URI starts with this (e.g. `s3://bucket/tenants/acme/reports/`). */
  prefix: z.optional(z.string().check(z.minLength(1), z.maxLength(1024))),
  limit: z._default(queryInteger(1, 100), 50),
  cursor: z.optional(z.string().check(z.maxLength(2048))),
});

/** Character offsets are PostgreSQL `int`s. */
const MAX_OFFSET = 2_147_483_647;

export const passageQuerySchema = z.strictObject({
  start: queryInteger(0, MAX_OFFSET),
  end: queryInteger(1, MAX_OFFSET),
});

const documentSchema = z.object({
  id: z.string(),
  source_uri: z.string(),
  title: z.nullable(z.string()),
  source_type: z.string(),
  language: z.string(),
  visibility: z.enum(['user', 'tenant', 'global']),
  status: z.enum(['queued', 'processing', 'indexed', 'failed', 'deleted']),
  failure_reason: z.nullable(z.string()),
  chunk_count: z.int(),
  created_at: z.string(),
  updated_at: z.string(),
  source_updated_at: z.nullable(z.string()),
});

export type DocumentSummary = z.infer<typeof documentSchema>;

export const documentDetailSchema = z.extend(documentSchema, {
  metadata: z.record(z.string(), z.unknown()),
  /** While processing: how far embedding has got. */
  progress: z.nullable(
    z.object({
      stage: z.string(),
      chunks_total: z.int(),
      chunks_embedded: z.int(),
    }),
  ),
  uploaded_by: z.nullable(z.string()),
});
export type DocumentDetail = z.infer<typeof documentDetailSchema>;

export const listDocumentsResponseSchema = z.object({
  documents: z.array(documentSchema),
  next_cursor: z.nullable(z.string()),
});

export const createDocumentResponseSchema = z.object({
  document: documentDetailSchema,
  upload: z.object({
    url: z.string(),
    method: z.literal('PUT'),
    /** Send exactly these headers (and the exact size): they are signed. */
    headers: z.record(z.string(), z.string()),
    expires_at: z.string(),
  }),
});

export const passageResponseSchema = z.object({
  document: documentDetailSchema,
  chunks: z.array(
    z.object({
      index: z.int(),
      start: z.int(),
      end: z.int(),
      text: z.string(),
    }),
  ),
});
