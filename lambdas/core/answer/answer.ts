/**
 * The answer use case, in order: decide whether retrieval is useful; find or create the thread
 * and store the question; choose the profile; make a follow-up standalone; retrieve; recall the
 * caller's memory; build the context; gate on confidence; generate (or extract); cite; store the
 * answer. Every step is timed for `debug`. Failures degrade instead of failing: retrieval down
 * answers without context, the LLM down returns the top sources, storage down still answers.
 */
import { randomUUID } from 'node:crypto';
import { AppError, NotFoundError, UnavailableError, ValidationError } from '../errors';
import type { Clock, Embedder, Log, MetricsSink, TokenCounter } from '../ports';
import { noMetrics, silentLog, systemClock } from '../ports';
import type { SearchFilters } from '../retrieval/filters';
import type { Search } from '../retrieval/search';
import type { SearchHit } from '../retrieval/types';
import { createBackground } from './background';
import { CALIBRATIONS, resolveCalibration } from './calibrations';
import { mapCitations, MAX_CITATIONS, type Citation } from './citations';
import {
  assessConfidence,
  gateEvidence,
  type ConfidenceCalibration,
  type ConfidenceLevel,
} from './confidence';
import {
  buildContext,
  DEFAULT_CONTEXT_SETTINGS,
  type ContextBlock,
  type ContextSettings,
} from './context';
import type {
  AnswerFlags,
  ConversationStore,
  Owner,
  PromptConfig,
  PromptStore,
  StoredCitation,
} from './conversations';
import { EXTRACTIVE_MODEL_ID, extractiveAnswer, MIN_RELATIVE_SCORE } from './extractive';
import { conversationalReply, isConversational } from './intent';
import { LlmUnavailableError, type ChatMessage, type LlmProvider, type TokenUsage } from './llm';
import { buildPrompt } from './prompt';
import { makeStandalone } from './standalone';

/** Seed 001's refusal, word for word: the citations that follow are the closest passages. */
export const INSUFFICIENT_CONTEXT_TEXT =
  "I don't have enough relevant information to answer this question confidently. Here are the most relevant sources I found:";

export interface AnswerSettings {
  readonly calibrationByModel: Readonly<Record<string, ConfidenceCalibration>>;
  /** Values the deployment sets over the model's calibration (see resolveCalibration). */
  readonly calibrationOverrides?: Partial<ConfidenceCalibration>;
  readonly context: ContextSettings;
  readonly defaultTopK: number;
  readonly extractiveSentences: number;
  readonly snippetLength: number;
}

export const DEFAULT_ANSWER_SETTINGS: AnswerSettings = {
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
   * A `threadId` no thread has yet starts a thread with that id (the caller names its
   * conversations) instead of answering 404. Another owner's thread is a 404 either way.
   * @default false
   */
  readonly createMissingThread?: boolean;
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
  readonly onRetrievalFailure?: 'degrade' | 'fail';
}

export interface PipelineStep {
  readonly name: string;
  readonly ms: number;
  readonly detail: unknown;
}

export type AnswerCitation = StoredCitation;

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
}

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
  if (!chosen)
    throw new Error(
      `no prompt profiles are configured${family ? ` in the family "${family}"` : ''} (the migrations seed them)`,
    );
  return chosen;
}

function citationFrom(
  block: ContextBlock,
  sentences: { start: number; end: number }[],
  snippetLength: number,
): StoredCitation {
  return {
    source_id: block.documentId,
    source_type: block.sourceType,
    source_title: block.title,
    source_uri: block.sourceUri,
    snippet: (block.passages[0]?.text ?? '').slice(0, snippetLength),
    relevance_score: Math.round(block.score * 10000) / 10000,
    meta: block.metadata,
    sentences,
  };
}

/** The degraded answer when the LLM is down: the top sources, summarised by their first sentences. */
export function fallbackAnswer(blocks: readonly ContextBlock[]): string {
  if (blocks.length === 0)
    return 'The answer service is temporarily unavailable and no relevant passages were found.';
  const lines = blocks.slice(0, 3).map((b) => {
    const first = (b.passages[0]?.text ?? '').replace(/\s+/g, ' ').trim().slice(0, 240);
    return `- ${b.title ?? b.sourceUri}: ${first}${first.length === 240 ? '…' : ''} [${b.index}]`;
  });
  return `The answer service is temporarily unavailable. The most relevant passages in your documents are:\n${lines.join('\n')}`;
}

