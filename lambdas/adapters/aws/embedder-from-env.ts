/**
 * The embedding model of a Lambda's environment (`EMBEDDING_PROVIDER`, `EMBEDDING_*`). Apart from
 * lambda-wiring.ts so that an entry can load it (and the SDKs behind it) only when needed.
 */
import type { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { createLiveEmbedder, type LiveEmbedder } from '../../core/embedding/live-embedder';
import type { Embedder } from '../../core/ports';
import { createConfiguredEmbedder } from '../embeddings/embedder-factory';
import { embedderFromRecord, embedderSpec, type EmbedderSpec } from '../embeddings/embedder-spec';
import { embeddingSettings } from '../embeddings/embedding-env';
import type { Queryable } from '../postgres/database';
import { readModels } from '../postgres/model-switch-store';
import type { LambdaEnv } from './lambda-env';
import { secretReader } from './secret-string';

/** `bedrockClient` is called only when the provider is Bedrock. */
export function embedderFromEnv(
  env: LambdaEnv,
  bedrockClient: () => BedrockRuntimeClient,
): Embedder {
  return createConfiguredEmbedder(
    env.EMBEDDING_PROVIDER,
    embeddingSettings(env, 'EMBEDDING_'),
    'EMBEDDING_',
    { bedrockClient, readSecret: secretReader(env.AWS_REGION) },
  );
}

/** What the index records of the configured model (its settings without the bearer key). */
export function configuredSpec(env: LambdaEnv): EmbedderSpec {
  return embedderSpec(env.EMBEDDING_PROVIDER, embeddingSettings(env, 'EMBEDDING_'));
}

/**
 * The embedder of the index's live model (core/embedding/live-embedder.ts): the configured one,
 * or during a switch to it the recorded model it replaces, built from its recorded settings.
 * `db` is where the caller's search reads, so the model and the column change together.
 */
export function liveEmbedderFromEnv(
  env: LambdaEnv,
  configured: Embedder,
  db: Queryable,
  bedrockClient: () => BedrockRuntimeClient,
): LiveEmbedder {
  return createLiveEmbedder({
    registry: { models: () => readModels(db) },
    configured,
    build: (record) =>
      embedderFromRecord(record, {
        bedrockClient,
        readSecret: secretReader(env.AWS_REGION),
        configured: embeddingSettings(env, 'EMBEDDING_'),
      }),
  });
}
