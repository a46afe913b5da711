/**
 * Settings of the embedded default, from the environment (validated once, at start).
 */
import path from 'node:path';
import * as z from 'zod';
import { parseEnv } from '../lambdas/adapters/aws/lambda-env';
import type { LlmProvider } from '../lambdas/core/answer/llm';
import { ConfigError } from '../lambdas/core/errors';
import {
  calibrationOverridesFromEnv,
  confidenceEnvShape,
} from '../lambdas/rag-answer/confidence-env';

export const localEnvSchema = z.object({
  /** Confidence gate overrides, read as the answer functions read them. */
  ...confidenceEnvShape,
  /** Where PGlite's data, the S3 emulator's objects and the signing keys live. */
  GROUNDWORK_DATA_DIR: z.string().min(1).default('.groundwork'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
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
  /** `local` (the model shipped in npm) or `bedrock` (Titan Text Embeddings v2, 512 dimensions). */
  GROUNDWORK_EMBEDDER: z.enum(['local', 'bedrock']).default('local'),
  /** e.g. http://127.0.0.1:11434/v1 for Ollama. */
  GROUNDWORK_OPENAI_BASE_URL: z.url().optional(),
  GROUNDWORK_OPENAI_MODEL: z.string().min(1).optional(),
  GROUNDWORK_OPENAI_API_KEY: z.string().min(1).optional(),
  GROUNDWORK_BEDROCK_MODEL_ID: z.string().min(1).default('anthropic.claude-3-haiku-20240307-v1:0'),
  AWS_REGION: z.string().min(1).default('us-east-1'),
});
export type LocalEnv = z.infer<typeof localEnvSchema>;

/** The LLM the environment asks for; null selects the offline extractive answerer. */
export async function llmFromEnv(env: LocalEnv): Promise<LlmProvider | null> {
  if (env.GROUNDWORK_LLM === 'openai') {
    if (!env.GROUNDWORK_OPENAI_BASE_URL || !env.GROUNDWORK_OPENAI_MODEL) {
      throw new ConfigError(
        'GROUNDWORK_LLM=openai needs GROUNDWORK_OPENAI_BASE_URL and GROUNDWORK_OPENAI_MODEL',
      );
    }
    const { createOpenAiCompatibleLlm } = await import('../lambdas/adapters/llm/openai-compatible');
    return createOpenAiCompatibleLlm({
      baseUrl: env.GROUNDWORK_OPENAI_BASE_URL,
      model: env.GROUNDWORK_OPENAI_MODEL,
      ...(env.GROUNDWORK_OPENAI_API_KEY ? { apiKey: env.GROUNDWORK_OPENAI_API_KEY } : {}),
    });
  }
  if (env.GROUNDWORK_LLM === 'bedrock') {
    const { createBedrockRuntimeClient } =
      await import('../lambdas/adapters/embeddings/bedrock-runtime-client');
    const { createBedrockLlm } = await import('../lambdas/adapters/llm/bedrock-converse');
    return createBedrockLlm({
      client: createBedrockRuntimeClient({ region: env.AWS_REGION }),
      modelId: env.GROUNDWORK_BEDROCK_MODEL_ID,
    });
  }
  return null;
}

async function bedrockEmbedderFromEnv(env: LocalEnv) {
  const { createBedrockRuntimeClient } =
    await import('../lambdas/adapters/embeddings/bedrock-runtime-client');
  const { createBedrockEmbedder } = await import('../lambdas/adapters/embeddings/bedrock-embedder');
  return createBedrockEmbedder({
    client: createBedrockRuntimeClient({ region: env.AWS_REGION }),
    dimension: 512,
  });
}

/** The local stack's options from the environment. */
export async function stackOptionsFromEnv(env: LocalEnv & { dataDir: string }) {
  return {
    dataDir: env.dataDir,
    bucket: env.GROUNDWORK_BUCKET,
    answer: { calibrationOverrides: calibrationOverridesFromEnv(env) },
    logLevel: env.GROUNDWORK_LOG_LEVEL,
    llm: await llmFromEnv(env),
    ...(env.GROUNDWORK_EMBEDDER === 'bedrock'
      ? { embedder: await bedrockEmbedderFromEnv(env) }
      : {}),
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
