/**
 * The deployment's configuration: one zod schema, read from CDK context (cdk.json or
 * `cdk synth -c key=value`) with environment variables `GROUNDWORK_<KEY>` taking precedence
 * (e.g. `GROUNDWORK_ALARM_EMAIL`). Parsed once when the app starts; an invalid value stops the
 * synth with a message naming the key and where it came from.
 */
import { DEFAULT_CORS_ORIGINS } from '../lambdas/http/cors';
import path from 'node:path';
import * as z from 'zod';
import { parseLimitsConfig, type LimitsConfig } from '../lambdas/core/limits/config';
import { TENANT_ID_PATTERN } from '../lambdas/core/ingestion/object-attributes';
import { DEFAULT_PUBLISHING_TENANTS } from '../lambdas/core/visibility';
import { parseFilterIndexes } from '../lambdas/adapters/postgres/filter-indexes';
import { DEFAULT_AWS_SDK } from './bundling';
import { BEDROCK_MODEL_ID, modelProblems } from './models';

/** The repository root (the folder with package.json, lambdas/ and migrations/). */
export const REPO_ROOT = path.resolve(__dirname, '..');
/** Where the SQL migrations live; their hash and vector size are read at synth time. */
export const MIGRATIONS_DIR = path.join(REPO_ROOT, 'migrations');

/** Log retention periods CloudWatch Logs accepts, in days. */
const RETENTION_DAYS = [
  1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288,
  3653,
] as const;

/** Context values given with `-c` arrive as strings: accept both forms. */
const bool = z.union([z.boolean(), z.enum(['true', 'false']).transform((s) => s === 'true')]);
const num = z.coerce.number();
const modelId = z
  .string()
  .trim()
  .regex(BEDROCK_MODEL_ID, 'not a Bedrock model id, inference profile id or ARN');
const secretArn = z
  .string()
  .regex(
    /^arn:[\w-]+:secretsmanager:[\w-]+:\d{12}:secret:[\w/+=.@-]+$/,
    'not a Secrets Manager secret ARN',
  );
/** An object, or its JSON text (from `-c` or an environment variable). */
const jsonOrObject = z
  .unknown()
  .transform((value, ctx): unknown => {
    if (typeof value !== 'string') return value;
    if (value.trim() === '') return {};
    try {
      return JSON.parse(value);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'is not valid JSON' });
      return z.NEVER;
    }
  })
  .pipe(z.record(z.string(), z.unknown(), 'must be a JSON object'));
const list = z.union([
  z.array(z.string()),
  z.string().transform((s) =>
    s
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean),
  ),
]);