export function createAnswering(deps: AnswerDeps): Answering {
  const settings: AnswerSettings = { ...DEFAULT_ANSWER_SETTINGS, ...deps.settings };
  const log = deps.log ?? silentLog;
  const metrics = deps.metrics ?? noMetrics;
  const clock = deps.clock ?? systemClock;
  const calibration = resolveCalibration(
    deps.embedder.modelId,
    settings.calibrationOverrides,
    settings.calibrationByModel,
  );
  const background = createBackground(deps.embedder);

  return {
    async answer(identity, request, hooks = {}) {
      const started = performance.now();
      const steps: PipelineStep[] = [];
      const step = async <T>(
        name: string,
        fn: () => Promise<T>,
        detail: (r: T) => unknown = () => undefined,
      ): Promise<T> => {
        const t0 = performance.now();
        const r = await fn();
        steps.push({
          name,
          ms: Math.round((performance.now() - t0) * 10) / 10,
          detail: request.debug ? detail(r) : undefined,
        });
        return r;
      };
      const flags = {
        used_rag: false,
        fallback_to_generic: false,
        insufficient_context: false,
        conversational: false,
        retrieval_failed: false,
      };
      const question = request.queryText.trim();
      const title = question.replace(/\s+/g, ' ').slice(0, 80);

      // 1-2. Thread, then the question itself.
      const thread = await step(
        'thread',
        async () => {
          if (request.threadId) {
            const found = request.createMissingThread
              ? ((await deps.conversations.openThread(identity, request.threadId, title)) ??
                // Created at the same moment by another request of the same owner.
                (await deps.conversations.getThread(identity, request.threadId)))
              : await deps.conversations.getThread(identity, request.threadId);
            if (!found) throw new NotFoundError('thread_id: no such thread');
            return found;
          }
          return deps.conversations.createThread(identity, title);
        },
        (t) => ({ id: t.id }),
      );
      const history: ChatMessage[] = request.threadId
        ? (
            await deps.conversations.messages(identity, thread.id, 10).catch((err: unknown) => {
              log.error('could not read thread history', { err });
              return [];
            })
          ).map((m) => ({ role: m.role, content: m.content }))
        : [];
      const conversational = (request.greetings ?? true) && isConversational(question);
      const userMessageId = randomUUID();
      let questionEmbedding: number[] | null = null;
      if (!conversational) {
        questionEmbedding = await step(
          'embed_question',
          async () => (await deps.embedder.embed([question], 'query'))[0] ?? null,
        ).catch((err: unknown) => {
          log.error('question embedding failed', { err });
          metrics.count('EmbeddingErrors');
          return null;
        });
      }
      await step('store_question', () =>
        deps.conversations.addUserMessage(identity, thread.id, {
          id: userMessageId,
          content: question,
          embedding: questionEmbedding,
        }),
      ).catch((err: unknown) => {
        log.error('could not store the question', { err });
        metrics.count('PersistErrors');
      });

      const configs = await deps.prompts.activeConfigs(identity.tenantId);
      const profile = chooseProfile(question, configs, request.profile, request.profileFamily);
      const systemPrompt = configs.find((c) => c.profile === '_system')?.instructions ?? '';

      let text: string;
      let modelId: string;
      let usage: TokenUsage | null = null;
      let hits: SearchHit[] = [];
      let blocks: ContextBlock[] = [];
      let confidence: ConfidenceLevel | null = null;
      let avgRelevance = 0;
      let citations: Citation[] = [];
      let prompt: string | null = null;
      let standalone = question;
      let llmFailure: AnswerResult['llmFailure'] = null;

      if (conversational) {
        flags.conversational = true;
        text = conversationalReply(question);
        modelId = 'conversational';
        hooks.onDelta?.(text);
      } else {
        // 4. A follow-up becomes a standalone question before retrieval.
        standalone = await step(
          'standalone_query',
          () => makeStandalone(question, history, deps.llm),
          (s) => s,
        );
        let retrievalEmbedding = questionEmbedding;
        if (standalone !== question || !retrievalEmbedding) {
          retrievalEmbedding = await deps.embedder
            .embed([standalone], 'query')
            .then((v) => v[0] ?? null)
            .catch(() => null);
        }
        const allowed = profile.constraints.allowed_source_types;
        const maxAge = profile.constraints.max_age_days;
        const filters: SearchFilters = {
          ...request.filters,
          ...(allowed
            ? {
                source_type: (request.filters.source_type ?? allowed).filter((t) =>
                  allowed.includes(t),
                ),
              }
            : {}),
          // The profile's recency window, unless the request gives its own start.
          ...(maxAge && !request.filters.date_from
            ? { date_from: new Date(clock.now().getTime() - maxAge * 86_400_000).toISOString() }
            : {}),
        };
        try {
          if (!retrievalEmbedding) throw new Error('no query embedding');
          const embedding = retrievalEmbedding;
          const topK = request.topK ?? profile.constraints.top_k ?? settings.defaultTopK;
          const pinned = [...new Set(request.pinnedDocumentIds ?? [])];
          const [result, pinnedResult] = await step(
            'retrieve',
            () =>
              Promise.all([
                deps.search.searchWithEmbedding(
                  identity,
                  {
                    queryText: standalone,
                    topK,
                    ...(profile.constraints.candidates
                      ? { candidates: profile.constraints.candidates }
                      : {}),
                    ...(profile.constraints.owner_first ? { ownerFirst: true } : {}),
                    mode: 'hybrid',
                    filters,
                    maxChunksPerSource: settings.context.maxChunksPerSource,
                  },
                  embedding,
                ),
                pinned.length > 0
                  ? deps.search.searchWithEmbedding(
                      identity,
                      {
                        queryText: standalone,
                        topK: Math.min(pinned.length, settings.context.maxSources),
                        mode: 'hybrid',
                        filters: { document_ids: pinned },
                        maxChunksPerSource: 1,
                      },
                      embedding,
                    )
                  : null,
              ]),
            ([r, p]) => ({ hits: r.hits.length, pinned: p?.hits.length ?? 0 }),
          );
          // Pointed-at documents first, then retrieval's hits, each chunk once.
          const seen = new Set<string>();
          hits = [...(pinnedResult?.hits ?? []), ...result.hits].filter(
            (h) => !seen.has(h.chunkId) && seen.add(h.chunkId),
          );
          flags.used_rag = true;
        } catch (err) {
          if (err instanceof ValidationError || (err as { status?: number }).status === 403)
            throw err;
          if (request.onRetrievalFailure === 'fail') {
            throw err instanceof AppError
              ? err
              : new UnavailableError('The embedding model is unavailable; try again shortly.', err);
          }
          log.error('retrieval failed; answering without context', { err });
          metrics.count('RetrievalFailures');
          flags.retrieval_failed = true;
          flags.insufficient_context = true;
        }

        // 5. Memory: the caller's own similar past questions, never anyone else's.
        let memory: string[] = [];
        if (request.useMemory && retrievalEmbedding) {
          const embedding = retrievalEmbedding;
          memory = await step(
            'memory',
            async () => {
              const similar = await deps.conversations.similarMessages(
                identity,
                embedding,
                request.memory.limit,
                userMessageId,
              );
              const kept: string[] = [];
              let budget = request.memory.tokenBudget;
              for (const m of similar) {
                const t = deps.tokens.count(m.content);
                if (t > budget) break;
                budget -= t;
                kept.push(m.content);
              }
              return kept;
            },
            (m) => m,
          ).catch((err: unknown) => {
            log.error('memory lookup failed; answering without memory', { err });
            metrics.count('MemoryFailures');
            return [];
          });
        }

        blocks = await step(
          'context',
          async () => buildContext(hits, deps.tokens, settings.context),
          (b) => b.map((x) => ({ index: x.index, source: x.sourceUri, tokens: x.tokens })),
        );
        const t0 = performance.now();
        // The query's similarity to unrelated text, which the gate measures cosines against.
        const queryBackground =
          retrievalEmbedding && hits.length > 0
            ? await background.of(retrievalEmbedding).catch((err: unknown) => {
                log.error('could not embed the confidence background; gating on raw cosine', {
                  err,
                });
                metrics.count('EmbeddingErrors');
                return null;
              })
            : null;
        const gate = assessConfidence(gateEvidence(standalone, hits, queryBackground), calibration);
        avgRelevance = gate.avgRelevance;
        confidence = flags.retrieval_failed ? null : gate.level;
        steps.push({
          name: 'confidence',
          ms: Math.round((performance.now() - t0) * 10) / 10,
          detail: request.debug ? { ...gate, background: queryBackground } : undefined,
        });

        const built = buildPrompt(
          {
            systemPrompt,
            profileInstructions: profile.instructions,
            blocks,
            history,
            memory,
            question,
            maxTokens: request.maxTokens,
            temperature: request.temperature,
            ...(request.language ? { language: request.language } : {}),
          },
          deps.tokens,
        );
        prompt = built.rendered;

        if (!flags.retrieval_failed && gate.level === 'low') {
          // 6. Not enough support: no LLM call at all.
          flags.insufficient_context = true;
          text = INSUFFICIENT_CONTEXT_TEXT;
          modelId = 'none';
          hooks.onDelta?.(text);
          citations = blocks.slice(0, MAX_CITATIONS).map((block) => ({ block, sentences: [] }));
        } else if (!deps.llm) {
          modelId = EXTRACTIVE_MODEL_ID;
          text = await step('generate', async () =>
            extractiveAnswer(standalone, blocks, {
              maxSentences: settings.extractiveSentences,
              minRelativeScore: MIN_RELATIVE_SCORE,
            }),
          );
          if (!text) {
            flags.insufficient_context = true;
            text = INSUFFICIENT_CONTEXT_TEXT;
          }
          hooks.onDelta?.(text);
        } else {
          const llm = deps.llm;
          modelId = llm.modelId;
          try {
            const generated = await step('generate', async () => {
              if (!hooks.onDelta)
                return llm.generate({
                  ...built,
                  ...(hooks.signal ? { signal: hooks.signal } : {}),
                });
              let acc = '';
              let doneUsage: TokenUsage | null = null;
              for await (const ev of llm.stream({
                ...built,
                ...(hooks.signal ? { signal: hooks.signal } : {}),
              })) {
                if (ev.type === 'delta') {
                  acc += ev.text;
                  hooks.onDelta?.(ev.text);
                } else doneUsage = ev.usage;
              }
              return { text: acc, usage: doneUsage, stopReason: null };
            });
            text = generated.text;
            usage = generated.usage;
          } catch (err) {
            if (!(err instanceof LlmUnavailableError)) throw err;
            llmFailure = { throttled: err.throttled };
            log.error('LLM failed after retries; returning the top sources', { err });
            metrics.count('LlmFailures');
            flags.fallback_to_generic = true;
            text = fallbackAnswer(blocks);
            hooks.onDelta?.(`\n\n${text}`);
          }
        }
        if (citations.length === 0) {
          citations = await step('cite', async () => mapCitations(text, blocks));
          // An answer without markers still shows what it was given.
          if (citations.length === 0 && !flags.insufficient_context)
            citations = blocks.slice(0, MAX_CITATIONS).map((block) => ({ block, sentences: [] }));
        }
      }

      const messageId = randomUUID();
      const answerCitations = citations.map((c) =>
        citationFrom(c.block, c.sentences, settings.snippetLength),
      );
      const latencyMs = Math.round(performance.now() - started);
      const trainingEligible = await deps.conversations
        .trainingConsent(identity)
        .catch(() => false);
      await step('store_answer', () =>
        deps.conversations.addAssistantMessage(identity, thread.id, {
          id: messageId,
          content: text,
          standaloneQuery: standalone === question ? null : standalone,
          profile: profile.profile,
          confidence,
          avgRelevance: flags.conversational ? null : avgRelevance,
          citations: answerCitations,
          modelId,
          inputTokens: usage?.inputTokens ?? null,
          outputTokens: usage?.outputTokens ?? null,
          latencyMs,
          flags,
          prompt,
          trainingEligible,
        }),
      ).catch((err: unknown) => {
        log.error('could not store the answer; answering anyway', { err });
        metrics.count('PersistErrors');
      });

      metrics.count('Answers');
      if (confidence) metrics.count(`Confidence_${confidence}`);
      if (flags.insufficient_context) metrics.count('InsufficientContext');
      if (flags.fallback_to_generic) metrics.count('FallbackAnswers');
      if (usage) {
        metrics.count('InputTokens', usage.inputTokens);
        metrics.count('OutputTokens', usage.outputTokens);
      }
      return {
        status: flags.insufficient_context ? 'insufficient_context' : 'success',
        queryText: question,
        threadId: thread.id,
        messageId,
        profile: profile.profile,
        answer: {
          text,
          confidence,
          model: flags.conversational || modelId === 'none' ? null : modelId,
          generatedAt: clock.now().toISOString(),
        },
        citations: answerCitations,
        contextUsed: {
          chunksRetrieved: hits.length,
          uniqueSources: new Set(hits.map((h) => h.documentId)).size,
          avgRelevance: Math.round(avgRelevance * 10000) / 10000,
        },
        thresholds: { high: calibration.high, medium: calibration.medium },
        llmFailure,
        usage,
        flags,
        processingTimeMs: latencyMs,
        ...(request.debug
          ? { debug: { prompt, steps, chunks: hits, standaloneQuery: standalone } }
          : {}),
      };
    },
  };
}
