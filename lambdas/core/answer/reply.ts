/**
 * The answer to a prepared question, as a tagged outcome: `refused` (not enough support, no LLM
 * call), `extractive` (the offline answerer quoted the context), `generated` (the LLM wrote it)
 * or `fallback` (the LLM failed after its retries: the top sources instead); then its citations.
 */
import type { AnswerHooks, PipelineDeps, PreparedAnswer } from './answer';
import { closestSources, mapCitations, type Citation } from './citations';
import type { ContextBlock } from './context';
import { EXTRACTIVE_MODEL_ID, extractiveAnswer, MIN_RELATIVE_SCORE } from './extractive';
import { LlmUnavailableError, type LlmProvider, type TokenUsage } from './llm';
import type { Timeline } from './timeline';

/** Seed 001's refusal, word for word: the citations that follow are the closest passages. */
export const INSUFFICIENT_CONTEXT_TEXT =
  "I don't have enough relevant information to answer this question confidently. Here are the most relevant sources I found:";

export type Reply =
  /**
   * The refusal. `low_confidence`: the gate found too little support and nothing was called;
   * `nothing_to_quote`: the extractive answerer found no sentence to quote.
   */
  | {
      readonly kind: 'refused';
      readonly reason: 'low_confidence' | 'nothing_to_quote';
      readonly text: string;
      /** The answerer that found nothing to quote; null when the gate refused. */
      readonly model: string | null;
    }
  | { readonly kind: 'extractive'; readonly text: string; readonly model: string }
  | {
      readonly kind: 'generated';
      readonly text: string;
      readonly model: string;
      readonly usage: TokenUsage | null;
    }
  | {
      readonly kind: 'fallback';
      readonly text: string;
      /** The model that failed. */
      readonly model: string;
      /** `throttled`: the provider refused for rate or quota. */
      readonly failure: { readonly throttled: boolean };
    };

/** The degraded answer when the LLM is down: the top sources, summarised by their first sentences. */
function fallbackAnswer(blocks: readonly ContextBlock[]): string {
  if (blocks.length === 0)
    return 'The answer service is temporarily unavailable and no relevant passages were found.';
  const lines = blocks.slice(0, 3).map((b) => {
    const first = (b.passages[0]?.text ?? '').replace(/\s+/g, ' ').trim().slice(0, 240);
    return `- ${b.title ?? b.sourceUri}: ${first}${first.length === 240 ? '…' : ''} [${b.index}]`;
  });
  return `The answer service is temporarily unavailable. The most relevant passages in your documents are:\n${lines.join('\n')}`;
}

/** Not enough support: the refusal, without calling anything. */
function refuse(hooks: AnswerHooks): Reply {
  hooks.onDelta?.(INSUFFICIENT_CONTEXT_TEXT);
  return {
    kind: 'refused',
    reason: 'low_confidence',
    text: INSUFFICIENT_CONTEXT_TEXT,
    model: null,
  };
}

/** No LLM configured: the context's sentences that best answer the question, quoted. */
async function extract(
  deps: PipelineDeps,
  timeline: Timeline,
  prepared: PreparedAnswer,
  hooks: AnswerHooks,
): Promise<Reply> {
  const text = await timeline.step('generate', async () =>
    extractiveAnswer(prepared.standaloneQuery, prepared.blocks, {
      maxSentences: deps.settings.extractiveSentences,
      // A sentence after the best one is quoted only when it scores at least this share of the
      // best (docs/confidence.md, "The extractive answerer"). What the answerer scores with it
      // on SQuAD: `groundwork eval-answers <squad-dir>` (the gold-span rate).
      minRelativeScore: MIN_RELATIVE_SCORE,
    }),
  );
  const reply: Reply = text
    ? { kind: 'extractive', text, model: EXTRACTIVE_MODEL_ID }
    : {
        kind: 'refused',
        reason: 'nothing_to_quote',
        text: INSUFFICIENT_CONTEXT_TEXT,
        model: EXTRACTIVE_MODEL_ID,
      };
  hooks.onDelta?.(reply.text);
  return reply;
}

