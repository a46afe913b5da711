/**
 * Grant helpers: each grants a function the least access a handler needs and sets the
 * environment variables that handler reads, so that the two never drift apart.
 */
import { Stack } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import type { GroundworkFunction } from './constructs/groundwork-function';
import type { ServerlessDatabase } from './constructs/serverless-database';
import { TENANT_USAGE_INDEX } from '../lambdas/adapters/dynamodb/limit-store';
import {
  bedrockModelIds,
  embeddingEnvironment,
  modelSecretArns,
  rerankEnvironment,
  type ModelsConfig,
} from './models';
import { acknowledgeWildcardResource } from './nag';

/**
 * Database access: read on one login's secret, membership of the database clients' security
 * group (the only way to the proxy's port), and `DB_SECRET_ARN`, `DB_HOST` (the proxy endpoint,
 * which overrides the host stored in the secret), `DB_NAME`. Functions log in as the application
 * (DML only); only the migration function logs in as the owner, and reads the application's
 * secret too (`APP_DB_SECRET_ARN`) to create its role. The owner connects to the cluster
 * directly (its own security group), not through the proxy: on a first deploy the proxy's target
 * can still be registering when the migration runs.
 *
 * `reads: true` (the functions that search: rag-search and both answer functions) also sets
 * `DB_READ_HOST` when the database has readers: the endpoint their search statements use
 * (lambdas/adapters/postgres/databases.ts says which reads go there). Same secret, same group.
 */
export function grantDatabase(
  fn: GroundworkFunction,
  db: ServerlessDatabase,
  options: { readonly as?: 'application' | 'owner'; readonly reads?: boolean } = {},
): void {
  const owner = options.as === 'owner';
  const secret = owner ? db.secret : db.appSecret;
  secret.grantRead(fn);
  fn.function.connections.addSecurityGroup(owner ? db.ownerSecurityGroup : db.clientSecurityGroup);
  fn.addEnvironment('DB_SECRET_ARN', secret.secretArn);
  if (owner) {
    db.appSecret.grantRead(fn);
    fn.addEnvironment('APP_DB_SECRET_ARN', db.appSecret.secretArn);
  }
  const direct = owner || !db.proxy;
  fn.addEnvironment('DB_HOST', direct ? db.clusterEndpoint : db.endpoint);
  fn.addEnvironment('DB_NAME', db.databaseName);
  if (options.reads && !owner && db.readEndpoint)
    fn.addEnvironment('DB_READ_HOST', db.readEndpoint);
  // TLS to the cluster itself: its certificate chains to the RDS CA that the Node.js runtime
  // loads only when asked (RDS Proxy's ACM certificate chains to a public root).
  if (direct) fn.addEnvironment('NODE_EXTRA_CA_CERTS', '/var/runtime/ca-cert.pem');
}

/**
 * The limiter's table: GetItem, BatchGetItem and UpdateItem (all the limit store does) on the
 * table alone, and `LIMITS_TABLE`.
 */
export function grantLimitsTable(
  fn: GroundworkFunction,
  table: dynamodb.ITable,
  options: { readonly tenantUsage?: boolean } = {},
): void {
  fn.role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:UpdateItem'],
      resources: [table.tableArn],
    }),
  );
  if (options.tenantUsage) {
    // The admin statistics read a tenant's counters through this one index.
    fn.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['dynamodb:Query'],
        resources: [`${table.tableArn}/index/${TENANT_USAGE_INDEX}`],
      }),
    );
  }
  fn.addEnvironment('LIMITS_TABLE', table.tableName);
}

/**
 * A customer managed policy beside `bucket` (in its stack, so that its ARNs resolve there and
 * cdk-nag findings on it are named by them), created once per id; the role that uses it
 * references it across stacks, never the other way round.
 */
function bucketPolicy(
  bucket: s3.IBucket,
  id: string,
  statements: iam.PolicyStatement[],
  wildcard: { resource: string; reason: string },
): iam.ManagedPolicy {
  const existing = bucket.node.tryFindChild(id);
  if (existing) return existing as iam.ManagedPolicy;
  const policy = new iam.ManagedPolicy(bucket, id, { statements });
  acknowledgeWildcardResource(policy, wildcard.resource, wildcard.reason);
  return policy;
}

/**
 * ListBucket on the bucket: S3 answers a read of a key that does not exist with 404 only to a
 * caller that may list the bucket, and with 403 to any other, so without it a missing object
 * cannot be told from a refused one (docs/decisions/0159-documents-api-may-list-the-bucket.md).
 */
function missingKeysReadAsNotFound(bucket: s3.IBucket): iam.PolicyStatement {
  return new iam.PolicyStatement({ actions: ['s3:ListBucket'], resources: [bucket.bucketArn] });
}

/**
 * What the documents API does to the bucket, under `tenants/` only: presigns PUTs and writes
 * sidecars (PutObject), removes objects (DeleteObject), and re-announces a failed document by
 * copying it onto itself (HeadObject, so GetObject, then PutObject), with ListBucket so that a
 * re-announced object that is gone reads as 404 (`object_missing`).
 */
