/**
 * TokenCounter backed by `gpt-tokenizer` with the cl100k_base vocabulary (the GPT-3.5/4 and
 * text-embedding-3 encoding), used to size chunks and context budgets.
 */
import type * as Cl100k from 'gpt-tokenizer/cjs/encoding/cl100k_base';
import type { TokenCounter } from '../../core/ports';

// The package's documented `gpt-tokenizer/encoding/cl100k_base` entry point resolves through
// its "exports" map, which TypeScript's node10 resolution cannot read: types come from the
// physical CommonJS file, the value from require() so that Node, jest and esbuild all pick the
// right build (an `import` of the `cjs/` path would fail under esbuild's "import" condition).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const cl100k = require('gpt-tokenizer/encoding/cl100k_base') as typeof Cl100k;

// Documents may legitimately contain strings such as "<|endoftext|>": count them as plain text
// instead of letting the tokenizer throw on a "disallowed special token".
const PLAIN_TEXT: Parameters<typeof Cl100k.countTokens>[1] = {
  disallowedSpecial: new Set<string>(),
};

/**
 * Creates a cl100k_base token counter. Counting does not allocate the token array, and the
 * tokenizer's merge cache is shared by all counters in the process.
 */
export function createTokenCounter(): TokenCounter {
  return {
    count(text: string): number {
      return text.length === 0 ? 0 : cl100k.countTokens(text, PLAIN_TEXT);
    },
  };
}
