/**
 * Building the live model's embedder from what the index records, including records made before
 * settings were recorded (migrations/0019), which name the model only. Nothing is embedded here:
 * building an embedder calls no model.
 */
import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import type { ModelRecord } from '../../core/embedding/models';
import { ConfigError } from '../../core/errors';
import { embedderFromRecord, embedderSpec } from './embedder-spec';

const deps = { bedrockClient: () => new BedrockRuntimeClient({ region: 'us-east-1' }) };
const unrecorded = (modelId: string, dimension: number): ModelRecord => ({
  modelId,
  dimension,
  settings: null,
});

describe('embedderFromRecord', () => {
  it.each([
    ['amazon.titan-embed-text-v2:0/1024', 1024],
    ['amazon.titan-embed-text-v2:0/256', 256],
    ['cohere.embed-english-v3/1024', 1024],
    ['cohere.embed-multilingual-v3/1024', 1024],
  ])('builds %s from its id when its settings were not recorded', async (modelId, dimension) => {
    const embedder = await embedderFromRecord(unrecorded(modelId, dimension), deps);
    expect(embedder).toMatchObject({ modelId, dimension });
  });

  it.each([
    // An OpenAI-compatible server's id does not say where the server is.
    [unrecorded('openai/nomic-embed-text/768', 768), /settings were not recorded/],
    // The id and the recorded dimension disagree: the model it builds is another.
    [
      unrecorded('amazon.titan-embed-text-v2:0/1024', 512),
      /its settings build "amazon\.titan-embed-text-v2:0\/1024" \(1024 dimensions\)/,
    ],
    // Titan v2 has no 300-dimension output.
    [unrecorded('amazon.titan-embed-text-v2:0/300', 300), /DIMENSION must be 256, 512 or 1024/],
    [unrecorded('some.other-model/512', 512), /settings were not recorded/],
  ])('refuses %j with instructions', async (record, reason) => {
    const err = await embedderFromRecord(record, deps).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(reason);
    expect((err as Error).message).toMatch(/groundwork reembed/);
  });

  it('builds a recorded Bedrock model from its recorded settings', async () => {
    const spec = embedderSpec('bedrock', {
      MODEL_ID: 'amazon.titan-embed-text-v2:0',
      DIMENSION: 512,
    });
    const embedder = await embedderFromRecord(
      { modelId: 'amazon.titan-embed-text-v2:0/512', dimension: 512, settings: spec },
      deps,
    );
    expect(embedder.modelId).toBe('amazon.titan-embed-text-v2:0/512');
  });
});
