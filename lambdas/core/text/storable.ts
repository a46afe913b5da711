/**
 * Text PostgreSQL can store. A `text` or `jsonb` value cannot hold NUL (U+0000), and a UTF-16
 * surrogate without its pair has no UTF-8 encoding at all; either fails the statement that
 * carries it. Requests are refused at the edge (lambdas/http/http-handler.ts) and ingestion
 * refuses or cleans such values (lambdas/core/ingestion), so neither reaches a query.
 */

/** NUL, a high surrogate not followed by a low one, or a low surrogate not preceded by a high one. */
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const UNSTORABLE_ALL = new RegExp(UNSTORABLE.source, 'g');

/** Whether PostgreSQL can store `text` as it is. */
export function isStorableText(text: string): boolean {
  return !UNSTORABLE.test(text);
}

/** `text` without the characters PostgreSQL cannot store (NUL and lone surrogates removed). */
export function toStorableText(text: string): string {
  return isStorableText(text) ? text : text.replace(UNSTORABLE_ALL, '');
}

/** What {@link findUnstorable} reports: where the value is, and why it is refused. */
export interface UnstorableValue {
  /** Dotted path from the root (`filters.metadata.equals.value`), `""` for the root itself. */
  readonly path: string;
  readonly reason: 'unstorable_text' | 'too_deep';
}

/**
 * The first string (value or object key) in a JSON-like value that PostgreSQL cannot store, or a
 * nesting deeper than `maxDepth`. Iterative, so a value nested a million levels deep costs
 * `maxDepth` steps down its spine, never the call stack.
 */
export function findUnstorable(value: unknown, maxDepth = 64): UnstorableValue | null {
  const stack: { value: unknown; path: readonly (string | number)[] }[] = [{ value, path: [] }];
  const at = (path: readonly (string | number)[]) => path.join('.');
  while (stack.length > 0) {
    const { value: v, path } = stack.pop()!;
    if (typeof v === 'string') {
      if (!isStorableText(v)) return { path: at(path), reason: 'unstorable_text' };
      continue;
    }
    if (typeof v !== 'object' || v === null) continue;
    if (path.length >= maxDepth) return { path: at(path), reason: 'too_deep' };
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], path: [...path, i] });
      continue;
    }
    const entries = Object.entries(v);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, child] = entries[i]!;
      if (!isStorableText(key)) return { path: at([...path, key]), reason: 'unstorable_text' };
      stack.push({ value: child, path: [...path, key] });
    }
  }
  return null;
}