/**
 * The LLM's answer to the prompt: streamed through `onDelta` when the caller listens, the text
 * sent so far kept in `streamed` (what the caller has, should it leave before the end).
 */
async function callLlm(
  llm: LlmProvider,
  prepared: PreparedAnswer,
  hooks: AnswerHooks,
  streamed: { text: string },
): Promise<{ text: string; usage: TokenUsage | null }> {
  const request = { ...prepared.prompt, ...(hooks.signal ? { signal: hooks.signal } : {}) };
  if (!hooks.onDelta) return llm.generate(request);
  let usage: TokenUsage | null = null;
  for await (const event of llm.stream(request)) {
    if (event.type === 'delta') {
      streamed.text += event.text;
      hooks.onDelta(event.text);
    } else usage = event.usage;
  }
  return { text: streamed.text, usage };
}

/**
 * The LLM's answer; when the LLM fails after its retries (LlmUnavailableError: throttled, timed
 * out, unreachable), the top sources instead. Any other error is a bug and is thrown.
 */
async function generate(
  deps: PipelineDeps,
  llm: LlmProvider,
  timeline: Timeline,
  prepared: PreparedAnswer,
  hooks: AnswerHooks,
): Promise<Reply> {
  const streamed = { text: '' };
  try {
    const { text, usage } = await timeline.step('generate', () =>
      callLlm(llm, prepared, hooks, streamed),
    );
    return { kind: 'generated', text, model: llm.modelId, usage };
  } catch (err) {
    if (!(err instanceof LlmUnavailableError)) throw err;
    if (hooks.signal?.aborted) {
      // The caller left before the end, and the adapter stopped the call: not an outage. The
      // answer is what was sent, and since the provider bills the call but reports its tokens
      // only at the end, they are counted here (the prompt and the text so far), so that the
      // cost caps count an answer cut short too.
      deps.log.info('the caller left before the answer was complete', {
        sent: streamed.text.length,
      });
      deps.metrics.count('AnswersAbandoned');
      return {
        kind: 'generated',
        text: streamed.text,
        model: llm.modelId,
        usage: {
          inputTokens: deps.tokens.count(prepared.prompt.rendered),
          outputTokens: deps.tokens.count(streamed.text),
        },
      };
    }
    deps.log.error('LLM failed after retries; returning the top sources', { err });
    deps.metrics.count('LlmFailures');
    const text = fallbackAnswer(prepared.blocks);
    hooks.onDelta?.(`\n\n${text}`);
    return { kind: 'fallback', text, model: llm.modelId, failure: { throttled: err.throttled } };
  }
}

/** Answers the prepared question as its next step says. */
export async function reply(
  deps: PipelineDeps,
  timeline: Timeline,
  prepared: PreparedAnswer,
  hooks: AnswerHooks,
): Promise<Reply> {
  if (prepared.next === 'insufficient_context') return refuse(hooks);
  return deps.llm
    ? generate(deps, deps.llm, timeline, prepared, hooks)
    : extract(deps, timeline, prepared, hooks);
}

/**
 * The answer's citations: the sources its markers cite, with the supporting sentences. The gate's
 * refusal lists the closest passages instead, and so does an answer without markers, unless it
 * is a refusal or was made without context.
 */
export async function cite(
  timeline: Timeline,
  answer: Reply,
  prepared: PreparedAnswer,
): Promise<Citation[]> {
  const closest = closestSources(prepared.blocks);
  if (answer.kind === 'refused' && answer.reason === 'low_confidence' && closest.length > 0)
    return closest;
  const cited = await timeline.step('cite', async () => mapCitations(answer.text, prepared.blocks));
  const insufficient = answer.kind === 'refused' || prepared.retrievalFailed;
  return cited.length === 0 && !insufficient ? closest : cited;
}
