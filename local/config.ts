/**
 * Settings of the embedded default, from the environment (validated once, at start).
 */
import path from 'node:path';
import * as z from 'zod';
import { parseEnv, publishingTenantsEnv } from '../lambdas/adapters/aws/lambda-env';
import { embeddingEnvShape, embeddingSettings } from '../lambdas/adapters/embeddings/embedding-env';
import { rerankEnvShape } from '../lambdas/adapters/rerank/rerank-env';
// Static imports: `groundwork` runs the sources through tsx's CommonJS hook, under which a
// dynamic import() of a relative TypeScript path does not resolve.
import { createBedrockRuntimeClient } from '../lambdas/adapters/embeddings/bedrock-runtime-client';
import { createConfiguredEmbedder } from '../lambdas/adapters/embeddings/embedder-factory';
import { embedderFromRecord, embedderSpec } from '../lambdas/adapters/embeddings/embedder-spec';
import { createLocalEmbedder } from '../lambdas/adapters/embeddings/local-embedder';
import type { ModelRecord } from '../lambdas/core/embedding/models';
import { createBedrockLlm } from '../lambdas/adapters/llm/bedrock-converse';
import { createOpenAiCompatibleLlm } from '../lambdas/adapters/llm/openai-compatible';
import { rerankFromEnv } from '../lambdas/adapters/rerank/rerank-factory';
import type { LlmProvider } from '../lambdas/core/answer/llm';
import type { Embedder } from '../lambdas/core/ports';
import { ConfigError } from '../lambdas/core/errors';
import { parseFilterIndexes } from '../lambdas/adapters/postgres/filter-indexes';
import {
  calibrationOverridesFromEnv,
  confidenceEnvShape,
} from '../lambdas/rag-answer/confidence-env';
import { lexybrainEnvShape } from '../lambdas/rag-answer/lexybrain-env';

/** The data folder when GROUNDWORK_DATA_DIR is not set, relative to the working directory. */
export const DEFAULT_DATA_DIR = '.groundwork';