const groundworkConfigSchema = z
  .object({
    /** Names the stacks (`Groundwork-<stage>-Data`, `-Api`) and tags every resource. */
    stage: z
      .string()
      .regex(/^[a-z][a-z0-9-]{0,15}$/, 'lower-case letters, digits and "-", at most 16')
      .default('dev'),
    /** Pins the stacks to an account and region; both unset: environment-agnostic (offline synth). */
    account: z
      .string()
      .regex(/^\d{12}$/, 'a 12-digit AWS account id')
      .optional(),
    region: z
      .string()
      .regex(/^[a-z]{2}(-[a-z]+)+-\d$/, 'an AWS region such as us-east-1')
      .optional(),
    /**
     * Where embeddings come from (lib/models.ts): `bedrock` (Titan Text Embeddings v2, or Cohere
     * Embed v3 English or multilingual) or `openai` (a server speaking OpenAI's `/v1/embeddings`
     * at `embeddingBaseUrl`, reachable from the VPC through `modelServerEgress`).
     */
    embeddingProvider: z.enum(['bedrock', 'openai']).default('bedrock'),
    /** The Bedrock model id, or the OpenAI-compatible server's model name. */
    embeddingModelId: z.string().trim().min(1).default('amazon.titan-embed-text-v2:0'),
    /**
     * Vector size: Titan v2 256, 512 or 1024; Cohere Embed v3 1024; the server's model its own.
     * The first deploy fits the embedding columns to it (the migrations declare vector(512));
     * changing the model later begins a switch: the ingest function re-embeds on its schedule.
     */
    embeddingDimension: num.pipe(z.number().int().min(1).max(16_000)).default(512),
    /**
     * While a switch from a Bedrock embedding model to the configured one runs (docs/retrieval.md),
     * that model's id: the functions keep InvokeModel on it, since search embeds queries with the
     * index's live model until the switch completes. Remove it once the switch is done.
     */
    previousEmbeddingModelId: z.string().trim().min(1).optional(),
    /**
     * While a switch from an OpenAI-compatible model whose key is a Secrets Manager secret runs,
     * that secret (ARN): the functions keep reading it until the switch completes.
     */
    previousEmbeddingApiKeySecretArn: secretArn.optional(),
    /** `openai`: the server's base URL up to the API version, e.g. `https://tei.internal:8443/v1`. */
    embeddingBaseUrl: z.url({ protocol: /^https?$/ }).optional(),
    /** `openai`: a Secrets Manager secret (ARN) whose text is the server's bearer key. */
    embeddingApiKeySecretArn: secretArn.optional(),
    /** `openai`: send `dimensions` (servers and models that shorten vectors). */
    embeddingSendDimensions: bool.optional(),
    /** `openai`: prefixes for models trained with them (nomic `search_query: `, e5 `query: `). */
    embeddingQueryPrefix: z.string().optional(),
    embeddingDocumentPrefix: z.string().optional(),
    /**
     * A rerank stage after fusion (docs/retrieval.md): `none`, `bedrock` (Amazon Rerank or Cohere
     * Rerank on Bedrock, `rerankModelId`) or `http` (a Cohere-style `/rerank` server at
     * `rerankBaseUrl`, reachable through `modelServerEgress`).
     */
    rerankProvider: z.enum(['none', 'bedrock', 'http']).default('none'),
    /** The Bedrock rerank model (default `amazon.rerank-v1:0`), or the server's model name. */
    rerankModelId: z.string().trim().min(1).optional(),
    rerankBaseUrl: z.url({ protocol: /^https?$/ }).optional(),
    /** `http`: a Secrets Manager secret (ARN) whose text is the server's bearer key. */
    rerankApiKeySecretArn: secretArn.optional(),
    /** Fused candidates sent to the reranker, and its longest wait before the fused order is used. */
    rerankCandidates: num.pipe(z.number().int().min(1).max(200)).optional(),
    rerankTimeoutMs: num.pipe(z.number().int().min(1).max(30_000)).optional(),
    /**
     * Model servers the functions may reach besides AWS, as `<cidr>:<port>` (a server in the VPC
     * or one peered with it, e.g. `10.20.0.15/32:443`); egress is closed to anything else. The
     * VPC has no internet route: a public endpoint is out of reach.
     */
    modelServerEgress: list
      .pipe(
        z.array(
          z
            .string()
            .regex(/^(\d{1,3}\.){3}\d{1,3}\/\d{1,2}:\d{1,5}$/, 'must be <IPv4 CIDR>:<port>'),
        ),
      )
      .default([]),
    /** Bedrock model or inference profile for answers; "" or "extractive": no LLM (extractive answers). */
    generationModelId: z
      .union([modelId, z.literal(''), z.literal('extractive'), z.null()])
      .transform((v) => (v === '' || v === 'extractive' ? null : v))
      .default('amazon.nova-lite-v1:0'),
    /** POST /api/lexybrain/rag (seed 000); false answers it with 503 `feature_disabled`. */
    lexybrainRagEnabled: bool.default(true),
    /**
     * Confidence gate overrides (docs/confidence.md): each one set replaces that value of the
     * embedding model's calibration (lambdas/core/answer/calibrations.ts); unset, the model's
     * calibration or the uncalibrated defaults apply.
     */
    confidenceHigh: num.pipe(z.number().min(0).max(1)).optional(),
    confidenceMedium: num.pipe(z.number().min(0).max(1)).optional(),
    /** Weight of the background-normalised cosine in a chunk's relevance (the rest: coverage). */
    confidenceCosineWeight: num.pipe(z.number().min(0).max(1)).optional(),
    /** Chunks below this relevance are not evidence; 0 keeps every chunk. */
    confidenceEvidenceFloor: num.pipe(z.number().min(0).max(1)).optional(),
    /**
     * The publishing tenants: whose `global` documents every tenant reads once indexed, and
     * whose admins may publish them (docs/decisions/0146-one-visibility-rule.md). An empty list:
     * no tenant publishes.
     */
    publishingTenants: list
      .pipe(z.array(z.string().regex(TENANT_ID_PATTERN, 'not a tenant id')))
      .default([...DEFAULT_PUBLISHING_TENANTS]),
    /** Plans, quotas, rate limits, cost caps and prices (see lambdas/core/limits/config.ts). */
    limits: jsonOrObject.default({}),
    /** Aurora Serverless v2 capacity in ACUs; a minimum of 0 pauses the database when idle. */
    auroraMinCapacity: num.pipe(z.number().min(0).max(256).multipleOf(0.5)).default(0),
    auroraMaxCapacity: num.pipe(z.number().min(1).max(256).multipleOf(0.5)).default(4),
    /**
     * The Aurora PostgreSQL version, `17.<minor>` from 17.4; unset: the newest minor this
     * aws-cdk-lib knows (lib/constructs/serverless-database.ts AURORA_POSTGRES_VERSION).
     */
    auroraEngineVersion: z
      .string()
      .regex(/^17\.\d+$/, 'must be 17.<minor>')
      .refine(
        (v) => Number(v.split('.')[1]) >= 4,
        'must be 17.4 or later (scale to zero, pgvector 0.8)',
      )
      .optional(),
    /**
     * Aurora Serverless v2 reader instances (0 to 15, each between the same minimum and maximum
     * ACUs as the writer). Above 0, search and answer retrieval read from them through RDS
     * Proxy's read-only endpoint (or the cluster's reader endpoint without the proxy); writes and
     * the reads that must see them stay on the writer (docs/decisions/0147-reads-on-aurora-readers.md).
     */
    readReplicas: num.pipe(z.number().int().min(0).max(15)).default(0),
    /**
     * Metadata values with an HNSW index of their own, for filters that select a few percent of a
     * large index (docs/retrieval.md, "Filter indexes"): a list, or its JSON text, of `{"key":
     * "category", "value": "manual"}`. Each deploy's migration adds the new values and removes
     * those no longer listed. Default: none.
     */
    filterIndexes: z
      .union([z.string(), z.array(z.unknown())])
      .optional()
      .transform((value, ctx) => {
        try {
          return parseFilterIndexes(
            typeof value === 'string' || value === undefined ? value : JSON.stringify(value),
            'filterIndexes',
          );
        } catch (error) {
          ctx.addIssue({ code: 'custom', message: (error as Error).message });
          return z.NEVER;
        }
      }),
    /**
     * Keep every chunk's vector in a b-tree beside its tenant too, so that a small tenant's exact
     * scan reads no rows (docs/retrieval.md, "The exact-scan index"): for a large index, about
     * 1.3 GB more per million chunks of 512 dimensions. Each deploy's migration builds or drops
     * it. Default: off.
     */
    exactScanIndex: bool.default(false),
    /** Minutes without connections before a 0-ACU minimum pauses the database (5 to 1440). */
    auroraAutoPauseMinutes: num.pipe(z.number().int().min(5).max(1440)).default(10),
    /**
     * Minutes between lease sweeps (lib/constructs/ingest-recovery.ts), which also step an
     * embedding model switch. Each sweep queries the database, so a 0-ACU database pauses only
     * when this exceeds auroraAutoPauseMinutes.
     */
    leaseSweepMinutes: num.pipe(z.number().int().min(1).max(1440)).default(5),
    /** Database deletion protection (turn off before `cdk destroy`). */
    deletionProtection: bool.default(true),
    /** RDS Proxy between the functions and Aurora (about USD 88 a month at its 8-ACU minimum). */
    rdsProxy: bool.default(true),
    /** Interface endpoints for SQS and CloudWatch Logs/monitoring, which the code does not call (about USD 44 a month in 2 AZs). */
    optionalVpcEndpoints: bool.default(false),
    /** Where the functions' AWS SDK comes from: `bundled` (pinned, fastest init) or `runtime` (smaller bundles). */
    awsSdk: z.enum(['bundled', 'runtime']).default(DEFAULT_AWS_SDK),
    /**
     * A fixed name for the documents bucket; unset: CloudFormation names it. The bucket is kept
     * when the stack is deleted, so a fixed name fails the next deploy until the old bucket is
     * deleted or this names another one.
     */
    documentsBucketName: z
      .string()
      .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'not an S3 bucket name')
      .optional(),
    /** Where alarms are e-mailed; unset: the SNS topic has no subscription. */
    alarmEmail: z.email().optional(),
    /**
     * Origins allowed to call the API from a browser (lambdas/http/cors.ts); default `*`: callers
     * hold bearer tokens, never cookies. List your sites' origins in production; an empty list
     * allows no cross-origin call.
     */
    corsOrigins: list.pipe(z.array(z.url().or(z.literal('*')))).default([...DEFAULT_CORS_ORIGINS]),
    /** An existing Cognito user pool (it must have the `custom:tenant_id` attribute); unset: create one. */
    userPoolId: z
      .string()
      .regex(/^[\w-]+_[0-9a-zA-Z]+$/, 'not a Cognito user pool id')
      .optional(),
    /**
     * Cognito hosted sign-in for the web playground (or your own single-page app): the domain
     * prefix of `https://<prefix>.auth.<region>.amazoncognito.com`, and the page URLs Cognito may
     * redirect back to. Both set: the app client allows the authorization-code flow with PKCE.
     */
    hostedLoginDomainPrefix: z
      .string()
      .regex(/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/, 'lower-case letters, digits and "-"')
      .optional(),
    hostedLoginCallbackUrls: list.pipe(z.array(z.url())).default([]),
    /** Retention of every log group, in days. */
    logRetentionDays: num
      .pipe(z.number().int())
      .refine(
        (d) => (RETENTION_DAYS as readonly number[]).includes(d),
        'not a CloudWatch Logs retention period',
      )
      .default(30),
    /**
     * The most ingest instances the queue's event source runs at once (its maximum concurrency):
     * what caps the database connections ingestion takes (2 per instance).
     */
    ingestConcurrency: num.pipe(z.number().int().min(2).max(1000)).default(5),
    /**
     * Reserved concurrency of the ingest function; unset: none. Reserving needs an account
     * concurrency quota of at least this plus 100 (Lambda keeps 100 unreserved), which new
     * accounts (quota 10) do not have.
     */
    ingestReservedConcurrency: num.pipe(z.number().int().min(1).max(1000)).optional(),
    /**
     * Create the regional API Gateway CloudWatch Logs role (AWS::ApiGateway::Account) that REST
     * API access logs need. false: the account already has one in this region, managed elsewhere.
     */
    apiGatewayCloudWatchRole: bool.default(true),
    /**
     * A WAF web ACL on the REST API stage: AWS managed rules (common, known bad inputs, IP
     * reputation) and a per-IP rate rule (`wafRateLimitPer5Minutes`). About USD 9 a month (web ACL USD 5, 4 rules at USD 1) plus
     * USD 0.60 per million requests.
     */
    waf: bool.default(false),
    /** Requests one IP may make in 5 minutes before the WAF blocks it (with `waf`). */
    wafRateLimitPer5Minutes: num.pipe(z.number().int().min(10).max(2_000_000_000)).default(1000),
    /** API stage throttling: steady requests per second and burst. */
    apiRateLimit: num.pipe(z.number().positive()).default(50),
    apiBurstLimit: num.pipe(z.number().int().positive()).default(100),
  })
  .strict()
  .superRefine((c, ctx) => {
    if (Boolean(c.hostedLoginDomainPrefix) !== c.hostedLoginCallbackUrls.length > 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['hostedLoginCallbackUrls'],
        message: 'hostedLoginDomainPrefix and hostedLoginCallbackUrls go together',
      });
    }
    if (
      c.confidenceMedium !== undefined &&
      c.confidenceHigh !== undefined &&
      c.confidenceMedium > c.confidenceHigh
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['confidenceMedium'],
        message: 'must not exceed confidenceHigh',
      });
    }
    if (c.auroraMinCapacity > c.auroraMaxCapacity) {
      ctx.addIssue({
        code: 'custom',
        path: ['auroraMinCapacity'],
        message: 'must not exceed auroraMaxCapacity',
      });
    }
    if (c.apiBurstLimit < c.apiRateLimit) {
      ctx.addIssue({
        code: 'custom',
        path: ['apiBurstLimit'],
        message: 'must be at least apiRateLimit',
      });
    }
    if (
      c.ingestReservedConcurrency !== undefined &&
      c.ingestReservedConcurrency < c.ingestConcurrency
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['ingestReservedConcurrency'],
        message: 'must be at least ingestConcurrency (the event source would be throttled)',
      });
    }
    for (const problem of modelProblems(c)) ctx.addIssue({ code: 'custom', ...problem });
    if ((c.account === undefined) !== (c.region === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: [c.account ? 'region' : 'account'],
        message: 'set account and region together, or neither',
      });
    }
  });

