/**
 * What answering a message came to, as one tagged value, and what each kind means for the stored
 * message, the metrics and the response: their flags, model, usage and context all follow from
 * it.
 */
import type { MetricsSink } from '../ports';
import type { SearchHit } from '../retrieval/types';
import type { AnswerResult, PreparedAnswer } from './answer';
import { storedCitation, type Citation } from './citations';
import type { ConfidenceCalibration, ConfidenceLevel } from './confidence';
import type { AnswerFlags, NewAssistantMessage, StoredCitation } from './conversations';
import type { TokenUsage } from './llm';
import type { Reply } from './reply';
import type { PipelineStep } from './timeline';

export type AnswerOutcome =
  /** A greeting or a thank-you: answered without retrieval. */
  | { readonly kind: 'conversational'; readonly text: string }
  /** A question: its preparation, the reply to it and the reply's citations. */
  | (Reply & { readonly prepared: PreparedAnswer; readonly citations: readonly Citation[] });

/** The outcome in the terms the stored message and the response use. */
export interface SettledAnswer {
  readonly question: string;
  readonly text: string;
  /** The model stored with the message: `conversational` and `none` when nothing generated it. */
  readonly storedModel: string;
  /** The model reported with the answer: null when nothing generated it. */
  readonly model: string | null;
  readonly usage: TokenUsage | null;
  /** The gate's level; null for a greeting and when retrieval failed. */
  readonly confidence: ConfidenceLevel | null;
  /** The gate's mean relevance; null for a greeting. */
  readonly avgRelevance: number | null;
  readonly hits: readonly SearchHit[];
  readonly prompt: string | null;
  /** The question retrieval ran for (the question itself unless a follow-up was rewritten). */
  readonly standaloneQuery: string;
  readonly citations: StoredCitation[];
  readonly llmFailure: { readonly throttled: boolean } | null;
  readonly flags: AnswerFlags;
}

/** The answer's flags (AnswerFlags) from its outcome. */
function flagsOf(outcome: AnswerOutcome): AnswerFlags {
  const conversational = outcome.kind === 'conversational';
  const retrievalFailed = !conversational && outcome.prepared.retrievalFailed;
  return {
    used_rag: !conversational && !retrievalFailed,
    fallback_to_generic: outcome.kind === 'fallback',
    insufficient_context: retrievalFailed || outcome.kind === 'refused',
    conversational,
    retrieval_failed: retrievalFailed,
  };
}

/** The outcome in the terms the stored message and the response use. */
export function settle(
  outcome: AnswerOutcome,
  question: string,
  snippetLength: number,
): SettledAnswer {
  const flags = flagsOf(outcome);
  if (outcome.kind === 'conversational') {
    return {
      question,
      text: outcome.text,
      storedModel: 'conversational',
      model: null,
      usage: null,
      confidence: null,
      avgRelevance: null,
      hits: [],
      prompt: null,
      standaloneQuery: question,
      citations: [],
      llmFailure: null,
      flags,
    };
  }
  const { prepared } = outcome;
  return {
    question,
    text: outcome.text,
    storedModel: outcome.model ?? 'none',
    model: outcome.model,
    usage: outcome.kind === 'generated' ? outcome.usage : null,
    confidence: prepared.confidence,
    avgRelevance: prepared.gate.avgRelevance,
    hits: prepared.hits,
    prompt: prepared.prompt.rendered,
    standaloneQuery: prepared.standaloneQuery,
    citations: outcome.citations.map((c) => storedCitation(c, snippetLength)),
    llmFailure: outcome.kind === 'fallback' ? outcome.failure : null,
    flags,
  };
}

/** Counts the answer: its confidence, a refusal or a fallback, and the tokens it used. */
export function countAnswer(metrics: MetricsSink, answer: SettledAnswer): void {
  metrics.count('Answers');
  if (answer.confidence) metrics.count(`Confidence_${answer.confidence}`);
  if (answer.flags.insufficient_context) metrics.count('InsufficientContext');
  if (answer.flags.fallback_to_generic) metrics.count('FallbackAnswers');
  if (answer.usage) {
    metrics.count('InputTokens', answer.usage.inputTokens);
    metrics.count('OutputTokens', answer.usage.outputTokens);
  }
}

/** The answer as its thread stores it (the caller's training consent is added on storing). */
export function storedMessage(
  answer: SettledAnswer,
  message: { readonly id: string; readonly profile: string; readonly latencyMs: number },
): Omit<NewAssistantMessage, 'trainingEligible'> {
  return {
    id: message.id,
    content: answer.text,
    standaloneQuery: answer.standaloneQuery === answer.question ? null : answer.standaloneQuery,
    profile: message.profile,
    confidence: answer.confidence,
    avgRelevance: answer.avgRelevance,
    citations: answer.citations,
    modelId: answer.storedModel,
    inputTokens: answer.usage?.inputTokens ?? null,
    outputTokens: answer.usage?.outputTokens ?? null,
    latencyMs: message.latencyMs,
    flags: answer.flags,
    prompt: answer.prompt,
  };
}

/** Where the answer is stored and how it was made, beyond its outcome. */
export interface AnswerRecord {
  readonly id: string;
  readonly threadId: string;
  readonly profile: string;
  readonly latencyMs: number;
  readonly generatedAt: Date;
  readonly thresholds: Pick<ConfidenceCalibration, 'high' | 'medium'>;
  /** The recorded steps, for a `debug` request; else null. */
  readonly steps: readonly PipelineStep[] | null;
}

/** The answer as the use case returns it. */
export function answerResult(answer: SettledAnswer, record: AnswerRecord): AnswerResult {
  const hits = [...answer.hits];
  return {
    status: answer.flags.insufficient_context ? 'insufficient_context' : 'success',
    queryText: answer.question,
    threadId: record.threadId,
    messageId: record.id,
    profile: record.profile,
    answer: {
      text: answer.text,
      confidence: answer.confidence,
      model: answer.model,
      generatedAt: record.generatedAt.toISOString(),
    },
    citations: answer.citations,
    contextUsed: {
      chunksRetrieved: hits.length,
      uniqueSources: new Set(hits.map((h) => h.documentId)).size,
      avgRelevance: Math.round((answer.avgRelevance ?? 0) * 10000) / 10000,
    },
    thresholds: { high: record.thresholds.high, medium: record.thresholds.medium },
    llmFailure: answer.llmFailure,
    usage: answer.usage,
    flags: answer.flags,
    processingTimeMs: record.latencyMs,
    ...(record.steps
      ? {
          debug: {
            prompt: answer.prompt,
            steps: [...record.steps],
            chunks: hits,
            standaloneQuery: answer.standaloneQuery,
          },
        }
      : {}),
  };
}
