/**
 * The HTTP API's routes in one table: method, path, the Lambda function that serves it, whether
 * the JWT authorizer guards it, and the zod schemas its handler validates with. The OpenAPI
 * document is generated from this table (lambdas/http/openapi.ts), and tests check that the
 * local server and the CDK API serve exactly these routes.
 */
import type * as z from '../core/zod';
import {
  createPromptRequestSchema,
  feedbackQuerySchema,
  feedbackResponseSchema,
  promptSchema,
  promptsResponseSchema,
  statsQuerySchema,
  statsResponseSchema,
} from '../admin/schema';
import {
  createDocumentRequestSchema,
  createDocumentResponseSchema,
  documentDetailSchema,
  listDocumentsQuerySchema,
  listDocumentsResponseSchema,
  passageQuerySchema,
  passageResponseSchema,
} from '../documents/schema';
import {
  answerRequestSchema,
  answerResponseSchema,
  feedbackRequestSchema,
  listThreadsQuerySchema,
} from '../rag-answer/schema';
import { searchRequestSchema, searchResponseSchema } from '../rag-search/schema';
import { usageResponseSchema } from '../usage/schema';
import {
  SEED_ERROR_STATUS,
  seedSearchQuerySchema,
  seedSearchResponseSchema,
  seedUploadResponseSchema,
  UPLOAD_FIELD,
} from '../seeds/search-upload-schema';
import { MAX_UPLOAD_BODY_BYTES } from './request-limits';

/** The Lambda functions behind the API (lib/ deploys one per name). */
export type ApiFunction = 'rag-search' | 'rag-answer' | 'usage' | 'documents' | 'admin';

export interface ApiRoute {
  readonly method: 'GET' | 'POST' | 'DELETE';
  /** API Gateway syntax: `{name}` for a path parameter. */
  readonly path: string;
  readonly function: ApiFunction;
  /** Guarded by the Cognito JWT authorizer. */
  readonly auth: boolean;
  /** Only members of the admin group (checked by the handler). */
  readonly admin?: boolean;
  readonly tag: string;
  readonly summary: string;
  readonly body?: z.ZodMiniType;
  readonly query?: z.ZodMiniType;
  readonly response: {
    readonly status: number;
    readonly schema?: z.ZodMiniType;
    readonly description: string;
  };
  /** Also answers with Server-Sent Events (`"stream": true` in the body). */
  readonly streams?: boolean;
  /**
   * The body is a multipart/form-data upload of at most `maxBytes`, its file in the form field
   * `field`, instead of JSON (the server reads it with this limit, not MAX_BODY_BYTES).
   */
  readonly upload?: { readonly maxBytes: number; readonly field: string };
  /** Statuses this route answers for some error codes instead of the error model's own. */
  readonly errorStatus?: Readonly<Record<string, number>>;
}

