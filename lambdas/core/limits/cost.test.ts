import { DEFAULT_LIMITS_CONFIG, parseLimitsConfig } from './config';
import { estimateCostMicroUsd, microUsdToUsd, priceOf } from './cost';

describe('answer cost estimation', () => {
  const config = DEFAULT_LIMITS_CONFIG;

  it('prices tokens in and out at the model price: USD per million tokens x tokens = micro-USD', () => {
    // Claude 3 Haiku: $0.25 in, $1.25 out per million tokens.
    const cost = estimateCostMicroUsd(
      { inputTokens: 2_000, outputTokens: 400 },
      'bedrock/anthropic.claude-3-haiku-20240307-v1:0',
      config,
    );
    expect(cost).toBe(2_000 * 0.25 + 400 * 1.25);
    expect(microUsdToUsd(cost)).toBeCloseTo(0.001);
  });

  it('matches versions and cross-region inference profiles by the longest price key', () => {
    expect(priceOf('bedrock/us.anthropic.claude-3-5-haiku-20241022-v1:0', config).key).toBe(
      'anthropic.claude-3-5-haiku',
    );
    expect(priceOf('anthropic.claude-3-haiku-20240307-v1:0', config).key).toBe(
      'anthropic.claude-3-haiku',
    );
    const custom = parseLimitsConfig({
      prices: {
        'anthropic.claude-3-5-sonnet-20241022-v2': {
          inputPerMillionTokens: 1,
          outputPerMillionTokens: 1,
        },
      },
    });
    expect(priceOf('bedrock/eu.anthropic.claude-3-5-sonnet-20241022-v2:0', custom).key).toBe(
      'anthropic.claude-3-5-sonnet-20241022-v2',
    );
    expect(priceOf('bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0', custom).key).toBe(
      'anthropic.claude-3-5-sonnet',
    );
  });

  it('charges the unknown-model price for a model missing from the table, and nothing for the extractive answerer', () => {
    expect(priceOf('openai/llama3.1', config)).toEqual({
      key: null,
      price: config.unknownModelPrice,
    });
    expect(
      estimateCostMicroUsd({ inputTokens: 1000, outputTokens: 1000 }, 'openai/llama3.1', config),
    ).toBe(1000 * 3 + 1000 * 15);
    expect(
      estimateCostMicroUsd({ inputTokens: 5000, outputTokens: 300 }, 'extractive', config),
    ).toBe(0);
  });

  it('rounds up to whole micro-USD without float noise, and clamps nonsense token counts', () => {
    // Nova Micro: $0.035 in; 1000 x 0.035 is 35.00000000000001 in floating point.
    expect(
      estimateCostMicroUsd(
        { inputTokens: 1000, outputTokens: 0 },
        'amazon.nova-micro-v1:0',
        config,
      ),
    ).toBe(35);
    expect(
      estimateCostMicroUsd({ inputTokens: 1, outputTokens: 0 }, 'amazon.nova-micro-v1:0', config),
    ).toBe(1);
    expect(
      estimateCostMicroUsd(
        { inputTokens: -50, outputTokens: 0 },
        'anthropic.claude-3-haiku',
        config,
      ),
    ).toBe(0);
  });
});
