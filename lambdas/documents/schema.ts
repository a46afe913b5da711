/** The /documents routes: request and response contracts (also the source of the OpenAPI document). */
import * as z from 'zod';

const sourceType = z.string().regex(/^[a-z][a-z0-9_-]{0,31}$/);
const attributeName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_.-]{0,99}$/, 'use letters, digits, "_", "." and "-"');

export const createDocumentRequestSchema = z
  .object({
    /** The file's name; only its last path segment is kept. */
    filename: z.string().min(1).max(255),
    /** The type the PUT will send (signed: S3 refuses another). */
    content_type: z.string().min(1).max(255),
    /** The exact size the PUT will send (signed: S3 refuses another). */
    size_bytes: z.number().int().min(1),
    /** `tenant` (default): everyone in the tenant; `user`: only you. */
    visibility: z.enum(['tenant', 'user']).default('tenant'),
    title: z.string().trim().min(1).max(500).optional(),
    source_type: sourceType.optional(),
    language: z
      .string()
      .regex(/^[a-z]{2,3}(?:[-_][a-z0-9]{2,8})?$/)
      .optional(),
    /** Filterable attributes, written as the Bedrock-KB metadata sidecar. */
    metadata: z
      .record(
        attributeName,
        z.union([
          z.string().max(1000),
          z.number(),
          z.boolean(),
          z.array(z.string().max(200)).max(50),
        ]),
      )
      .refine((m) => Object.keys(m).length <= 50, 'at most 50 attributes')
      .optional(),
  })
  .strict();
export type CreateDocumentRequest = z.infer<typeof createDocumentRequestSchema>;

export const listDocumentsQuerySchema = z
  .object({
    status: z.enum(['queued', 'processing', 'indexed', 'failed', 'deleted']).optional(),
    source_type: sourceType.optional(),
    /** Only sources whose URI starts with this (e.g. `s3://bucket/tenants/acme/reports/`). */
    prefix: z.string().min(1).max(1024).optional(),
    limit: z.coerce.number().int().min(1).max(100).default(50),
    cursor: z.string().max(2048).optional(),
  })
  .strict();

export const passageQuerySchema = z
  .object({
    start: z.coerce.number().int().min(0),
    end: z.coerce.number().int().min(1),
  })
  .strict();

export const documentSchema = z.object({
  id: z.string(),
  source_uri: z.string(),
  title: z.string().nullable(),
  source_type: z.string(),
  language: z.string(),
  visibility: z.enum(['user', 'tenant', 'global']),
  status: z.enum(['queued', 'processing', 'indexed', 'failed', 'deleted']),
  failure_reason: z.string().nullable(),
  chunk_count: z.number().int(),
  created_at: z.string(),
  updated_at: z.string(),
  source_updated_at: z.string().nullable(),
});

export const documentDetailSchema = documentSchema.extend({
  metadata: z.record(z.string(), z.unknown()),
  /** While processing: how far embedding has got. */
  progress: z
    .object({
      stage: z.string(),
      chunks_total: z.number().int(),
      chunks_embedded: z.number().int(),
    })
    .nullable(),
  uploaded_by: z.string().nullable(),
});
export type DocumentDetail = z.infer<typeof documentDetailSchema>;

export const listDocumentsResponseSchema = z.object({
  documents: z.array(documentSchema),
  next_cursor: z.string().nullable(),
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
      index: z.number().int(),
      start: z.number().int(),
      end: z.number().int(),
      text: z.string(),
    }),
  ),
});
