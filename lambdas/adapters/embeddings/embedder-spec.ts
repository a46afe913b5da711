/**
 * A model's settings as the index records them (embedding_config.settings and
 * embedding_switch.settings, migrations/0019): the provider and its settings without the bearer
 * key, so that any process can build the embedder of the live model while it is configured with
 * the target of a switch. A Secrets Manager ARN is a reference, not a secret, and is kept.
 */
import type { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import type { ModelRecord } from '../../core/embedding/models';
import { ConfigError } from '../../core/errors';
import type { Embedder } from '../../core/ports';
import * as z from '../../core/zod';
import { createConfiguredEmbedder, type EmbedderDeps } from './embedder-factory';
import { embeddingEnvShape, type EmbeddingSettings } from './embedding-env';

/** `local`: the model shipped in npm (the embedded default only). */
export type EmbeddingProvider = 'local' | 'bedrock' | 'openai';

export interface EmbedderSpec {
  readonly provider: EmbeddingProvider;
  readonly settings: EmbeddingSettings;
}

/** The spec to record for a configured model: its settings minus the bearer key. */
export function embedderSpec(
  provider: EmbeddingProvider,
  settings: EmbeddingSettings,
): EmbedderSpec {
  return {
    provider,
    settings: Object.fromEntries(Object.entries(settings).filter(([k]) => k !== 'API_KEY')),
  };
}

const storedSchema = z.object({
  provider: z.enum(['local', 'bedrock', 'openai']),
  settings: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
});
const settingsSchema = z.object(embeddingEnvShape(''));

/** What `build` needs besides the record. */
export interface SpecDeps {
  /** The process's Bedrock client; absent: a `bedrock` record is refused. */
  readonly bedrockClient?: () => BedrockRuntimeClient;
  readonly readSecret?: EmbedderDeps['readSecret'];
  /** Loads the shipped local model (the embedded default); absent: a `local` record is refused. */
  readonly local?: () => Promise<Embedder>;
  /**
   * The process's own settings: their bearer key is lent to a recorded `openai` model on the same
   * base URL (the key itself is never recorded).
   */
  readonly configured?: EmbeddingSettings;
}

/**
 * The spec of a model recorded before settings were (migrations/0019), from its id alone: the
 * local model, or a Bedrock model (`<Bedrock model id>/<dimension>`, the only other provider
 * then), whose id and dimension are all its settings. An OpenAI-compatible server's id does not
 * name its URL: null.
 */
function specOfUnrecordedSettings(modelId: string): EmbedderSpec | null {
  if (modelId.startsWith('local/')) return { provider: 'local', settings: {} };
  const bedrock = /^((?:amazon|cohere)\.[a-z0-9.:-]+)\/(\d+)$/.exec(modelId);
  if (!bedrock) return null;
  const settings = z.safeParse(settingsSchema, { MODEL_ID: bedrock[1], DIMENSION: bedrock[2] });
  return settings.success ? { provider: 'bedrock', settings: settings.data } : null;
}

/**
 * Builds the embedder of a recorded model (the live one, during a switch). A record without
 * settings (made before they were recorded) builds the local model or a Bedrock model, named by
 * its id.
 * @throws ConfigError when the record cannot be built here, or builds another model than it names.
 */
export async function embedderFromRecord(record: ModelRecord, deps: SpecDeps): Promise<Embedder> {
  const cannot = (why: string) =>
    new ConfigError(
      `The index's live embedding model "${record.modelId}" cannot be built by this process (${why}), ` +
        'so queries cannot be embedded during the switch. Configure that model again, or re-embed ' +
        'with the server stopped: `groundwork reembed`.',
    );
  let spec: EmbedderSpec;
  if (record.settings === null) {
    const legacy = specOfUnrecordedSettings(record.modelId);
    if (!legacy) throw cannot('its settings were not recorded');
    spec = legacy;
  } else {
    const parsed = z.safeParse(storedSchema, record.settings);
    if (!parsed.success) throw cannot('its recorded settings are not readable');
    const settings = z.safeParse(
      settingsSchema,
      Object.fromEntries(Object.entries(parsed.data.settings).map(([k, v]) => [k, String(v)])),
    );
    if (!settings.success) throw cannot('its recorded settings are not valid');
    spec = { provider: parsed.data.provider, settings: settings.data };
  }
  let embedder: Embedder;
  if (spec.provider === 'local') {
    if (!deps.local) throw cannot('the local model exists in the embedded default only');
    embedder = await deps.local();
  } else {
    const { bedrockClient } = deps;
    if (spec.provider === 'bedrock' && !bedrockClient) throw cannot('it has no AWS client');
    const lent =
      spec.provider === 'openai' &&
      deps.configured?.API_KEY !== undefined &&
      deps.configured.BASE_URL === spec.settings.BASE_URL
        ? { API_KEY: deps.configured.API_KEY }
        : {};
    try {
      embedder = createConfiguredEmbedder(
        spec.provider,
        { ...spec.settings, ...lent },
        'recorded ',
        {
          bedrockClient:
            bedrockClient ??
            (() => {
              throw cannot('it has no AWS client');
            }),
          ...(deps.readSecret ? { readSecret: deps.readSecret } : {}),
        },
      );
    } catch (err) {
      throw err instanceof ConfigError ? cannot(err.message) : err;
    }
  }
  if (embedder.modelId !== record.modelId || embedder.dimension !== record.dimension) {
    await embedder.close?.();
    throw cannot(`its settings build "${embedder.modelId}" (${embedder.dimension} dimensions)`);
  }
  return embedder;
}