/** The validated configuration, with the limits config parsed as the Lambdas will parse it. */
export type GroundworkConfig = z.output<typeof groundworkConfigSchema> & {
  /** `limits` as the Lambdas parse it (plans merged over the defaults). */
  readonly limitsConfig: LimitsConfig;
  /** `limits` as compact JSON, the `LIMITS_CONFIG` environment variable. */
  readonly limitsJson: string;
};
export type GroundworkConfigInput = z.input<typeof groundworkConfigSchema>;

/** The configuration keys, each also readable from `GROUNDWORK_<KEY IN CONSTANT CASE>`. */
export const CONFIG_KEYS = Object.keys(
  groundworkConfigSchema.shape,
) as (keyof GroundworkConfigInput)[];

/** `embeddingDimension` -> `GROUNDWORK_EMBEDDING_DIMENSION`. */
export function envVarFor(key: string): string {
  return `GROUNDWORK_${key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase()}`;
}

/**
 * Validates a configuration; throws an Error naming every bad key and its source.
 * @param sources where each key was read from, for the message (`cdk.json/-c`, `GROUNDWORK_...`)
 */
export function parseConfig(
  input: Record<string, unknown>,
  sources: Record<string, string> = {},
): GroundworkConfig {
  const result = groundworkConfigSchema.safeParse(input);
  const problems: string[] = [];
  if (!result.success) {
    for (const issue of result.error.issues) {
      const key = String(issue.path[0] ?? '(root)');
      const where = sources[key] ? ` (from ${sources[key]})` : '';
      problems.push(`${issue.path.join('.') || key}${where}: ${issue.message}`);
    }
    throw new Error(`Invalid Groundwork configuration:\n  ${problems.join('\n  ')}`);
  }
  const config = result.data;
  let limitsConfig: LimitsConfig;
  try {
    limitsConfig = parseLimitsConfig(
      config.limits,
      `limits${sources.limits ? ` (from ${sources.limits})` : ''}`,
    );
  } catch (err) {
    throw new Error(
      `Invalid Groundwork configuration:\n  ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  return { ...config, limitsConfig, limitsJson: JSON.stringify(config.limits) };
}

/**
 * Reads every key from `GROUNDWORK_<KEY>` if set, else from CDK context, then validates.
 * @param context reads a context key (e.g. `(k) => app.node.tryGetContext(k)`)
 */
export function loadConfig(
  context: (key: string) => unknown,
  env: Record<string, string | undefined> = process.env,
): GroundworkConfig {
  const input: Record<string, unknown> = {};
  const sources: Record<string, string> = {};
  for (const key of CONFIG_KEYS) {
    const fromEnv = env[envVarFor(key)];
    if (fromEnv !== undefined) {
      input[key] = fromEnv;
      sources[key] = envVarFor(key);
      continue;
    }
    const fromContext = context(key);
    if (fromContext !== undefined) {
      input[key] = fromContext;
      sources[key] = `context "${key}"`;
    }
  }
  // The CLI's variables pin the environment when it knows the account (cdk deploy with credentials).
  if (
    input.account === undefined &&
    input.region === undefined &&
    env.CDK_DEFAULT_ACCOUNT &&
    env.CDK_DEFAULT_REGION
  ) {
    input.account = env.CDK_DEFAULT_ACCOUNT;
    input.region = env.CDK_DEFAULT_REGION;
  }
  return parseConfig(input, sources);
}
