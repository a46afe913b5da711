/**
 * Reranker on Amazon Bedrock: Amazon Rerank 1.0 (`amazon.rerank-v1:0`) and Cohere Rerank 3.5
 * (`cohere.rerank-v3-5:0`), called with InvokeModel on the Bedrock Runtime client the process
 * already shares (the Rerank API of bedrock-agent-runtime serves the same models, but would add a
 * second SDK client to every bundle). Throttling is retried by that client's retry strategy.
 */
import { InvokeModelCommand, type BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import * as z from '../../core/zod';
import { UnavailableError } from '../../core/errors';
import type { Reranker } from '../../core/retrieval/rerank';

export const AMAZON_RERANK_V1 = 'amazon.rerank-v1:0';

/** Options of {@link createBedrockReranker}. */
export interface BedrockRerankerOptions {
  readonly client: BedrockRuntimeClient;
  /** @default 'amazon.rerank-v1:0' */
  readonly modelId?: string;
}

/** The body both rerank models return. */
const bedrockRerankResponseSchema = z.object({
  results: z.array(
    z.object({ index: z.int().check(z.nonnegative()), relevance_score: z.number() }),
  ),
});

/** Creates a Reranker on a Bedrock rerank model; `modelId` is `bedrock/${modelId}`. */
export function createBedrockReranker(options: BedrockRerankerOptions): Reranker {
  const modelId = options.modelId ?? AMAZON_RERANK_V1;
  // Cohere's models on Bedrock take the version of their API in the body.
  const cohere = /(^|[./])cohere\.rerank/.test(modelId);
  return {
    modelId: `bedrock/${modelId}`,
    async rerank(query, documents, { topN, signal }) {
      let body: string;
      try {
        const response = await options.client.send(
          new InvokeModelCommand({
            modelId,
            contentType: 'application/json',
            accept: 'application/json',
            body: JSON.stringify({
              query,
              documents,
              top_n: topN,
              ...(cohere ? { api_version: 2 } : {}),
            }),
          }),
          { abortSignal: signal },
        );
        body = response.body.transformToString();
      } catch (err) {
        const name = err instanceof Error ? err.name : 'Error';
        const message = err instanceof Error ? err.message : String(err);
        throw new UnavailableError(
          `Bedrock rerank call to ${modelId} failed (${name}): ${message}`,
          err,
        );
      }
      let json: unknown;
      try {
        json = JSON.parse(body);
      } catch (err) {
        throw new UnavailableError(
          `Bedrock returned a reply from ${modelId} that is not JSON`,
          err,
        );
      }
      const parsed = bedrockRerankResponseSchema.safeParse(json);
      if (!parsed.success) {
        throw new UnavailableError(
          `Bedrock returned a malformed rerank reply from ${modelId}: ${z.prettifyError(parsed.error)}`,
        );
      }
      return parsed.data.results.map((r) => ({ index: r.index, relevance: r.relevance_score }));
    },
  };
}
