/**
 * Production entry of the `documents` Lambda: the /api/documents routes and seed 004's
 * POST /api/upload of the route table (lambdas/http/api-routes.ts)
 * behind the REST API's Cognito authorizer, one function for all of them, dispatched on the event's route key.
 *
 * Cold start: the environment is parsed once (failing with the variable's name), the S3 and
 * DynamoDB clients are created once, and the database pool opens on the first request.
 */
import { documentsRoutes } from './routes';
import { S3Client } from '@aws-sdk/client-s3';
// A namespace import lets esbuild tree-shake zod (a named `{ z }` import keeps all of it).
import * as z from '../core/zod';
import { lambdaEnvSchema, parseEnv } from '../adapters/aws/lambda-env';
import { databaseFromEnv, limiterFromEnv, limitsEnvShape } from '../adapters/aws/lambda-wiring';
import { createObservability, traceClient } from '../adapters/observability/powertools';
import { createDocumentCatalog } from '../adapters/postgres/document-queries';
import { createUploadBucket } from '../adapters/s3/upload-bucket';
import { createDocuments } from '../core/documents/documents';
import { apiDepsFromEnv, apiEnvShape } from '../http/api-env';
import { bindRoutes, dispatchByRouteKey, type RouteHandler } from '../http/route-dispatch';

/** The `documents` function's environment (set by the CDK app's grant helpers). */
export const documentsEnvSchema = z.extend(lambdaEnvSchema, {
  POWERTOOLS_SERVICE_NAME: z._default(z.string().check(z.minLength(1)), 'documents'),
  ...limitsEnvShape,
  ...apiEnvShape,
  /** The documents bucket: uploads are presigned for it, removals and retries act on it. */
  DOCUMENTS_BUCKET: z.string().check(z.minLength(3)),
  /** How long a presigned upload URL stays valid. */
  UPLOAD_URL_TTL_SECONDS: z._default(z.coerce.number().check(z.int(), z.gte(60), z.lte(3600)), 900),
});
export type DocumentsEnv = z.infer<typeof documentsEnvSchema>;

const env = parseEnv(documentsEnvSchema);
const observability = createObservability(env.POWERTOOLS_SERVICE_NAME);
const { logger, metrics, tracer } = observability;

const db = databaseFromEnv(env, tracer);
const limiter = limiterFromEnv(env, observability);
const documents = createDocuments({
  catalog: createDocumentCatalog(db),
  bucket: createUploadBucket(
    traceClient(tracer, new S3Client({ region: env.AWS_REGION })),
    env.DOCUMENTS_BUCKET,
  ),
  settings: {
    // The same limit the ingest function enforces.
    maxUploadBytes: env.MAX_OBJECT_BYTES,
    uploadUrlTtlSeconds: env.UPLOAD_URL_TTL_SECONDS,
    globalPublishers: env.PUBLISHING_TENANTS,
  },
});
/** The routes this function serves, by route key (from the route table). */
export const routes: Readonly<Record<string, RouteHandler>> = bindRoutes(
  'documents',
  documentsRoutes({
    logger,
    metrics,
    tracer,
    limiter,
    db,
    documents,
    ...apiDepsFromEnv(env),
  }),
);

export const handler = dispatchByRouteKey(routes, logger);
