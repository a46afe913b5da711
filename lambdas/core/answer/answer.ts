/**
 * The answer use case, one step a function, each returning what it came to:
 *
 * 1. the thread (found, opened or created) and its history;
 * 2. the intent: a greeting is `conversational`, answered without retrieval; the message is
 *    stored (a question with its vector, for the caller's memory) and the profile is chosen;
 * 3. the preparation (./preparation.ts): the standalone question, retrieval (a failure is
 *    degraded or thrown, as the route's `onRetrievalFailure` says), memory, context, the
 *    confidence gate and the prompt;
 * 4. the reply (./reply.ts): `refused` below the gate, `extractive` without an LLM, `generated`
 *    by the LLM, or `fallback` (the top sources) when the LLM fails after its retries; then its
 *    citations;
 * 5. the answer stored and counted (./thread.ts, ./outcome.ts); storing degrades.
 *
 * Every step is timed for `debug` (./timeline.ts). `prepare` is step 3 on its own, with no
 * thread, no storage and no generation: what the test harness (`groundwork harness`,
 * POST /api/admin/harness) shows.
 */
import { randomUUID } from 'node:crypto';
import type { Clock, Embedder, Log, MetricsSink, TokenCounter } from '../ports';
import { noMetrics, silentLog, systemClock } from '../ports';
import type { SearchFilters } from '../retrieval/filters';
import type { Search } from '../retrieval/search';
import type { AppliedSourceTypes } from '../retrieval/source-types';
import type { SearchHit } from '../retrieval/types';
import { createBackground, type Background, type BackgroundStats } from './background';
import { CALIBRATIONS, resolveCalibration } from './calibrations';
import type { ConfidenceCalibration, ConfidenceLevel, GateVerdict } from './confidence';
import { DEFAULT_CONTEXT_SETTINGS, type ContextBlock, type ContextSettings } from './context';
import type {
  AnswerFlags,
  ConversationStore,
  Owner,
  PromptConfig,
  PromptStore,
  StoredCitation,
} from './conversations';
import { conversationalReply, isConversational } from './intent';
import type { ChatMessage, GenerationRequest, LlmProvider, TokenUsage } from './llm';
import { answerResult, countAnswer, settle, storedMessage, type AnswerOutcome } from './outcome';
import { prepareAnswer } from './preparation';
import { profileFor, type ChosenProfile } from './profile';
import { cite, reply } from './reply';
import { openThread, recordQuestion, storeAnswer, threadHistory } from './thread';
import { createTimeline, type PipelineStep, type Timeline } from './timeline';

export { chooseProfile } from './profile';
export { INSUFFICIENT_CONTEXT_TEXT } from './reply';
export type { PipelineStep } from './timeline';
export interface AnswerSettings {
  readonly calibrationByModel: Readonly<Record<string, ConfidenceCalibration>>;
  /** Values the deployment sets over the model's calibration (see resolveCalibration). */
  readonly calibrationOverrides?: Partial<ConfidenceCalibration>;
  readonly context: ContextSettings;
  readonly defaultTopK: number;
  readonly extractiveSentences: number;
  readonly snippetLength: number;
}

const DEFAULT_ANSWER_SETTINGS: AnswerSettings = {
  calibrationByModel: CALIBRATIONS,
  context: DEFAULT_CONTEXT_SETTINGS,
  defaultTopK: 8,
  extractiveSentences: 2,
  snippetLength: 200,
};

export interface AnswerRequest {
  readonly queryText: string;
  readonly threadId?: string;
  /**
   * What a `threadId` that is not a live thread of the caller's opens instead of a 404 (the
   * caller names its conversations): the first of `createAs` that is the caller's thread or that
   * no thread has yet, started then; an id another owner has is passed over.
   * @default none: a 404
   */
  readonly missingThread?: { readonly createAs: readonly string[] };
  readonly profile?: string;
  /** The profile family to choose in (ProfileConstraints.family); none: the unnamed one. */
  readonly profileFamily?: string;
  readonly topK?: number;
  readonly filters: SearchFilters;
  readonly useMemory: boolean;
  readonly memory: { readonly limit: number; readonly tokenBudget: number };
  readonly maxTokens: number;
  readonly temperature: number;
  /** The language the answer is written in (a BCP 47 tag); unset: the question's. */
  readonly language?: string;
  /**
   * Documents the caller points at: their best chunks for the question join the context ahead of
   * what retrieval finds, whatever the profile's source types; documents outside the caller's
   * scope are not found, as in any search.
   */
  readonly pinnedDocumentIds?: readonly string[];
  readonly debug: boolean;
  /** Answer a greeting or a thank-you without retrieval. @default true */
  readonly greetings?: boolean;
  /**
   * When retrieval fails: `degrade` answers without context (flagged `retrieval_failed`), `fail`
   * throws the retrieval's error (a 5xx, `retryable`). @default 'degrade'
   */
  readonly onRetrievalFailure?: RetrievalFailurePolicy;
}

/** What a failing retrieval does: answer without context (`degrade`) or throw (`fail`). */
export type RetrievalFailurePolicy = 'degrade' | 'fail';

