/**
 * The embedding model of a Lambda's environment (`EMBEDDING_PROVIDER`, `EMBEDDING_*`). Apart from
 * lambda-wiring.ts so that an entry can load it (and the SDKs behind it) only when needed.
 */
import type { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import type { Embedder } from '../../core/ports';
import { createConfiguredEmbedder } from '../embeddings/embedder-factory';
import { embeddingSettings } from '../embeddings/embedding-env';
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
