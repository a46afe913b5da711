/**
 * POST /api/lexybrain/rag (seed 000, "Ask LexyBrain") as a thin adapter over the answer use case:
 * the seed's request becomes an AnswerRequest in the `lexybrain` profile family, the AnswerResult
 * becomes the seed's response, and the core's errors become the seed's codes. Capabilities,
 * their retrieval policies and their detection are profiles of the core (migrations/0017); the
 * route only maps fields.
 */
import type { AnswerRequest, AnswerResult, Answering } from '../core/answer/answer';
import { AppError, ForbiddenError, ValidationError } from '../core/errors';
import { createHttpHandler, type HttpHandlerDeps } from '../http/http-handler';
import { chargeAnswer } from './handler';
import {
  LEXYBRAIN_PROFILE_FAMILY,
  lexybrainRagRequestSchema,
  type LexyBrainRagRequest,
  type LexyBrainRagResponse,
  type LexyBrainSourceType,
} from './lexybrain-schema';

/** The route's name for limits and metrics (it draws on the `answers` quota). */
const LEXYBRAIN_RAG_ROUTE = 'lexybrain-rag';

/** 503: the deployment has turned the route off (`LEXYBRAIN_RAG_ENABLED=false`). */
class FeatureDisabledError extends AppError {
  override name = 'FeatureDisabledError';
  constructor() {
    super('feature_disabled', 'Ask LexyBrain is turned off on this deployment.', 503, {
      expose: true,
    });
  }
}

/** 500: the answer could not be produced (a failure the pipeline does not degrade around). */
class GenerationFailedError extends AppError {
  override name = 'GenerationFailedError';
  constructor(cause: unknown) {
    super('generation_failed', 'The answer could not be generated; try again.', 500, {
      expose: true,
      cause,
    });
  }
}

/**
 * The seed's source type of a document's `source_type`: keywords and their history, trends and
 * watchlists are keyword data; listings and shops, listing data; alerts and risk rules, alerts;
 * anything else (help pages, uploads: `doc`) a document.
 */
function seedSourceType(sourceType: string): LexyBrainSourceType {
  switch (sourceType) {
    case 'keyword':
    case 'keyword_history':
    case 'trend':
    case 'watchlist':
      return 'keyword';
    case 'listing':
    case 'shop':
      return 'listing';
    case 'alert':
    case 'risk_rule':
      return 'alert';
    default:
      return 'doc';
  }
}

/** The seed's request as the use case's. */
function toLexyBrainAnswerRequest(body: LexyBrainRagRequest): AnswerRequest {
  const context = body.context ?? {};
  const pinned = [
    ...(context.keywordIds ?? []),
    ...(context.watchlistIds ?? []),
    ...(context.listingIds ?? []),
    ...(context.alertIds ?? []),
  ];
  return {
    queryText: body.message,
    ...(body.threadId ? { threadId: body.threadId } : {}),
    ...(body.capability ? { profile: body.capability } : {}),
    profileFamily: LEXYBRAIN_PROFILE_FAMILY,
    filters: {
      ...(context.timeRange
        ? { date_from: context.timeRange.from, date_to: context.timeRange.to }
        : {}),
      ...(context.marketplaces && context.marketplaces.length > 0
        ? { metadata: { in: { key: 'market', value: context.marketplaces } } }
        : {}),
    },
    ...(pinned.length > 0 ? { pinnedDocumentIds: pinned } : {}),
    useMemory: false,
    memory: { limit: 5, tokenBudget: 1000 },
    maxTokens: body.options.maxTokens,
    temperature: body.options.temperature,
    language: body.options.language,
    debug: false,
  };
}

/** The use case's result as the seed's response. */
function toLexyBrainResponse(result: AnswerResult): LexyBrainRagResponse {
  const sources = result.citations.map((c) => ({
    id: c.source_id,
    type: seedSourceType(c.source_type),
    label: c.source_title ?? c.source_uri,
    score: Math.min(1, Math.max(0, c.relevance_score)),
  }));
  const idsOf = (type: LexyBrainSourceType) =>
    sources.filter((s) => s.type === type).map((s) => s.id);
  return {
    threadId: result.threadId,
    messageId: result.messageId,
    answer: result.answer.text,
    // One of the five, or a profile a tenant's admins added to the family.
    capability: result.profile,
    sources,
    references: {
      keywords: idsOf('keyword'),
      listings: idsOf('listing'),
      alerts: idsOf('alert'),
      docs: idsOf('doc'),
    },
    model: {
      // No model wrote the answer (a greeting, or too little support to call one).
      id: result.answer.model ?? 'none',
      usage: result.usage
        ? { inputTokens: result.usage.inputTokens, outputTokens: result.usage.outputTokens }
        : null,
      latencyMs: result.processingTimeMs,
    },
    flags: {
      usedRag: result.flags.used_rag,
      fallbackToGeneric: result.flags.fallback_to_generic,
      insufficientContext: result.flags.insufficient_context,
    },
  };
}

/**
 * The core's errors in the seed's codes: the caller's faults (4xx), a cost cap and a dependency
 * that is down (503, retryable) keep theirs; anything else is 500 `generation_failed`.
 */
function toLexyBrainError(err: unknown): AppError {
  if (err instanceof AppError && err.status < 500) return err;
  if (err instanceof AppError && err.status === 503) return err;
  return new GenerationFailedError(err);
}

export interface LexyBrainRagDeps extends HttpHandlerDeps {
  readonly answering: Answering;
  /** `LEXYBRAIN_RAG_ENABLED`; false answers 503 `feature_disabled`. */
  readonly enabled: boolean;
}

/** POST /api/lexybrain/rag. */
export function makeLexyBrainRagHandler(deps: LexyBrainRagDeps) {
  return createHttpHandler(
    deps,
    { route: LEXYBRAIN_RAG_ROUTE, schema: lexybrainRagRequestSchema },
    async ({ body, identity, admission }) => {
      // The seed's order: authentication, validation, then the feature switch.
      if (!deps.enabled) throw new FeatureDisabledError();
      const planCode = body.options.planCode;
      if (planCode !== undefined) {
        if (!identity.isAdmin)
          throw new ForbiddenError('options.planCode: only members of the admin group may set it');
        if (deps.limiter && !Object.hasOwn(deps.limiter.config.plans, planCode))
          throw new ValidationError(`options.planCode: "${planCode}" is not a configured plan`);
      }
      let result: AnswerResult;
      try {
        result = await deps.answering.answer(identity, toLexyBrainAnswerRequest(body));
      } catch (err) {
        throw toLexyBrainError(err);
      }
      chargeAnswer(result, admission);
      return { body: toLexyBrainResponse(result) };
    },
  );
}