export const API_ROUTES: readonly ApiRoute[] = [
  {
    method: 'GET',
    path: '/health',
    function: 'usage',
    auth: false,
    tag: 'Operations',
    summary: 'Liveness: answers without touching the database',
    response: { status: 200, description: '`{ "status": "ok" }`' },
  },
  {
    method: 'POST',
    path: '/search',
    function: 'rag-search',
    auth: true,
    tag: 'Retrieval',
    summary: 'Ranked chunks with snippets and citations (hybrid, vector or keyword)',
    body: searchRequestSchema,
    response: { status: 200, schema: searchResponseSchema, description: 'The ranked results' },
  },
  {
    method: 'POST',
    path: '/answer',
    function: 'rag-answer',
    auth: true,
    tag: 'Answers',
    summary: 'A cited, confidence-gated answer (JSON, or Server-Sent Events with `stream: true`)',
    body: answerRequestSchema,
    response: { status: 200, schema: answerResponseSchema, description: 'The answer' },
    streams: true,
  },
  {
    method: 'GET',
    path: '/threads',
    function: 'rag-answer',
    auth: true,
    tag: 'Answers',
    summary: "The caller's threads, most recent first",
    query: listThreadsQuerySchema,
    response: { status: 200, description: '`{ "threads": [...] }`' },
  },
  {
    method: 'GET',
    path: '/threads/{id}',
    function: 'rag-answer',
    auth: true,
    tag: 'Answers',
    summary: "One of the caller's threads with its messages in order",
    response: { status: 200, description: '`{ "thread": {...}, "messages": [...] }`' },
  },
  {
    method: 'DELETE',
    path: '/threads/{id}',
    function: 'rag-answer',
    auth: true,
    tag: 'Answers',
    summary: "Archives one of the caller's threads",
    response: { status: 200, description: 'The archived thread' },
  },
  {
    method: 'POST',
    path: '/messages/{id}/feedback',
    function: 'rag-answer',
    auth: true,
    tag: 'Answers',
    summary: 'Rates an answer (one rating per user and message; rating again updates it)',
    body: feedbackRequestSchema,
    response: { status: 200, description: 'The recorded feedback' },
  },
  {
    method: 'GET',
    path: '/usage',
    function: 'usage',
    auth: true,
    tag: 'Operations',
    summary: "The caller's plan, quotas and rate-limit window",
    response: { status: 200, schema: usageResponseSchema, description: 'Usage this month' },
  },
  {
    method: 'POST',
    path: '/documents',
    function: 'documents',
    auth: true,
    tag: 'Documents',
    summary: "A presigned PUT for a new document under the caller's tenant prefix",
    body: createDocumentRequestSchema,
    response: {
      status: 201,
      schema: createDocumentResponseSchema,
      description: 'The queued document and where to PUT the file',
    },
  },
  {
    method: 'GET',
    path: '/documents',
    function: 'documents',
    auth: true,
    tag: 'Documents',
    summary: 'The documents the caller can see, paged',
    query: listDocumentsQuerySchema,
    response: { status: 200, schema: listDocumentsResponseSchema, description: 'One page' },
  },
  {
    method: 'GET',
    path: '/documents/{id}',
    function: 'documents',
    auth: true,
    tag: 'Documents',
    summary: 'Status, failure reason, chunk count, timestamps and progress of one document',
    response: { status: 200, schema: documentDetailSchema, description: 'The document' },
  },
  {
    method: 'DELETE',
    path: '/documents/{id}',
    function: 'documents',
    auth: true,
    tag: 'Documents',
    summary: 'Removes the object; its removal event removes the chunks',
    response: { status: 202, schema: documentDetailSchema, description: 'Removal accepted' },
  },
  {
    method: 'POST',
    path: '/documents/{id}/retry',
    function: 'documents',
    auth: true,
    tag: 'Documents',
    summary: 'Indexes a failed document again',
    response: { status: 202, schema: documentDetailSchema, description: 'Queued again' },
  },
  {
    method: 'GET',
    path: '/documents/{id}/passage',
    function: 'documents',
    auth: true,
    tag: 'Documents',
    summary: 'The chunks covering a character range of the document (what a citation points at)',
    query: passageQuerySchema,
    response: { status: 200, schema: passageResponseSchema, description: 'The passage' },
  },
  {
    method: 'GET',
    path: '/admin/stats',
    function: 'admin',
    auth: true,
    admin: true,
    tag: 'Admin',
    summary: "The tenant's documents, conversations, answers and quota use by plan",
    query: statsQuerySchema,
    response: { status: 200, schema: statsResponseSchema, description: 'Statistics' },
  },
  {
    method: 'GET',
    path: '/admin/feedback',
    function: 'admin',
    auth: true,
    admin: true,
    tag: 'Admin',
    summary: "The tenant's answer feedback, newest first, paged",
    query: feedbackQuerySchema,
    response: { status: 200, schema: feedbackResponseSchema, description: 'One page' },
  },
  {
    method: 'GET',
    path: '/admin/prompts',
    function: 'admin',
    auth: true,
    admin: true,
    tag: 'Admin',
    summary: "The built-in prompt configurations and the tenant's own versions",
    response: { status: 200, schema: promptsResponseSchema, description: 'Every version' },
  },
  {
    method: 'POST',
    path: '/admin/prompts',
    function: 'admin',
    auth: true,
    admin: true,
    tag: 'Admin',
    summary: "Creates the tenant's next version of a prompt configuration",
    body: createPromptRequestSchema,
    response: { status: 201, schema: promptSchema, description: 'The new version' },
  },
  {
    method: 'POST',
    path: '/admin/prompts/{id}/activate',
    function: 'admin',
    auth: true,
    admin: true,
    tag: 'Admin',
    summary: "Makes a version the tenant's active one for its profile",
    response: { status: 200, schema: promptSchema, description: 'The active version' },
  },
  {
    method: 'GET',
    path: '/api/search',
    function: 'rag-answer',
    auth: true,
    tag: 'Seed 004',
    summary:
      'Ranked chunks (`results`), or with `rag=true` an answer with its retrieved chunks, prompt, steps, token usage and quota (`rag`)',
    query: seedSearchQuerySchema,
    response: { status: 200, schema: seedSearchResponseSchema, description: 'The results' },
    errorStatus: SEED_ERROR_STATUS,
  },
  {
    method: 'POST',
    path: '/api/upload',
    function: 'documents',
    auth: true,
    tag: 'Seed 004',
    summary:
      "A file sent as multipart/form-data (field `file`), stored under the caller's tenant prefix and indexed",
    response: {
      status: 202,
      schema: seedUploadResponseSchema,
      description: 'The document, queued for indexing',
    },
    upload: { maxBytes: MAX_UPLOAD_BODY_BYTES, field: UPLOAD_FIELD },
    errorStatus: SEED_ERROR_STATUS,
  },
];
