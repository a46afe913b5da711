/**
 * What an answer costs: tokens in and out times the model's price, in whole micro-USD so that
 * the daily counters add exactly (DynamoDB numbers are decimal, JavaScript's are not).
 */
import type { LimitsConfig, ModelPrice } from './config';

/** Token counts as the LLM provider reports them (structurally the answer core's `TokenUsage`). */
export interface TokenCounts {
  readonly inputTokens: number;
  readonly outputTokens: number;
}

/** `bedrock/` and cross-region inference profile prefixes do not change the price. */
function normaliseModelId(modelId: string): string {
  return modelId
    .trim()
    .toLowerCase()
    .replace(/^bedrock\//, '')
    .replace(/^(us|us-gov|eu|apac|jp|au|ca|global)\./, '');
}

/** The price of a model: the longest configured key that prefixes its id, else the fallback. */
export function priceOf(
  modelId: string,
  config: Pick<LimitsConfig, 'prices' | 'unknownModelPrice'>,
): { key: string | null; price: ModelPrice } {
  const id = normaliseModelId(modelId);
  let best: { key: string; price: ModelPrice } | null = null;
  for (const [key, price] of Object.entries(config.prices)) {
    const k = normaliseModelId(key);
    if (id.startsWith(k) && (!best || k.length > normaliseModelId(best.key).length))
      best = { key, price };
  }
  return best ?? { key: null, price: config.unknownModelPrice };
}

/**
 * Estimated cost in micro-USD, rounded up: USD per million tokens times tokens is exactly
 * micro-USD. Negative or fractional token counts (a misbehaving provider) are clamped.
 */
export function estimateCostMicroUsd(
  usage: TokenCounts,
  modelId: string,
  config: Pick<LimitsConfig, 'prices' | 'unknownModelPrice'>,
): number {
  const { price } = priceOf(modelId, config);
  const tokensIn = Math.max(0, Math.ceil(usage.inputTokens));
  const tokensOut = Math.max(0, Math.ceil(usage.outputTokens));
  const raw = tokensIn * price.inputPerMillionTokens + tokensOut * price.outputPerMillionTokens;
  // Round away float noise (0.035 * 1000 = 35.00000000000001) before rounding up.
  return Math.ceil(Math.round(raw * 1e6) / 1e6);
}

/** Micro-USD as USD, for messages and the usage report. */
export function microUsdToUsd(microUsd: number): number {
  return microUsd / 1_000_000;
}
