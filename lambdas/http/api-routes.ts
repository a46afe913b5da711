/**
 * The API's routes in one table. Each route is declared once: method, path, the Lambda function
 * that serves it, its handler's name (the `route` dimension of its metrics and the key of its
 * handler in the function's route handlers), its quota class, whether the Cognito authorizer guards
 * it, the zod schemas its handler validates with, and the error statuses its contract names.
 * Derived from it: the API Gateway routes (lib/api-stack.ts), the local server's routes
 * (local/api.ts), each Lambda's dispatch (bindRoutes), the OpenAPI document
 * (lambdas/http/openapi.ts) and the dashboard's per-route metrics (lib/metrics.ts).
 */
import type * as z from '../core/zod';
import {
  createPromptRequestSchema,
  feedbackQuerySchema,
  feedbackResponseSchema,
  promptSchema,
  promptsResponseSchema,
  sourceTypePolicyRequestSchema,
  sourceTypePolicyResponseSchema,
  statsQuerySchema,
  statsResponseSchema,
} from '../admin/schema';
import {
  lexyConfigSchema,
  lexyConfigsResponseSchema,
  lexyCreateConfigRequestSchema,
  lexyFeedbackQuerySchema,
  lexyFeedbackResponseSchema,
  lexyStatsQuerySchema,
  lexyStatsResponseSchema,
} from '../admin/lexybrain-schema';
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
  deleteThreadResponseSchema,
  feedbackRequestSchema,
  listThreadsQuerySchema,
  messageFeedbackResponseSchema,
  listThreadsResponseSchema,
  threadResponseSchema,
} from '../rag-answer/schema';
import { chatMessageRequestSchema } from '../rag-answer/chat-schema';
import { harnessRequestSchema, harnessResponseSchema } from '../rag-answer/harness-schema';
import {
  lexybrainRagRequestSchema,
  lexybrainRagResponseSchema,
} from '../rag-answer/lexybrain-schema';
import { searchRequestSchema, searchResponseSchema } from '../rag-search/schema';
import { healthResponseSchema, usageResponseSchema } from '../usage/schema';
import {
  seedSearchQuerySchema,
  seedSearchResponseSchema,
  seedUploadResponseSchema,
  UPLOAD_FIELD,
} from '../seeds/search-upload-schema';
import { MAX_UPLOAD_BODY_BYTES } from './request-limits';

/** The Lambda functions behind the API (lib/ deploys one per name). */
export type ApiFunction = 'rag-search' | 'rag-answer' | 'usage' | 'documents' | 'admin';

/**
 * Statuses a route's contract gives where the error model's defaults differ: seed 001 answers
 * 400 for invalid input (not 422) and 500 when the embedding model or the database is down (not
 * 503); the body and its `retryable` are the same either way.
 */
export interface ErrorStatuses {
  readonly validation?: number;
  readonly unavailable?: number;
  /** A used-up monthly quota (the error model's 403 `quota_exceeded`). */
  readonly quotaExceeded?: number;
}

/** The statuses of seed 001 (POST /api/rag/search and POST /api/rag/answer). */
const SEED_001_STATUSES: ErrorStatuses = { validation: 400, unavailable: 500 };

/** The statuses of seed 004 (GET /api/search, POST /api/upload): 400, and 429 for the monthly cap. */
const SEED_004_STATUSES: ErrorStatuses = { validation: 400, quotaExceeded: 429 };

export interface ApiRoute {
  readonly method: 'GET' | 'POST' | 'DELETE';
  /** API Gateway syntax: `{name}` for a path parameter. */
  readonly path: string;
  /** The handler's name: its metric dimension `route`, unique across the table. */
  readonly name: string;
  /** The limiter's route class (limits config maps it to a quota kind). @default name */
  readonly quota?: string;
  /**
   * Other classes a request of this route may draw on instead, chosen by its handler from the
   * request (GET /api/search with `rag=true`: `answer`).
   */
  readonly otherQuotas?: readonly string[];
  /** Error statuses that differ from the error model's defaults. */
  readonly statuses?: ErrorStatuses;
  readonly function: ApiFunction;
  /** Guarded by the Cognito authorizer (else public: no token read). */
  readonly auth: boolean;
  /**
   * Only members of the admin group: others get 403 before the input is read
   * (request-lifecycle.ts), and the use case checks again.
   */
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
  /**
   * Answers with Server-Sent Events (streamed as produced): in AWS the route's integration streams
   * and the response-streaming function (lambdas/rag-answer/stream.ts) serves it, buffered or
   * streamed (lib/api-stack.ts); the embedded default streams it from its own server.
   */
  readonly streams?: boolean;
  /**
   * The body is a multipart/form-data upload of at most `maxBytes`, its file in the form field
   * `field`, instead of JSON (the server reads it with this limit, not MAX_BODY_BYTES).
   */
  readonly upload?: { readonly maxBytes: number; readonly field: string };
  /** Answers only with Server-Sent Events: what they are (no JSON response). */
  readonly events?: string;
  /** Error responses the route's contract adds (or describes more precisely), by status. */
  readonly errors?: Readonly<Record<number, string>>;
}

