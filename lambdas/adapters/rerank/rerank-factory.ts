/** Builds the configured Reranker and its stage settings from the settings of rerank-env.ts. */
import type { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import type * as z from '../../core/zod';
import { ConfigError } from '../../core/errors';
import {
  DEFAULT_RERANK_SETTINGS,
  type Reranker,
  type RerankSettings,
} from '../../core/retrieval/rerank';
import { AMAZON_RERANK_V1, createBedrockReranker } from './bedrock-reranker';
import { createHttpReranker } from './http-reranker';
import { configuredKey, type SecretReader } from '../secrets/bearer-key';
import type {
  RerankProvider,
  RerankSettingSchemas,
  RerankSettingSuffix as Suffix,
} from './rerank-env';

type SETTINGS = RerankSettingSchemas;

/**
 * The configured reranker and its stage settings (null reranker: no rerank stage). `env` is a
 * parsed environment holding `${prefix}*`.
 * @throws ConfigError when a setting the provider needs is missing.
 */
export function rerankFromEnv(
  provider: RerankProvider,
  env: Readonly<Record<string, unknown>>,
  prefix: string,
  deps: {
    readonly bedrockClient: () => BedrockRuntimeClient;
    /** Reads `API_KEY_SECRET_ARN`'s secret (Secrets Manager in AWS); absent: that setting is refused. */
    readonly readSecret?: SecretReader;
  },
): { reranker: Reranker | null; settings: RerankSettings } {
  const get = <K extends Suffix>(suffix: K) => env[`${prefix}${suffix}`] as z.infer<SETTINGS[K]>;
  const settings: RerankSettings = {
    candidates: get('CANDIDATES') ?? DEFAULT_RERANK_SETTINGS.candidates,
    timeoutMs: get('TIMEOUT_MS') ?? DEFAULT_RERANK_SETTINGS.timeoutMs,
  };
  switch (provider) {
    case 'none':
      return { reranker: null, settings };
    case 'bedrock':
      return {
        reranker: createBedrockReranker({
          client: deps.bedrockClient(),
          modelId: get('MODEL_ID') ?? AMAZON_RERANK_V1,
        }),
        settings,
      };
    case 'http': {
      const baseUrl = get('BASE_URL');
      const model = get('MODEL_ID');
      if (baseUrl === undefined || model === undefined) {
        throw new ConfigError(`The http reranker needs ${prefix}BASE_URL and ${prefix}MODEL_ID`);
      }
      const apiKey = configuredKey(
        { API_KEY: get('API_KEY'), API_KEY_SECRET_ARN: get('API_KEY_SECRET_ARN') },
        deps.readSecret,
        `${prefix}API_KEY_SECRET_ARN`,
      );
      return {
        reranker: createHttpReranker({ baseUrl, model, ...(apiKey ? { apiKey } : {}) }),
        settings,
      };
    }
  }
}