const localEnvSchema = z.object({
  /** Confidence gate overrides, read as the answer functions read them. */
  ...confidenceEnvShape,
  /** `false` turns POST /api/lexybrain/rag off (503 `feature_disabled`), as in the Lambda. */
  ...lexybrainEnvShape,
  /** Whose `global` documents every tenant reads, and who may publish them (comma-separated). */
  GROUNDWORK_PUBLISHING_TENANTS: publishingTenantsEnv,
  /** Where PGlite's data, the S3 emulator's objects and the signing keys live. */
  GROUNDWORK_DATA_DIR: z.string().min(1).default(DEFAULT_DATA_DIR),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  /**
   * A PostgreSQL server (with pgvector) instead of PGlite, logged in as the owner of its schema:
   * `postgres://user:password@host:5432/db`.
   */
  GROUNDWORK_DATABASE_URL: z.string().min(1).optional(),
  /**
   * A second connection for search and answer retrieval (lambdas/adapters/postgres/databases.ts),
   * as the Aurora readers serve them in AWS: a replica of GROUNDWORK_DATABASE_URL's server, or
   * the same server. Its requests run as a SELECT-only role. Needs GROUNDWORK_DATABASE_URL.
   */
  GROUNDWORK_DATABASE_READ_URL: z.string().min(1).optional(),
  /**
   * Metadata values with an HNSW index of their own, for filters that select a few percent of a
   * large index (docs/retrieval.md, "Filter indexes"), as JSON: `[{"key": "category", "value":
   * "manual"}]`. `start` adds what is new and removes what is no longer listed.
   */
  GROUNDWORK_FILTER_INDEXES: z.string().optional(),
  /**
   * `on` keeps every chunk's vector in a b-tree beside its tenant too, so that a small tenant's
   * exact scan reads no rows (docs/retrieval.md, "The exact-scan index"): for a large index,
   * about 1.3 GB more per million chunks of 512 dimensions. `off` drops it.
   */
  GROUNDWORK_EXACT_SCAN_INDEX: z.enum(['on', 'off']).default('off'),
  /** Port of the S3 emulator; 0 picks a free one. */
  GROUNDWORK_S3_PORT: z.coerce.number().int().min(0).max(65535).default(0),
  GROUNDWORK_BUCKET: z.string().min(3).default('groundwork-local'),
  GROUNDWORK_LOG_LEVEL: z.enum(['DEBUG', 'INFO', 'WARN', 'ERROR', 'SILENT']).default('WARN'),
  /** Worker threads for the local embedding model (default: one per core). */
  GROUNDWORK_EMBED_THREADS: z.coerce.number().int().min(0).max(64).optional(),
  /**
   * Embed each chunk as windows of this many tokens, averaged (docs/ingestion.md): better
   * vectors for long documents with the local model, for 3.4 times the embedding work on SciFact.
   */
  GROUNDWORK_EMBED_WINDOW_TOKENS: z.coerce.number().int().min(32).max(8192).optional(),
  /**
   * Who writes answers: `extractive` (offline, the default), `openai` (any OpenAI-compatible
   * server such as Ollama, vLLM or llama.cpp) or `bedrock` (Amazon Bedrock, AWS credentials).
   */
  GROUNDWORK_LLM: z.enum(['extractive', 'openai', 'bedrock']).default('extractive'),
  /**
   * `local` (the model shipped in npm), `bedrock` (Titan Text Embeddings v2 unless
   * GROUNDWORK_EMBED_MODEL_ID says otherwise; AWS credentials) or `openai` (any OpenAI-compatible
   * `/v1/embeddings` server: Ollama, vLLM, LM Studio, Text Embeddings Inference).
   */
  GROUNDWORK_EMBEDDER: z.enum(['local', 'bedrock', 'openai']).default('local'),
  /** GROUNDWORK_EMBED_MODEL_ID, _DIMENSION, _BASE_URL, ... (embedding-env.ts, docs/ingestion.md). */
  ...embeddingEnvShape('GROUNDWORK_EMBED_'),
  /** Rerank stage after fusion: `none`, `bedrock` or `http` (a Cohere-style /rerank server). */
  GROUNDWORK_RERANKER: z.enum(['none', 'bedrock', 'http']).default('none'),
  /** GROUNDWORK_RERANK_MODEL_ID, _BASE_URL, _API_KEY, _CANDIDATES, _TIMEOUT_MS (rerank-env.ts). */
  ...rerankEnvShape('GROUNDWORK_RERANK_'),
  /** e.g. http://127.0.0.1:11434/v1 for Ollama. */
  GROUNDWORK_OPENAI_BASE_URL: z.url().optional(),
  GROUNDWORK_OPENAI_MODEL: z.string().min(1).optional(),
  GROUNDWORK_OPENAI_API_KEY: z.string().min(1).optional(),
  GROUNDWORK_BEDROCK_MODEL_ID: z.string().min(1).default('anthropic.claude-3-haiku-20240307-v1:0'),
  AWS_REGION: z.string().min(1).default('us-east-1'),
});
export type LocalEnv = z.infer<typeof localEnvSchema>;

/** The LLM the environment asks for; null selects the offline extractive answerer. */
async function llmFromEnv(env: LocalEnv): Promise<LlmProvider | null> {
  if (env.GROUNDWORK_LLM === 'openai') {
    if (!env.GROUNDWORK_OPENAI_BASE_URL || !env.GROUNDWORK_OPENAI_MODEL) {
      throw new ConfigError(
        'GROUNDWORK_LLM=openai needs GROUNDWORK_OPENAI_BASE_URL and GROUNDWORK_OPENAI_MODEL',
      );
    }
    return createOpenAiCompatibleLlm({
      baseUrl: env.GROUNDWORK_OPENAI_BASE_URL,
      model: env.GROUNDWORK_OPENAI_MODEL,
      ...(env.GROUNDWORK_OPENAI_API_KEY ? { apiKey: env.GROUNDWORK_OPENAI_API_KEY } : {}),
    });
  }
  if (env.GROUNDWORK_LLM === 'bedrock') {
    return createBedrockLlm({
      client: createBedrockRuntimeClient({ region: env.AWS_REGION }),
      modelId: env.GROUNDWORK_BEDROCK_MODEL_ID,
    });
  }
  return null;
}