export const API_ROUTES: readonly ApiRoute[] = [
  {
    method: 'GET',
    path: '/api/health',
    name: 'health',
    function: 'usage',
    auth: false,
    tag: 'Operations',
    summary: 'Liveness: answers without touching the database',
    response: { status: 200, schema: healthResponseSchema, description: 'Alive' },
  },
  {
    method: 'POST',
    path: '/api/rag/search',
    name: 'search',
    quota: 'search',
    statuses: SEED_001_STATUSES,
    function: 'rag-search',
    auth: true,
    tag: 'Retrieval',
    summary: 'Ranked chunks with snippets and citations (hybrid, vector or keyword)',
    body: searchRequestSchema,
    response: { status: 200, schema: searchResponseSchema, description: 'The ranked results' },
  },
  {
    method: 'POST',
    path: '/api/rag/answer',
    name: 'answer',
    quota: 'answer',
    statuses: SEED_001_STATUSES,
    function: 'rag-answer',
    auth: true,
    tag: 'Answers',
    summary: 'A cited, confidence-gated answer (JSON, or Server-Sent Events with `stream: true`)',
    body: answerRequestSchema,
    response: { status: 200, schema: answerResponseSchema, description: 'The answer' },
    streams: true,
  },
  {
    method: 'POST',
    path: '/api/chat/conversations/{conversationId}/messages',
    name: 'chat-messages',
    quota: 'answer',
    function: 'rag-answer',
    auth: true,
    tag: 'Chat',
    summary:
      'A chat message answered with memory of your similar past messages, streamed (the conversation is a thread, created on first use)',
    body: chatMessageRequestSchema,
    response: { status: 200, description: 'The answer as Server-Sent Events' },
    streams: true,
    events:
      '`data: {"type":"chunk","text":"..."}` events with the answer text, then one `data: {"type":"complete","messageId":"..."}`; a failure after the first event is `data: {"type":"error","error":{"code","message","retryable"}}`',
  },
  {
    method: 'POST',
    path: '/api/lexybrain/rag',
    name: 'lexybrain-rag',
    quota: 'answer',
    function: 'rag-answer',
    auth: true,
    tag: 'Answers',
    summary:
      'Ask LexyBrain (seed 000): a chat answer in one of five capabilities, with sources, references, model usage and flags',
    body: lexybrainRagRequestSchema,
    response: { status: 200, schema: lexybrainRagResponseSchema, description: 'The answer' },
    errors: {
      500: '`generation_failed`: the answer could not be produced',
      503: '`feature_disabled` (LEXYBRAIN_RAG_ENABLED is off), `cost_cap_reached` (a daily cost cap, retryable) or `unavailable` (a dependency is down, retryable)',
    },
  },
  {
    method: 'GET',
    path: '/api/threads',
    name: 'threads.list',
    function: 'rag-answer',
    auth: true,
    tag: 'Answers',
    summary:
      "The caller's threads with `message_count` and `last_message_at`, most recent message first",
    query: listThreadsQuerySchema,
    response: { status: 200, schema: listThreadsResponseSchema, description: 'The threads' },
  },
  {
    method: 'GET',
    path: '/api/threads/{id}',
    name: 'threads.get',
    function: 'rag-answer',
    auth: true,
    tag: 'Answers',
    summary: "One of the caller's threads with its messages in order",
    response: { status: 200, schema: threadResponseSchema, description: 'The thread' },
  },
  {
    method: 'DELETE',
    path: '/api/threads/{id}',
    name: 'threads.delete',
    function: 'rag-answer',
    auth: true,
    tag: 'Answers',
    summary: "Deletes one of the caller's threads and its messages (soft: gone from every read)",
    response: { status: 200, schema: deleteThreadResponseSchema, description: 'The deletion' },
  },
  {
    method: 'POST',
    path: '/api/messages/{id}/feedback',
    name: 'feedback',
    function: 'rag-answer',
    auth: true,
    tag: 'Answers',
    summary: 'Rates an answer (one rating per user and message; rating again updates it)',
    body: feedbackRequestSchema,
    response: { status: 200, schema: messageFeedbackResponseSchema, description: 'Recorded' },
  },
  {
    method: 'GET',
    path: '/api/usage',
    name: 'usage',
    function: 'usage',
    auth: true,
    tag: 'Operations',
    summary: "The caller's plan, quotas and rate-limit window",
    response: { status: 200, schema: usageResponseSchema, description: 'Usage this month' },
  },
  {
    method: 'POST',
    path: '/api/documents',
    name: 'documents.create',
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
    path: '/api/documents',
    name: 'documents.list',
    function: 'documents',
    auth: true,
    tag: 'Documents',
    summary: 'The documents the caller can see, paged',
    query: listDocumentsQuerySchema,
    response: { status: 200, schema: listDocumentsResponseSchema, description: 'One page' },
  },
  {
    method: 'GET',
    path: '/api/documents/{id}',
    name: 'documents.get',
    function: 'documents',
    auth: true,
    tag: 'Documents',
    summary: 'Status, failure reason, chunk count, timestamps and progress of one document',
    response: { status: 200, schema: documentDetailSchema, description: 'The document' },
  },
  {
    method: 'DELETE',
    path: '/api/documents/{id}',
    name: 'documents.delete',
    function: 'documents',
    auth: true,
    tag: 'Documents',
    summary: 'Removes the object; its removal event removes the chunks',
    response: { status: 202, schema: documentDetailSchema, description: 'Removal accepted' },
  },
  {
    method: 'POST',
    path: '/api/documents/{id}/retry',
    name: 'documents.retry',
    function: 'documents',
    auth: true,
    tag: 'Documents',
    summary: 'Indexes a failed document again',
    response: { status: 202, schema: documentDetailSchema, description: 'Queued again' },
  },
  {
    method: 'GET',
    path: '/api/documents/{id}/passage',
    name: 'documents.passage',
    function: 'documents',
    auth: true,
    tag: 'Documents',
    summary: 'The chunks covering a character range of the document (what a citation points at)',
    query: passageQuerySchema,
    response: { status: 200, schema: passageResponseSchema, description: 'The passage' },
  },
  {
    method: 'GET',
    path: '/api/admin/stats',
    name: 'admin.stats',
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
    path: '/api/admin/feedback',
    name: 'admin.feedback',
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
    path: '/api/admin/prompts',
    name: 'admin.prompts.list',
    function: 'admin',
    auth: true,
    admin: true,
    tag: 'Admin',
    summary: "The built-in prompt configurations and the tenant's own versions",
    response: { status: 200, schema: promptsResponseSchema, description: 'Every version' },
  },
  {
    method: 'POST',
    path: '/api/admin/prompts',
    name: 'admin.prompts.create',
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
    path: '/api/admin/prompts/{id}/activate',
    name: 'admin.prompts.activate',
    function: 'admin',
    auth: true,
    admin: true,
    tag: 'Admin',
    summary: "Makes a version the tenant's active one for its profile",
    response: { status: 200, schema: promptSchema, description: 'The active version' },
  },
  {
    method: 'GET',
    path: '/api/admin/source-policy',
    name: 'admin.source-policy.get',
    function: 'admin',
    auth: true,
    admin: true,
    tag: 'Admin',
    summary: "The tenant's source-type policy (permissive by default: every type)",
    response: {
      status: 200,
      schema: sourceTypePolicyResponseSchema,
      description: 'The policy in force',
    },
  },
  {
    method: 'POST',
    path: '/api/admin/source-policy',
    name: 'admin.source-policy.set',
    function: 'admin',
    auth: true,
    admin: true,
    tag: 'Admin',
    summary: "Sets the tenant's source-type policy, which retrieval applies for every reader",
    body: sourceTypePolicyRequestSchema,
    response: { status: 200, schema: sourceTypePolicyResponseSchema, description: 'The policy' },
  },
  {
    method: 'POST',
    path: '/api/admin/harness',
    name: 'admin.harness',
    function: 'rag-answer',
    auth: true,
    admin: true,
    tag: 'Admin',
    summary:
      'What an answer to a question would be made of (chunks, context, evidence, gate, prompt), without calling the LLM',
    body: harnessRequestSchema,
    response: { status: 200, schema: harnessResponseSchema, description: 'The preparation' },
  },
  {
    method: 'GET',
    path: '/api/search',
    name: 'api-search',
    // Results only; `rag=true` draws on the answer quota (lambdas/seeds/search.ts).
    quota: 'search',
    otherQuotas: ['answer'],
    statuses: SEED_004_STATUSES,
    function: 'rag-answer',
    auth: true,
    tag: 'Seed 004',
    summary:
      'Ranked chunks (`results`), or with `rag=true` an answer with its retrieved chunks, prompt, steps, token usage and quota (`rag`)',
    query: seedSearchQuerySchema,
    response: { status: 200, schema: seedSearchResponseSchema, description: 'The results' },
  },
  {
    method: 'POST',
    path: '/api/upload',
    name: 'api-upload',
    statuses: SEED_004_STATUSES,
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
  },
  {
    method: 'POST',
    path: '/api/admin/prompts/{id}/deactivate',
    name: 'admin.prompts.deactivate',
    function: 'admin',
    auth: true,
    admin: true,
    tag: 'Admin',
    summary: "Deactivates one of the tenant's own versions; its profile falls back to the default",
    response: { status: 200, schema: promptSchema, description: 'The inactive version' },
  },
  // Seed 000's admin routes (lambdas/admin/lexybrain-handler.ts), over the same use cases.
  {
    method: 'GET',
    path: '/api/admin/lexybrain/rag/stats',
    name: 'lexybrain.admin.stats',
    function: 'admin',
    auth: true,
    admin: true,
    tag: 'Admin (seed 000)',
    summary: 'Threads, messages, active users, capability distribution and quota use by plan',
    query: lexyStatsQuerySchema,
    response: { status: 200, schema: lexyStatsResponseSchema, description: 'Statistics' },
  },
  {
    method: 'GET',
    path: '/api/admin/lexybrain/rag/feedback',
    name: 'lexybrain.admin.feedback',
    function: 'admin',
    auth: true,
    admin: true,
    tag: 'Admin (seed 000)',
    summary: 'User feedback review (`feedback_text`), newest first, paged',
    query: lexyFeedbackQuerySchema,
    response: { status: 200, schema: lexyFeedbackResponseSchema, description: 'One page' },
  },
  {
    method: 'GET',
    path: '/api/admin/lexybrain/configs',
    name: 'lexybrain.admin.configs.list',
    function: 'admin',
    auth: true,
    admin: true,
    tag: 'Admin (seed 000)',
    summary: "Prompt configs: the built-in defaults and the tenant's versions",
    response: { status: 200, schema: lexyConfigsResponseSchema, description: 'Every version' },
  },
  {
    method: 'POST',
    path: '/api/admin/lexybrain/configs',
    name: 'lexybrain.admin.configs.create',
    function: 'admin',
    auth: true,
    admin: true,
    tag: 'Admin (seed 000)',
    summary: "Creates the tenant's next version of a prompt config",
    body: lexyCreateConfigRequestSchema,
    response: { status: 201, schema: lexyConfigSchema, description: 'The new version' },
  },
  {
    method: 'POST',
    path: '/api/admin/lexybrain/configs/{id}/activate',
    name: 'lexybrain.admin.configs.activate',
    function: 'admin',
    auth: true,
    admin: true,
    tag: 'Admin (seed 000)',
    summary: "Makes a version the tenant's active one for its type",
    response: { status: 200, schema: lexyConfigSchema, description: 'The active version' },
  },
  {
    method: 'POST',
    path: '/api/admin/lexybrain/configs/{id}/deactivate',
    name: 'lexybrain.admin.configs.deactivate',
    function: 'admin',
    auth: true,
    admin: true,
    tag: 'Admin (seed 000)',
    summary: "Deactivates one of the tenant's own versions; its type falls back to the default",
    response: { status: 200, schema: lexyConfigSchema, description: 'The inactive version' },
  },
];

/** The table entry named `name`. @throws Error when there is none (a wiring mistake). */
export function apiRoute(name: string): ApiRoute {
  const route = API_ROUTES.find((r) => r.name === name);
  if (!route) throw new Error(`No API route named ${name}`);
  return route;
}

/** API Gateway's route key: `POST /api/rag/search`. */
export function routeKey(route: Pick<ApiRoute, 'method' | 'path'>): string {
  return `${route.method} ${route.path}`;
}
