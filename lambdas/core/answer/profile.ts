/**
 * The prompt profile an answer is written with: the one the request names, else the first whose
 * keywords occur in the question, within the request's profile family.
 */
import { ConflictError, ValidationError } from '../errors';
import type { PromptConfig, PromptStore } from './conversations';

/** Whether one of a profile's keyword phrases occurs in ` question ` (lower case, padded). */
function phraseOccurs(padded: string, phrase: string): boolean {
  // `a & b`: every part occurs (the seed's "keyword and why"); otherwise the phrase as written.
  const parts = phrase.includes(' & ') ? phrase.split(' & ') : [phrase];
  return parts.every((p) => p.trim() !== '' && padded.includes(p.toLowerCase()));
}

/**
 * Picks the profile within a family (`constraints.family`; no family: the profiles without one):
 * the explicit one, else the first by `priority` (then name) whose keywords occur in the
 * question, else the family's fallback (`general` for the unnamed family).
 */
export function chooseProfile(
  question: string,
  configs: readonly PromptConfig[],
  explicit?: string,
  family?: string,
): PromptConfig {
  const profiles = configs.filter(
    (c) => c.profile !== '_system' && (c.constraints.family ?? undefined) === family,
  );
  if (explicit) {
    const found = profiles.find((c) => c.profile === explicit);
    if (!found)
      throw new ValidationError(
        `profile: unknown profile "${explicit}"; available: ${profiles.map((p) => p.profile).join(', ')}`,
      );
    return found;
  }
  const isFallback = (c: PromptConfig) =>
    c.constraints.fallback === true || (family === undefined && c.profile === 'general');
  const q = ` ${question.toLowerCase()} `;
  const detected = [...profiles]
    .sort(
      (a, b) =>
        (a.constraints.priority ?? 100) - (b.constraints.priority ?? 100) ||
        a.profile.localeCompare(b.profile),
    )
    .find((c) => !isFallback(c) && (c.constraints.keywords ?? []).some((k) => phraseOccurs(q, k)));
  const chosen = detected ?? profiles.find(isFallback) ?? profiles[0];
  // A tenant's admin can move every profile out of a family with versions of their own: a conflict
  // with the tenant's configuration, which an admin resolves, not a failure of the service.
  if (!chosen)
    throw new ConflictError(
      'no_profile',
      `No answer profile is configured${family ? ` in the family "${family}"` : ''} for this tenant: ` +
        "a tenant admin can activate a profile's built-in version again (POST /api/admin/prompts/{id}/activate).",
    );
  return chosen;
}

/** The chosen profile and the tenant's system prompt (the `_system` profile's instructions). */
export interface ChosenProfile {
  readonly profile: PromptConfig;
  readonly systemPrompt: string;
}

/** Chooses the profile among the tenant's active configurations (see chooseProfile). */
export async function profileFor(
  prompts: PromptStore,
  tenantId: string,
  question: string,
  request: { readonly profile?: string; readonly profileFamily?: string },
): Promise<ChosenProfile> {
  const configs = await prompts.activeConfigs(tenantId);
  return {
    profile: chooseProfile(question, configs, request.profile, request.profileFamily),
    systemPrompt: configs.find((c) => c.profile === '_system')?.instructions ?? '',
  };
}
