/**
 * A tenant's source-type policy: which kinds of document (`source_type`: `faq`, `policy`,
 * `product`, ...) retrieval may return, for every reader (search, answers, the harness).
 *
 * - `permissive` (the default): with no allowlist every source type is retrieved; with one, only
 *   the listed types are, and a request naming other types is narrowed to the allowed ones (it
 *   finds nothing of the others, as if they did not exist).
 * - `strict`: an allowlist is required, only the listed types are retrieved, and a request that
 *   names a type outside it is refused (403) instead of narrowed, so a caller learns that the
 *   tenant does not serve that type rather than reading an empty result as "nothing matched".
 *
 * A profile's own `allowed_source_types` narrows further and is never refused: it is the
 * deployment's choice, not the caller's (docs/decisions/0145-harness-and-source-type-policies.md).
 */
import { ForbiddenError, ValidationError } from '../errors';

export type SourceTypeMode = 'permissive' | 'strict';

export interface SourceTypePolicy {
  readonly mode: SourceTypeMode;
  /** The types retrieval may return; null: every type (permissive only). */
  readonly allowedSourceTypes: readonly string[] | null;
}

/** A tenant without a stored policy: every source type, nothing refused. */
export const DEFAULT_SOURCE_TYPE_POLICY: SourceTypePolicy = {
  mode: 'permissive',
  allowedSourceTypes: null,
};

/** How many types an allowlist may hold. */
const MAX_ALLOWED_SOURCE_TYPES = 50;

/** A strict policy: only `types`, and a request for any other is refused. */
export function strictPolicy(types: readonly string[]): SourceTypePolicy {
  return checkSourceTypePolicy({ mode: 'strict', allowedSourceTypes: types });
}

/** A permissive policy: `types` only when given (else every type), other requested types dropped. */
export function permissivePolicy(types: readonly string[] | null = null): SourceTypePolicy {
  return checkSourceTypePolicy({ mode: 'permissive', allowedSourceTypes: types });
}

/** The policy with its allowlist deduplicated and sorted; a strict one without a list is a 422. */
export function checkSourceTypePolicy(policy: SourceTypePolicy): SourceTypePolicy {
  const types =
    policy.allowedSourceTypes === null ? null : [...new Set(policy.allowedSourceTypes)].sort();
  if (policy.mode === 'strict' && (types === null || types.length === 0))
    throw new ValidationError(
      'allowed_source_types: a strict policy needs at least one source type',
    );
  if (types && types.length > MAX_ALLOWED_SOURCE_TYPES)
    throw new ValidationError(
      `allowed_source_types: at most ${MAX_ALLOWED_SOURCE_TYPES} source types`,
    );
  return { mode: policy.mode, allowedSourceTypes: types };
}

/** What one retrieval ran under, for callers that show it (the harness, `debug`). */
export interface AppliedSourceTypes {
  readonly mode: SourceTypeMode;
  /** The tenant's allowlist (null: every type). */
  readonly allowed: readonly string[] | null;
  /** The types the store was limited to: the allowlist narrowed by the profile (null: all). */
  readonly effective: readonly string[] | null;
  /** Types the request named that the permissive policy left out. */
  readonly dropped: readonly string[];
}

/**
 * Applies `policy` to one retrieval: `requested` is the caller's `source_type` filter, `narrow` a
 * profile's own list. Returns the types the store is limited to, or throws 403 when a strict
 * policy meets a requested type outside its allowlist.
 */
export function applySourceTypePolicy(
  policy: SourceTypePolicy,
  requested: readonly string[] | undefined,
  narrow?: readonly string[],
): AppliedSourceTypes {
  const allowed = policy.allowedSourceTypes;
  const outside = allowed && requested ? requested.filter((t) => !allowed.includes(t)) : [];
  if (policy.mode === 'strict' && outside.length > 0)
    throw new ForbiddenError(
      `filters.source_type: this tenant's strict policy does not serve ${outside
        .map((t) => `"${t}"`)
        .join(', ')}; allowed: ${(allowed ?? []).join(', ')}`,
    );
  const effective =
    allowed && narrow ? allowed.filter((t) => narrow.includes(t)) : (allowed ?? narrow ?? null);
  return {
    mode: policy.mode,
    allowed,
    effective: effective ? [...effective] : null,
    dropped: [...new Set(outside)],
  };
}
