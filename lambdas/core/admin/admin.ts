/**
 * The admin use cases behind /api/admin: a tenant's statistics, the feedback its users gave, and the
 * prompt configurations its answers use. Only members of the admin group may call them, and an
 * admin sees and changes their own tenant only.
 *
 * The tenant's source-type policy (core/retrieval/source-types.ts) is a setting its admins read
 * and set here; retrieval applies it for every reader.
 *
 * Prompt configurations are versioned per tenant over built-in defaults: the defaults (seeded by
 * the migrations, tenant-less) apply until a tenant's admins create and activate a version of
 * their own for a profile; activating a default again, or deactivating the tenant's own active
 * version, puts the tenant back on it. A default itself cannot be deactivated: it is what a
 * profile falls back to.
 */
import { ConflictError, ForbiddenError, NotFoundError } from '../errors';
import type { PromptConfig } from '../answer/conversations';
import type { Limiter, PlanUsageReport } from '../limits/limiter';
import { checkSourceTypePolicy, type SourceTypePolicy } from '../retrieval/source-types';

export interface AdminCaller {
  readonly tenantId: string;
  readonly userId: string;
  readonly isAdmin: boolean;
}

export interface TenantStats {
  readonly documents: Readonly<Record<string, number>>;
  readonly chunks: number;
  readonly threads: number;
  readonly messages: number;
  /** Users who asked anything in the window. */
  readonly activeUsers: number;
  readonly answers: {
    readonly total: number;
    readonly byConfidence: Readonly<Record<string, number>>;
    readonly byProfile: Readonly<Record<string, number>>;
    readonly insufficientContext: number;
    readonly fallbackToGeneric: number;
  };
  readonly feedback: Readonly<Record<string, number>>;
}