export function grantDocumentsWrite(fn: GroundworkFunction, bucket: s3.IBucket): void {
  const objects = bucket.arnForObjects('tenants/*');
  fn.role.addManagedPolicy(
    bucketPolicy(
      bucket,
      'WritePolicy',
      [
        new iam.PolicyStatement({
          actions: ['s3:PutObject', 's3:GetObject', 's3:DeleteObject'],
          resources: [objects],
        }),
        missingKeysReadAsNotFound(bucket),
      ],
      {
        resource: objects,
        reason:
          "The documents API writes under any tenant's prefix of the one documents bucket; the handler derives the prefix from the verified token.",
      },
    ),
  );
  fn.addEnvironment('DOCUMENTS_BUCKET', bucket.bucketName);
}

/**
 * Reading documents for ingestion: GetObject on the bucket's objects, and ListBucket on the
 * bucket so that a removed object reads as 404 (the ObjectRemoved path), not 403.
 */
export function grantDocumentsRead(fn: GroundworkFunction, bucket: s3.IBucket): void {
  const objects = bucket.arnForObjects('*');
  fn.role.addManagedPolicy(
    bucketPolicy(
      bucket,
      'ReadPolicy',
      [
        new iam.PolicyStatement({ actions: ['s3:GetObject'], resources: [objects] }),
        missingKeysReadAsNotFound(bucket),
      ],
      {
        resource: objects,
        reason:
          'Ingestion reads any document of the one documents bucket: object keys are not known in advance.',
      },
    ),
  );
}

/** Cross-region inference profile prefixes (`us.anthropic...`), which route to several regions. */
const PROFILE_PREFIX = /^(us|eu|apac|us-gov|global|jp|au|ca)\.(.+)$/;

/**
 * The ARNs to grant for a model id: a foundation model in this region; for an inference profile,
 * the profile and its foundation model in any region (the profile picks one); an ARN as given.
 */
function bedrockModelArns(scope: Construct, modelId: string): string[] {
  const stack = Stack.of(scope);
  if (modelId.startsWith('arn:')) return [modelId];
  const profile = PROFILE_PREFIX.exec(modelId);
  if (profile?.[2]) {
    return [
      stack.formatArn({ service: 'bedrock', resource: 'inference-profile', resourceName: modelId }),
      `arn:${stack.partition}:bedrock:*::foundation-model/${profile[2]}`,
    ];
  }
  return [
    stack.formatArn({
      service: 'bedrock',
      account: '',
      resource: 'foundation-model',
      resourceName: modelId,
    }),
  ];
}

/** What a function does with the models of the configuration (lib/models.ts). */
export interface ModelUse {
  /** Ranks search results with the rerank stage (search and answer functions). */
  readonly rerank?: boolean;
  /** Generates answers with the generation model. */
  readonly generate?: boolean;
}

/**
 * The models: the environment the function's factories read (`EMBEDDING_*`, with `use.rerank`
 * `RERANK_*`, with `use.generate` `GENERATION_MODEL_ID`), InvokeModel on the Bedrock models among
 * them (InvokeModelWithResponseStream too on the generation model: Converse and ConverseStream,
 * the buffered POST /api/rag/answer streams from Bedrock too when `stream: true`), on those
 * models' ARNs only, and read access to the secrets holding model servers' keys.
 */
export function grantModels(
  fn: GroundworkFunction,
  config: ModelsConfig,
  use: ModelUse = {},
): void {
  const ids = bedrockModelIds(config);
  const invoke = [ids.embedding, ids.previousEmbedding, use.rerank ? ids.rerank : null].filter(
    (id): id is string => id !== null,
  );
  const arns: string[] = [];
  const allow = (actions: string[], modelIds: string[]) => {
    if (modelIds.length === 0) return;
    const resources = [...new Set(modelIds.flatMap((id) => bedrockModelArns(fn, id)))];
    fn.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions, resources }));
    arns.push(...resources);
  };
  allow(['bedrock:InvokeModel'], invoke);
  for (const [name, value] of Object.entries(embeddingEnvironment(config)))
    fn.addEnvironment(name, value);
  if (use.rerank) {
    for (const [name, value] of Object.entries(rerankEnvironment(config)))
      fn.addEnvironment(name, value);
  }
  if (use.generate && ids.generation) {
    allow(['bedrock:InvokeModel', 'bedrock:InvokeModelWithResponseStream'], [ids.generation]);
    fn.addEnvironment('GENERATION_MODEL_ID', ids.generation);
  }
  const secrets = modelSecretArns({
    ...config,
    rerankProvider: use.rerank ? config.rerankProvider : 'none',
  });
  if (secrets.length > 0) {
    fn.role.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: secrets }),
    );
  }
  for (const arn of arns.filter((a) => a.includes(':bedrock:*::'))) {
    acknowledgeWildcardResource(
      fn.role,
      arn,
      'A cross-region inference profile routes to its foundation model in any of its regions; the model is fixed.',
    );
  }
}