type AnswerCitation = StoredCitation;

export interface AnswerResult {
  readonly status: 'success' | 'insufficient_context';
  readonly queryText: string;
  readonly threadId: string;
  readonly messageId: string;
  readonly profile: string;
  readonly answer: {
    text: string;
    confidence: ConfidenceLevel | null;
    /** The model that wrote the text; null when nothing generated it (a refusal, a greeting). */
    model: string | null;
    generatedAt: string;
  };
  readonly citations: AnswerCitation[];
  readonly contextUsed: { chunksRetrieved: number; uniqueSources: number; avgRelevance: number };
  /** The confidence gate's thresholds in force (the model's calibration, or the deployment's). */
  readonly thresholds: { readonly high: number; readonly medium: number };
  /**
   * Why the LLM produced no answer, when it was called and failed: the answer is then the
   * retrieved sources (`fallback_to_generic`). `throttled`: the provider refused for rate.
   */
  readonly llmFailure: { readonly throttled: boolean } | null;
  readonly usage: TokenUsage | null;
  readonly flags: AnswerFlags;
  readonly processingTimeMs: number;
  readonly debug?: {
    prompt: string | null;
    steps: PipelineStep[];
    chunks: SearchHit[];
    standaloneQuery: string;
  };
}

/** What `prepare` is asked: a question, and how to retrieve and prompt for it. */
export interface PrepareRequest {
  readonly queryText: string;
  readonly profile?: string;
  /** The profile family to choose in (AnswerRequest.profileFamily). */
  readonly profileFamily?: string;
  readonly topK?: number;
  readonly filters: SearchFilters;
  readonly maxTokens: number;
  readonly temperature: number;
  /** The language the answer is written in (AnswerRequest.language). */
  readonly language?: string;
  /** Documents the caller points at (AnswerRequest.pinnedDocumentIds). */
  readonly pinnedDocumentIds?: readonly string[];
}

/** One context block as the answer would cite it: its marker in the prompt and its citation. */
export interface Evidence {
  /** The `[n]` the prompt numbers the block with and an answer cites it by. */
  readonly marker: string;
  readonly citation: AnswerCitation;
  /** The retrieved chunks the block holds. */
  readonly chunkIds: readonly string[];
}

/** What generation does with a prepared answer. */
export type NextStep =
  /** A greeting: answered without retrieval (the answer route does not prepare it). */
  | 'conversational'
  /** Retrieval failed: the LLM answers without context. */
  | 'generate_without_context'
  /** Confidence is low: no LLM call, the closest passages are listed. */
  | 'insufficient_context'
  /** The offline extractive answerer quotes the context. */
  | 'extract'
  /** The LLM is called with the prompt. */
  | 'generate';

/** Everything before generation: retrieval, context, evidence, the gate and the prompt. */
export interface PreparedAnswer {
  readonly question: string;
  readonly standaloneQuery: string;
  readonly profile: PromptConfig;
  readonly hits: SearchHit[];
  readonly retrievalFailed: boolean;
  /** The tenant's source-type policy as retrieval applied it (null: retrieval did not run). */
  readonly sourceTypes: AppliedSourceTypes | null;
  /** The caller's own similar past messages put in the prompt. */
  readonly memory: string[];
  readonly blocks: ContextBlock[];
  readonly evidence: Evidence[];
  readonly gate: GateVerdict;
  /** Null when retrieval failed (no level is claimed). */
  readonly confidence: ConfidenceLevel | null;
  readonly background: BackgroundStats | null;
  readonly prompt: GenerationRequest & { rendered: string };
  readonly next: NextStep;
  /** The query vector retrieval used (null: embedding failed). */
  readonly retrievalEmbedding: number[] | null;
  readonly steps: PipelineStep[];
}

export interface AnswerDeps {
  readonly search: Search;
  readonly embedder: Embedder;
  readonly tokens: TokenCounter;
  readonly conversations: ConversationStore;
  readonly prompts: PromptStore;
  /** Null: the offline extractive answerer. */
  readonly llm: LlmProvider | null;
  readonly settings?: Partial<AnswerSettings>;
  readonly clock?: Clock;
  readonly log?: Log;
  readonly metrics?: MetricsSink;
}

export interface AnswerHooks {
  /** Receives answer text as it is produced (streaming). */
  readonly onDelta?: (text: string) => void;
  readonly signal?: AbortSignal;
}

export interface Answering {
  answer(identity: Owner, request: AnswerRequest, hooks?: AnswerHooks): Promise<AnswerResult>;
  /**
   * The answer's preparation for `request` in the caller's scope (the same steps `answer` runs),
   * without a thread, without storing anything and without calling the LLM.
   */
  prepare(identity: Owner, request: PrepareRequest): Promise<PreparedAnswer>;
}

/** The pipeline's dependencies, with their defaults and the gate's calibration resolved. */
export interface PipelineDeps extends Omit<AnswerDeps, 'settings' | 'clock' | 'log' | 'metrics'> {
  readonly settings: AnswerSettings;
  readonly clock: Clock;
  readonly log: Log;
  readonly metrics: MetricsSink;
  readonly calibration: ConfidenceCalibration;
  /** The query's similarity to unrelated text, which the gate measures cosines against. */
  readonly background: Background;
}

