/**
 * TokenCounter backed by `gpt-tokenizer` with the cl100k_base vocabulary (the GPT-3.5/4 and
 * text-embedding-3 encoding), used to size chunks and context budgets.
 *
 * The vocabulary is about 1 MB of JavaScript that takes 100 to 200 ms to load, so it is
 * required on the first count, not when this module loads: a Lambda's init does not pay for it
 * (in AWS it ships beside the bundle, see SIDE_LOADED_MODULES in lib/bundling.ts), its first
 * document or answer does.
 */
import type * as Cl100k from 'gpt-tokenizer/cjs/encoding/cl100k_base';
import type { TokenCounter } from '../../core/ports';

let cl100k: typeof Cl100k | undefined;

/** The cl100k_base encoding, loaded once per process. */
function encoding(): typeof Cl100k {
  // The package's documented `gpt-tokenizer/encoding/cl100k_base` entry point resolves through
  // its "exports" map, which TypeScript's node10 resolution cannot read: types come from the
  // physical CommonJS file, the value from require() so that Node, jest and esbuild all pick the
  // right build (an `import` of the `cjs/` path would fail under esbuild's "import" condition).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (cl100k ??= require('gpt-tokenizer/encoding/cl100k_base') as typeof Cl100k);
}

// Documents may legitimately contain strings such as "<|endoftext|>": count them as plain text
// instead of letting the tokenizer throw on a "disallowed special token".
const PLAIN_TEXT: Parameters<typeof Cl100k.countTokens>[1] = {
  disallowedSpecial: new Set<string>(),
};

/**
 * Creates a cl100k_base token counter (cheap: the vocabulary loads on the first non-empty
 * count). Counting does not allocate the token array, and the tokenizer's merge cache is shared
 * by all counters in the process.
 */
export function createTokenCounter(): TokenCounter {
  return {
    count(text: string): number {
      return text.length === 0 ? 0 : encoding().countTokens(text, PLAIN_TEXT);
    },
  };
}
