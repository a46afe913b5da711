/**
 * The search use case as every Lambda that retrieves composes it (rag-search, and both answer
 * entries): the configured embedding model and rerank stage over the search repository.
 */
import type { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import type { Embedder, Log, MetricsSink } from '../../core/ports';
import { createSearch, type Search } from '../../core/retrieval/search';
import type { Database } from '../postgres/database';
import { createSearchRepository } from '../postgres/search-repository';
import { rerankFromEnv } from '../rerank/rerank-factory';
import { embedderFromEnv, liveEmbedderFromEnv } from './embedder-from-env';
import type { LambdaEnv } from './lambda-env';
import { secretReader } from './secret-string';

export function searchFromEnv(
  env: LambdaEnv,
  deps: {
    /** The reads' database (postgres/databases.ts): the writer when there is no reader. */
    readonly reads: Database;
    /** The function's (traced) Bedrock client, used when a Bedrock model is configured. */
    readonly bedrock: BedrockRuntimeClient;
    readonly log: Log;
    readonly metrics: MetricsSink;
  },
): { search: Search; embedder: Embedder } {
  // During a model switch, queries are embedded with the model search still reads.
  const embedder = liveEmbedderFromEnv(
    env,
    embedderFromEnv(env, () => deps.bedrock),
    deps.reads,
    () => deps.bedrock,
  );
  const rerank = rerankFromEnv(env.RERANK_PROVIDER, env, 'RERANK_', {
    bedrockClient: () => deps.bedrock,
    readSecret: secretReader(env.AWS_REGION),
  });
  const search = createSearch({
    store: createSearchRepository(deps.reads),
    embedder,
    reranker: rerank.reranker,
    settings: { rerank: rerank.settings, globalTenants: env.PUBLISHING_TENANTS },
    log: deps.log,
    metrics: deps.metrics,
  });
  return { search, embedder };
}