/** An answer and the outcome it came from. */
export interface Answered {
  readonly outcome: AnswerOutcome;
  readonly result: AnswerResult;
}

/** The answer use case with each answer's outcome (`createAnswering` without it). */
export interface AnswerPipeline {
  answer(identity: Owner, request: AnswerRequest, hooks?: AnswerHooks): Promise<Answered>;
  prepare: Answering['prepare'];
}

/** A greeting or a thank-you is answered without retrieval. */
type Intent = { readonly kind: 'conversational' } | { readonly kind: 'question' };

function classifyIntent(question: string, greetings: boolean): Intent {
  return greetings && isConversational(question)
    ? { kind: 'conversational' }
    : { kind: 'question' };
}

function resolveDeps(deps: AnswerDeps): PipelineDeps {
  const settings: AnswerSettings = { ...DEFAULT_ANSWER_SETTINGS, ...deps.settings };
  return {
    ...deps,
    settings,
    clock: deps.clock ?? systemClock,
    log: deps.log ?? silentLog,
    metrics: deps.metrics ?? noMetrics,
    calibration: resolveCalibration(
      deps.embedder.modelId,
      settings.calibrationOverrides,
      settings.calibrationByModel,
    ),
    background: createBackground(deps.embedder),
  };
}

export function createAnswerPipeline(answerDeps: AnswerDeps): AnswerPipeline {
  const deps = resolveDeps(answerDeps);

  /** The reply to a greeting, written without retrieval or an LLM. */
  function converse(question: string, hooks: AnswerHooks): AnswerOutcome {
    const text = conversationalReply(question);
    hooks.onDelta?.(text);
    return { kind: 'conversational', text };
  }

  /** A question: prepared, replied to, cited. */
  async function answerQuestion(
    identity: Owner,
    request: AnswerRequest,
    hooks: AnswerHooks,
    timeline: Timeline,
    profile: ChosenProfile,
    asked: { history: ChatMessage[]; embedding: number[] | null; id: string },
  ): Promise<AnswerOutcome> {
    const prepared = await prepareAnswer(deps, identity, request, profile, {
      history: asked.history,
      questionEmbedding: asked.embedding,
      memory: request.useMemory ? { ...request.memory, excludeMessageId: asked.id } : null,
      debug: request.debug,
      onRetrievalFailure: request.onRetrievalFailure ?? 'degrade',
    });
    timeline.append(prepared.steps);
    const answer = await reply(deps, timeline, prepared, hooks);
    const citations = await cite(timeline, answer, prepared);
    return { ...answer, prepared, citations };
  }

  return {
    async answer(identity, request, hooks = {}) {
      const started = performance.now();
      const timeline = createTimeline(request.debug);
      const question = request.queryText.trim();
      // A request refused (an unknown profile, another tenant's org_id, a source type a strict
      // policy does not serve) writes nothing: no thread, no question.
      const profile = await profileFor(deps.prompts, identity.tenantId, question, request);
      await deps.search.admit(identity, request.filters);
      const thread = await openThread(deps, timeline, identity, request, question);
      const history = await threadHistory(deps, identity, request, thread.id);
      const intent = classifyIntent(question, request.greetings ?? true);
      const asked = await recordQuestion(
        deps,
        timeline,
        identity,
        thread.id,
        question,
        intent.kind === 'question',
      );
      const outcome =
        intent.kind === 'conversational'
          ? converse(question, hooks)
          : await answerQuestion(identity, request, hooks, timeline, profile, {
              ...asked,
              history,
            });
      const answer = settle(outcome, question, deps.settings.snippetLength);
      const record = {
        id: randomUUID(),
        threadId: thread.id,
        profile: profile.profile.profile,
        latencyMs: Math.round(performance.now() - started),
      };
      await storeAnswer(deps, timeline, identity, thread.id, storedMessage(answer, record));
      countAnswer(deps.metrics, answer);
      const result = answerResult(answer, {
        ...record,
        generatedAt: deps.clock.now(),
        thresholds: deps.calibration,
        steps: request.debug ? timeline.steps : null,
      });
      return { outcome, result };
    },

    async prepare(identity, request) {
      const question = request.queryText.trim();
      const profile = await profileFor(deps.prompts, identity.tenantId, question, request);
      const prepared = await prepareAnswer(deps, identity, request, profile, {
        history: [],
        questionEmbedding: null,
        memory: null,
        debug: true,
        onRetrievalFailure: 'degrade',
      });
      return isConversational(question) ? { ...prepared, next: 'conversational' } : prepared;
    },
  };
}

export function createAnswering(deps: AnswerDeps): Answering {
  const pipeline = createAnswerPipeline(deps);
  return {
    answer: async (identity, request, hooks) =>
      (await pipeline.answer(identity, request, hooks)).result,
    prepare: (identity, request) => pipeline.prepare(identity, request),
  };
}