export interface FeedbackEntry {
  readonly messageId: string;
  readonly threadId: string;
  readonly userId: string;
  readonly rating: 'positive' | 'negative' | 'neutral';
  readonly comment: string | null;
  readonly question: string | null;
  readonly answer: string;
  readonly confidence: string | null;
  readonly profile: string | null;
  /** When the user first rated the message; `updatedAt`: when they last changed it. */
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** Keyset position in the feedback list (newest first). */
interface FeedbackCursor {
  readonly updatedAt: string;
  readonly messageId: string;
  readonly userId: string;
}

export interface FeedbackFilter {
  readonly rating?: 'positive' | 'negative' | 'neutral';
  readonly after?: FeedbackCursor;
  readonly limit: number;
}

export interface PromptVersion extends PromptConfig {
  /** `default`: built in, shared by every tenant; `tenant`: this tenant's own. */
  readonly scope: 'default' | 'tenant';
  readonly createdAt: Date;
  readonly createdBy: string | null;
}

export interface NewPromptVersion {
  readonly profile: string;
  readonly name: string;
  readonly instructions: string;
  readonly constraints: PromptConfig['constraints'];
}

/** A tenant's source-type policy as stored; `updatedAt` null: never set (the default applies). */
export interface StoredSourceTypePolicy extends SourceTypePolicy {
  readonly updatedAt: Date | null;
  readonly updatedBy: string | null;
}

/** The database side (adapters/postgres/admin-queries.ts). */
export interface AdminStore {
  stats(tenantId: string, since: Date): Promise<TenantStats>;
  feedback(tenantId: string, filter: FeedbackFilter): Promise<FeedbackEntry[]>;
  /** The tenant's own versions and the defaults, by profile then version. */
  prompts(tenantId: string): Promise<PromptVersion[]>;
  /**
   * Adds the tenant's next version of a profile (inactive, or active when `activate`); the
   * constraints it does not state are its profile's built-in ones
   * (docs/decisions/0160-prompt-versions-inherit-the-built-in-definition.md).
   */
  createPrompt(
    tenantId: string,
    createdBy: string,
    version: NewPromptVersion,
    activate: boolean,
  ): Promise<PromptVersion>;
  /** Makes a version the tenant's active one for its profile; null if it is not the tenant's to use. */
  activatePrompt(tenantId: string, id: string): Promise<PromptVersion | null>;
  /** The tenant's source-type policy, or the default when it has none. */
  sourceTypePolicy(tenantId: string): Promise<StoredSourceTypePolicy>;
  /** Stores the tenant's source-type policy (keeping its other search settings). */
  setSourceTypePolicy(
    tenantId: string,
    updatedBy: string,
    policy: SourceTypePolicy,
  ): Promise<StoredSourceTypePolicy>;
  /** Deactivates one of the tenant's own versions; null if the tenant has no version `id`. */
  deactivatePrompt(tenantId: string, id: string): Promise<PromptVersion | null>;
}

export interface Admin {
  stats(
    caller: AdminCaller,
    windowDays: number,
  ): Promise<TenantStats & { quotaUseByPlan: PlanUsageReport[]; since: Date }>;
  feedback(caller: AdminCaller, filter: FeedbackFilter): Promise<FeedbackEntry[]>;
  prompts(caller: AdminCaller): Promise<PromptVersion[]>;
  createPrompt(
    caller: AdminCaller,
    version: NewPromptVersion,
    activate: boolean,
  ): Promise<PromptVersion>;
  activatePrompt(caller: AdminCaller, id: string): Promise<PromptVersion>;
  sourceTypePolicy(caller: AdminCaller): Promise<StoredSourceTypePolicy>;
  setSourceTypePolicy(
    caller: AdminCaller,
    policy: SourceTypePolicy,
  ): Promise<StoredSourceTypePolicy>;
  /** The tenant's own version made inactive; its profile falls back to the default. */
  deactivatePrompt(caller: AdminCaller, id: string): Promise<PromptVersion>;
}

/** 403 unless the caller is a member of the admin group (every /api/admin route). */
export function assertAdmin(caller: AdminCaller): void {
  if (!caller.isAdmin) throw new ForbiddenError('This route is for members of the admin group.');
}

export function createAdmin(deps: {
  store: AdminStore;
  limiter: Pick<Limiter, 'tenantUsageByPlan'>;
  clock?: { now(): Date };
}): Admin {
  const { store, limiter } = deps;
  const now = () => deps.clock?.now() ?? new Date();
  return {
    async stats(caller, windowDays) {
      assertAdmin(caller);
      const at = now();
      const since = new Date(at.getTime() - windowDays * 86_400_000);
      const [stats, quotaUseByPlan] = await Promise.all([
        store.stats(caller.tenantId, since),
        limiter.tenantUsageByPlan(caller.tenantId, at),
      ]);
      return { ...stats, quotaUseByPlan, since };
    },
    async feedback(caller, filter) {
      assertAdmin(caller);
      return store.feedback(caller.tenantId, filter);
    },
    async prompts(caller) {
      assertAdmin(caller);
      return store.prompts(caller.tenantId);
    },
    async createPrompt(caller, version, activate) {
      assertAdmin(caller);
      return store.createPrompt(caller.tenantId, caller.userId, version, activate);
    },
    async activatePrompt(caller, id) {
      assertAdmin(caller);
      const activated = await store.activatePrompt(caller.tenantId, id);
      if (!activated) throw new NotFoundError(`No prompt configuration ${id}`);
      return activated;
    },
    async sourceTypePolicy(caller) {
      assertAdmin(caller);
      return store.sourceTypePolicy(caller.tenantId);
    },
    async setSourceTypePolicy(caller, policy) {
      assertAdmin(caller);
      return store.setSourceTypePolicy(
        caller.tenantId,
        caller.userId,
        checkSourceTypePolicy(policy),
      );
    },
    async deactivatePrompt(caller, id) {
      assertAdmin(caller);
      const deactivated = await store.deactivatePrompt(caller.tenantId, id);
      if (deactivated) return deactivated;
      const isDefault = (await store.prompts(caller.tenantId)).some(
        (p) => p.id === id && p.scope === 'default',
      );
      if (isDefault)
        throw new ConflictError(
          'default_prompt',
          'A built-in default cannot be deactivated: activate a version of your own for its profile instead.',
        );
      throw new NotFoundError(`No prompt configuration ${id}`);
    },
  };
}
