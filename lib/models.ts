/**
 * The models of a deployment, from its configuration: the environment variables the functions
 * read them from (the same `EMBEDDING_*` and `RERANK_*` settings the Lambdas parse, docs/ingestion.md
 * and docs/retrieval.md), which of them are Bedrock models (for grants and throttling alarms), and
 * the checks that stop a synth with a model the functions would refuse at start: the settings are
 * handed to the functions' own factories, so the two cannot disagree.
 */
import type { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { AppError } from '../lambdas/core/errors';
import * as zm from '../lambdas/core/zod';
import { createConfiguredEmbedder } from '../lambdas/adapters/embeddings/embedder-factory';
import { embeddingEnvShape, embeddingSettings } from '../lambdas/adapters/embeddings/embedding-env';
import { AMAZON_RERANK_V1 } from '../lambdas/adapters/rerank/bedrock-reranker';
import { rerankEnvShape } from '../lambdas/adapters/rerank/rerank-env';
import { rerankFromEnv } from '../lambdas/adapters/rerank/rerank-factory';

/** A Bedrock model id, inference profile id or ARN. */
export const BEDROCK_MODEL_ID = /^(arn:[\w-]+:bedrock:[\w-]*:\d*:[\w/.:-]+|[a-z0-9][\w.:-]*)$/i;

/** The configuration keys this module reads. */
export interface ModelsConfig {
  readonly embeddingProvider: 'bedrock' | 'openai';
  readonly embeddingModelId: string;
  readonly embeddingDimension: number;
  /** A Bedrock embedding model being switched from (still invoked for queries until done). */
  readonly previousEmbeddingModelId?: string | undefined;
  readonly previousEmbeddingApiKeySecretArn?: string | undefined;
  readonly embeddingBaseUrl?: string | undefined;
  readonly embeddingApiKeySecretArn?: string | undefined;
  readonly embeddingSendDimensions?: boolean | undefined;
  readonly embeddingQueryPrefix?: string | undefined;
  readonly embeddingDocumentPrefix?: string | undefined;
  readonly rerankProvider: 'none' | 'bedrock' | 'http';
  readonly rerankModelId?: string | undefined;
  readonly rerankBaseUrl?: string | undefined;
  readonly rerankApiKeySecretArn?: string | undefined;
  readonly rerankCandidates?: number | undefined;
  readonly rerankTimeoutMs?: number | undefined;
  readonly generationModelId?: string | null | undefined;
}

/** Only the variables whose value is set. */
function defined(vars: Record<string, string | number | boolean | undefined>) {
  return Object.fromEntries(
    Object.entries(vars).flatMap(([k, v]) => (v === undefined ? [] : [[k, String(v)]])),
  ) as Record<string, string>;
}

/** `EMBEDDING_*` of the functions that embed (and of the migration, which records the model). */
export function embeddingEnvironment(c: ModelsConfig): Record<string, string> {
  return defined({
    EMBEDDING_PROVIDER: c.embeddingProvider,
    EMBEDDING_MODEL_ID: c.embeddingModelId,
    EMBEDDING_DIMENSION: c.embeddingDimension,
    EMBEDDING_BASE_URL: c.embeddingBaseUrl,
    EMBEDDING_API_KEY_SECRET_ARN: c.embeddingApiKeySecretArn,
    EMBEDDING_SEND_DIMENSIONS: c.embeddingSendDimensions,
    EMBEDDING_QUERY_PREFIX: c.embeddingQueryPrefix,
    EMBEDDING_DOCUMENT_PREFIX: c.embeddingDocumentPrefix,
  });
}

/** `RERANK_*` of the functions that search; empty without a rerank stage. */
export function rerankEnvironment(c: ModelsConfig): Record<string, string> {
  if (c.rerankProvider === 'none') return {};
  return defined({
    RERANK_PROVIDER: c.rerankProvider,
    RERANK_MODEL_ID:
      c.rerankProvider === 'bedrock' ? (c.rerankModelId ?? AMAZON_RERANK_V1) : c.rerankModelId,
    RERANK_BASE_URL: c.rerankBaseUrl,
    RERANK_API_KEY_SECRET_ARN: c.rerankApiKeySecretArn,
    RERANK_CANDIDATES: c.rerankCandidates,
    RERANK_TIMEOUT_MS: c.rerankTimeoutMs,
  });
}

/** The Bedrock models the functions call (embedding, rerank, generation), each once. */
export function bedrockModelIds(c: ModelsConfig): {
  embedding: string | null;
  previousEmbedding: string | null;
  rerank: string | null;
  generation: string | null;
} {
  return {
    embedding: c.embeddingProvider === 'bedrock' ? c.embeddingModelId : null,
    previousEmbedding: c.previousEmbeddingModelId ?? null,
    rerank: c.rerankProvider === 'bedrock' ? (c.rerankModelId ?? AMAZON_RERANK_V1) : null,
    generation: c.generationModelId ?? null,
  };
}

/** The Secrets Manager secrets holding model servers' keys. */
export function modelSecretArns(c: ModelsConfig): string[] {
  return [
    c.embeddingProvider === 'openai' ? c.embeddingApiKeySecretArn : undefined,
    c.previousEmbeddingApiKeySecretArn,
    c.rerankProvider === 'http' ? c.rerankApiKeySecretArn : undefined,
  ].filter((arn): arn is string => arn !== undefined);
}

/** Never called: building the adapters makes no request. */
const noClient = () => ({}) as BedrockRuntimeClient;
const noSecret = () => Promise.reject(new Error('not read at synth'));

/** The embedding model as the functions' embedder names it, and the index records it. */
export function recordedEmbeddingModel(c: ModelsConfig): string {
  const env = zm.object(embeddingEnvShape('EMBEDDING_')).parse(embeddingEnvironment(c));
  return createConfiguredEmbedder(
    c.embeddingProvider,
    embeddingSettings(env, 'EMBEDDING_'),
    'EMBEDDING_',
    { bedrockClient: noClient, readSecret: noSecret },
  ).modelId;
}

/**
 * What the functions would refuse at start about these models, as configuration issues (the
 * path names the key): the settings go through the functions' own parsing and factories.
 */
export function modelProblems(c: ModelsConfig): { path: string[]; message: string }[] {
  const problems: { path: string[]; message: string }[] = [];
  // The key a message is about: the first variable it names (`EMBEDDING_BASE_URL` is
  // `embeddingBaseUrl`), else the provider's.
  const check = (prefix: 'EMBEDDING_' | 'RERANK_', build: () => unknown) => {
    try {
      build();
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      const named = new RegExp(`${prefix}([A-Z_]+)`).exec(err.message)?.[1];
      const stem = prefix === 'EMBEDDING_' ? 'embedding' : 'rerank';
      const key = named
        ? stem +
          named.toLowerCase().replace(/(^|_)([a-z])/g, (_, __, ch: string) => ch.toUpperCase())
        : `${stem}Provider`;
      problems.push({ path: [key], message: err.message });
    }
  };
  if (c.embeddingProvider === 'bedrock' && !BEDROCK_MODEL_ID.test(c.embeddingModelId)) {
    problems.push({
      path: ['embeddingModelId'],
      message: 'not a Bedrock model id, inference profile id or ARN',
    });
  } else {
    const env = zm.object(embeddingEnvShape('EMBEDDING_')).safeParse(embeddingEnvironment(c));
    if (!env.success) {
      problems.push({ path: ['embeddingModelId'], message: zm.prettifyError(env.error) });
    } else {
      check('EMBEDDING_', () =>
        createConfiguredEmbedder(
          c.embeddingProvider,
          embeddingSettings(env.data, 'EMBEDDING_'),
          'EMBEDDING_',
          { bedrockClient: noClient, readSecret: noSecret },
        ),
      );
    }
  }
  if (c.rerankProvider !== 'none') {
    const env = zm.object(rerankEnvShape('RERANK_')).safeParse(rerankEnvironment(c));
    if (!env.success) {
      problems.push({ path: ['rerankProvider'], message: zm.prettifyError(env.error) });
    } else {
      check('RERANK_', () =>
        rerankFromEnv(c.rerankProvider, env.data, 'RERANK_', {
          bedrockClient: noClient,
          readSecret: noSecret,
        }),
      );
    }
  }
  return problems;
}