/** The remote embedding model the environment asks for; undefined selects the local model. */
async function embedderFromEnv(env: LocalEnv): Promise<Embedder | undefined> {
  const provider = env.GROUNDWORK_EMBEDDER;
  if (provider === 'local') return undefined;
  return createConfiguredEmbedder(
    provider,
    embeddingSettings(env, 'GROUNDWORK_EMBED_'),
    'GROUNDWORK_EMBED_',
    { bedrockClient: () => createBedrockRuntimeClient({ region: env.AWS_REGION }) },
  );
}

/**
 * What the index records of the configured model, and how to build a recorded one (the live
 * model while a switch to the configured one runs).
 */
function recordedModelOptions(env: LocalEnv) {
  const settings = embeddingSettings(env, 'GROUNDWORK_EMBED_');
  return {
    embedderSpec: embedderSpec(env.GROUNDWORK_EMBEDDER, settings),
    recordedEmbedder: (record: ModelRecord) =>
      embedderFromRecord(record, {
        bedrockClient: () => createBedrockRuntimeClient({ region: env.AWS_REGION }),
        local: () =>
          createLocalEmbedder(
            env.GROUNDWORK_EMBED_THREADS === undefined
              ? {}
              : { threads: env.GROUNDWORK_EMBED_THREADS },
          ),
        configured: settings,
      }),
  };
}

/** The rerank stage the environment asks for (null reranker: none). */
export async function rerankFromLocalEnv(env: LocalEnv) {
  return rerankFromEnv(env.GROUNDWORK_RERANKER, env, 'GROUNDWORK_RERANK_', {
    bedrockClient: () => createBedrockRuntimeClient({ region: env.AWS_REGION }),
  });
}

/** The local stack's options from the environment. */
export async function stackOptionsFromEnv(env: LocalEnv & { dataDir: string }) {
  if (env.GROUNDWORK_DATABASE_READ_URL && !env.GROUNDWORK_DATABASE_URL) {
    throw new ConfigError(
      'GROUNDWORK_DATABASE_READ_URL needs GROUNDWORK_DATABASE_URL: PGlite is one in-process connection',
    );
  }
  const embedder = await embedderFromEnv(env);
  const rerank = await rerankFromLocalEnv(env);
  return {
    dataDir: env.dataDir,
    bucket: env.GROUNDWORK_BUCKET,
    publishingTenants: env.GROUNDWORK_PUBLISHING_TENANTS,
    filterIndexes: parseFilterIndexes(env.GROUNDWORK_FILTER_INDEXES, 'GROUNDWORK_FILTER_INDEXES'),
    exactScanIndex: env.GROUNDWORK_EXACT_SCAN_INDEX === 'on',
    ...recordedModelOptions(env),
    answer: { calibrationOverrides: calibrationOverridesFromEnv(env) },
    logLevel: env.GROUNDWORK_LOG_LEVEL,
    ...(env.GROUNDWORK_DATABASE_URL
      ? {
          database: {
            url: env.GROUNDWORK_DATABASE_URL,
            ...(env.GROUNDWORK_DATABASE_READ_URL
              ? { readUrl: env.GROUNDWORK_DATABASE_READ_URL }
              : {}),
          },
        }
      : {}),
    llm: await llmFromEnv(env),
    ...(embedder ? { embedder } : {}),
    ...(rerank.reranker ? { reranker: rerank.reranker, search: { rerank: rerank.settings } } : {}),
    ...(env.GROUNDWORK_EMBED_THREADS === undefined
      ? {}
      : { embedThreads: env.GROUNDWORK_EMBED_THREADS }),
    ...(env.GROUNDWORK_EMBED_WINDOW_TOKENS === undefined
      ? {}
      : { ingestion: { embedWindowTokens: env.GROUNDWORK_EMBED_WINDOW_TOKENS } }),
  };
}

export function loadLocalEnv(
  env: Record<string, string | undefined> = process.env,
): LocalEnv & { dataDir: string } {
  const parsed = parseEnv(localEnvSchema, env);
  return { ...parsed, dataDir: path.resolve(parsed.GROUNDWORK_DATA_DIR) };
}
