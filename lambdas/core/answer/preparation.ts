/**
 * The answer's preparation, one step a function: the standalone question, retrieval in the
 * caller's scope (under the tenant's source-type policy, narrowed by the profile), the caller's
 * memory, the context, the confidence gate, the prompt, and what generation does next. Nothing
 * is stored, and the LLM is called only to rewrite a follow-up. `Answering.prepare` runs it on
 * its own (the test harness), `Answering.answer` generates from it.
 */
import { AppError, UnavailableError } from '../errors';
import type { Embedder, TokenCounter } from '../ports';
import type { SearchFilters } from '../retrieval/filters';
import type { SearchRequest } from '../retrieval/search';
import type { AppliedSourceTypes } from '../retrieval/source-types';
import type { SearchHit } from '../retrieval/types';
import type {
  Evidence,
  NextStep,
  PipelineDeps,
  PreparedAnswer,
  PrepareRequest,
  RetrievalFailurePolicy,
} from './answer';
import type { BackgroundStats } from './background';
import { storedCitation } from './citations';
import { gateQuestion, type GateVerdict } from './confidence';
import { buildContext, type ContextBlock } from './context';
import type { Owner, PromptConfig } from './conversations';
import type { ChatMessage, LlmProvider } from './llm';
import type { ChosenProfile } from './profile';
import { buildPrompt } from './prompt';
import { makeStandalone } from './standalone';
import { createTimeline, type Timeline } from './timeline';

/** What the answer pipeline hands the preparation beyond the request itself. */
export interface PrepareContext {
  /** Earlier messages of the thread, oldest first. */
  readonly history: readonly ChatMessage[];
  /** The question's vector, when the caller already embedded it. */
  readonly questionEmbedding: number[] | null;
  /** The memory lookup, when the caller asked for it. */
  readonly memory: MemoryLookup | null;
  readonly debug: boolean;
  /** What a retrieval failure does (AnswerRequest.onRetrievalFailure). */
  readonly onRetrievalFailure: RetrievalFailurePolicy;
}

interface MemoryLookup {
  readonly limit: number;
  readonly tokenBudget: number;
  /** The question just stored, which is not its own memory. */
  readonly excludeMessageId: string;
}

/** The question retrieval runs for: the question as asked, or a follow-up made standalone. */
type StandaloneQuestion =
  | { readonly kind: 'as_asked'; readonly query: string }
  | { readonly kind: 'rewritten'; readonly query: string };

/** What retrieval came to; a failure the route's policy degrades is `failed`. */
type Retrieval =
  | {
      readonly kind: 'retrieved';
      /** Pointed-at documents' chunks first, then retrieval's, each chunk once. */
      readonly hits: SearchHit[];
      /** The tenant's source-type policy as retrieval applied it. */
      readonly sourceTypes: AppliedSourceTypes | null;
    }
  | { readonly kind: 'failed' };

/** The gate's verdict and the query's background it measured cosines against. */
interface Gate {
  readonly gate: GateVerdict;
  readonly background: BackgroundStats | null;
}

/** A follow-up ("and in 2019?") becomes a standalone question before retrieval. */
async function standaloneQuestion(
  llm: LlmProvider | null,
  timeline: Timeline,
  question: string,
  history: readonly ChatMessage[],
): Promise<StandaloneQuestion> {
  const query = await timeline.step(
    'standalone_query',
    () => makeStandalone(question, [...history], llm),
    (s) => s,
  );
  return query === question ? { kind: 'as_asked', query } : { kind: 'rewritten', query };
}

/**
 * The vector retrieval searches with: the question's own when it was asked as is and already
 * embedded, else the standalone question's; null when the embedding model fails (retrieval then
 * fails too).
 */
async function queryEmbedding(
  embedder: Embedder,
  standalone: StandaloneQuestion,
  questionEmbedding: number[] | null,
): Promise<number[] | null> {
  if (standalone.kind === 'as_asked' && questionEmbedding) return questionEmbedding;
  return embedder
    .embed([standalone.query], 'query')
    .then((v) => v[0] ?? null)
    .catch(() => null);
}

/**
 * Errors of the caller's request rather than of retrieval, thrown whatever the route's
 * retrieval-failure policy: any 4xx, such as a ValidationError, a ForbiddenError (403: another
 * tenant's `org_id`, a source type the tenant's strict policy does not allow) or a value the
 * database refused as data (SQLSTATE class 22, `classifyStoreError`).
 */
function refusesRequest(err: unknown): boolean {
  return err instanceof AppError && err.status < 500;
}

/** The request's filters with the profile's recency window, unless the request sets its own start. */
function retrievalFilters(filters: SearchFilters, profile: PromptConfig, now: Date): SearchFilters {
  const maxAge = profile.constraints.max_age_days;
  return {
    ...filters,
    ...(maxAge && !filters.date_from
      ? { date_from: new Date(now.getTime() - maxAge * 86_400_000).toISOString() }
      : {}),
  };
}

/** Hybrid retrieval as the profile asks for it (its top_k, candidates, ordering and narrowing). */
function profileSearch(
  deps: PipelineDeps,
  request: PrepareRequest,
  profile: PromptConfig,
  query: string,
): SearchRequest {
  const { candidates, owner_first, allowed_source_types, top_k } = profile.constraints;
  return {
    queryText: query,
    topK: request.topK ?? top_k ?? deps.settings.defaultTopK,
    ...(candidates ? { candidates } : {}),
    ...(owner_first ? { ownerFirst: true } : {}),
    mode: 'hybrid',
    filters: retrievalFilters(request.filters, profile, deps.clock.now()),
    maxChunksPerSource: deps.settings.context.maxChunksPerSource,
    ...(allowed_source_types ? { narrowSourceTypes: allowed_source_types } : {}),
  };
}

/**
 * The best chunk of each document the caller points at, whatever the profile's source types (the
 * tenant's policy still applies, as to every reader); null when it points at none.
 */
function pinnedSearch(
  deps: PipelineDeps,
  request: PrepareRequest,
  query: string,
): SearchRequest | null {
  const pinned = [...new Set(request.pinnedDocumentIds ?? [])];
  if (pinned.length === 0) return null;
  return {
    queryText: query,
    topK: Math.min(pinned.length, deps.settings.context.maxSources),
    mode: 'hybrid',
    filters: { document_ids: pinned },
    maxChunksPerSource: 1,
  };
}

/** Each chunk once, in the order given. */
function distinctChunks(hits: readonly SearchHit[]): SearchHit[] {
  const seen = new Set<string>();
  return hits.filter((h) => !seen.has(h.chunkId) && seen.add(h.chunkId));
}

/**
 * Retrieval in the caller's scope. A failure is `failed` under the `degrade` policy (answered
 * without context) and thrown under `fail` (a retryable 5xx); the caller's own errors are thrown
 * under either.
 */
async function retrieve(
  deps: PipelineDeps,
  timeline: Timeline,
  identity: Owner,
  request: PrepareRequest,
  profile: PromptConfig,
  query: string,
  embedding: number[] | null,
  onFailure: RetrievalFailurePolicy,
): Promise<Retrieval> {
  try {
    // The question could not be embedded (recordQuestion kept going without its vector).
    if (!embedding)
      throw new UnavailableError('The embedding model is unavailable; try again shortly.');
    const pinned = pinnedSearch(deps, request, query);
    const [result, pinnedResult] = await timeline.step(
      'retrieve',
      () =>
        Promise.all([
          deps.search.searchWithEmbedding(
            identity,
            profileSearch(deps, request, profile, query),
            embedding,
          ),
          pinned ? deps.search.searchWithEmbedding(identity, pinned, embedding) : null,
        ]),
      ([r, p]) => ({
        hits: r.hits.length,
        pinned: p?.hits.length ?? 0,
        source_types: r.sourceTypes,
      }),
    );
    return {
      kind: 'retrieved',
      hits: distinctChunks([...(pinnedResult?.hits ?? []), ...result.hits]),
      sourceTypes: result.sourceTypes ?? null,
    };
  } catch (err) {
    if (refusesRequest(err)) throw err;
    if (onFailure === 'fail') {
      throw err instanceof AppError
        ? err
        : new UnavailableError('Retrieval is unavailable; try again shortly.', err);
    }
    deps.log.error('retrieval failed; answering without context', { err });
    deps.metrics.count('RetrievalFailures');
    return { kind: 'failed' };
  }
}

/** The first texts that fit in `budget` tokens together, in order. */
function withinTokenBudget(
  texts: readonly string[],
  tokens: TokenCounter,
  budget: number,
): string[] {
  const kept: string[] = [];
  let left = budget;
  for (const text of texts) {
    const n = tokens.count(text);
    if (n > left) break;
    left -= n;
    kept.push(text);
  }
  return kept;
}

/**
 * The caller's own similar past questions, never anyone else's, within the token budget; none
 * when not asked for, without a query vector, or when the lookup fails.
 */
async function recallMemory(
  deps: PipelineDeps,
  timeline: Timeline,
  identity: Owner,
  embedding: number[] | null,
  lookup: MemoryLookup | null,
): Promise<string[]> {
  if (!lookup || !embedding) return [];
  const { limit, tokenBudget, excludeMessageId } = lookup;
  return timeline
    .step(
      'memory',
      async () => {
        const similar = await deps.conversations.similarMessages(
          identity,
          embedding,
          limit,
          excludeMessageId,
        );
        return withinTokenBudget(
          similar.map((m) => m.content),
          deps.tokens,
          tokenBudget,
        );
      },
      (m) => m,
    )
    .catch((err: unknown) => {
      deps.log.error('memory lookup failed; answering without memory', { err });
      deps.metrics.count('MemoryFailures');
      return [];
    });
}

/**
 * The confidence gate on the retrieved chunks, with cosines measured against the query's
 * similarity to unrelated text (its background); on raw cosine when that cannot be embedded.
 */
async function assessGate(
  deps: PipelineDeps,
  timeline: Timeline,
  query: string,
  hits: readonly SearchHit[],
  embedding: number[] | null,
): Promise<Gate> {
  return timeline.step(
    'confidence',
    async () => {
      const background =
        embedding && hits.length > 0
          ? await deps.background.of(embedding).catch((err: unknown) => {
              deps.log.error('could not embed the confidence background; gating on raw cosine', {
                err,
              });
              deps.metrics.count('EmbeddingErrors');
              return null;
            })
          : null;
      return {
        gate: gateQuestion(query, hits, background, deps.calibration),
        background,
      };
    },
    ({ gate, background }) => ({ ...gate, background }),
  );
}

/** What generation does with the preparation (see NextStep). */
function nextStep(retrievalFailed: boolean, gate: GateVerdict, llm: LlmProvider | null): NextStep {
  if (!retrievalFailed && gate.level === 'low') return 'insufficient_context';
  if (!llm) return 'extract';
  return retrievalFailed ? 'generate_without_context' : 'generate';
}

/** The evidence an answer can cite: each context block by its marker, as its citation. */
function evidenceFrom(blocks: readonly ContextBlock[], snippetLength: number): Evidence[] {
  return blocks.map((block) => ({
    marker: `[${block.index}]`,
    citation: storedCitation({ block, sentences: [], markers: [block.index] }, snippetLength),
    chunkIds: block.passages.flatMap((p) => p.chunkIds),
  }));
}

/** The preparation, step by step (see the module's comment). */
export async function prepareAnswer(
  deps: PipelineDeps,
  identity: Owner,
  request: PrepareRequest,
  { profile, systemPrompt }: ChosenProfile,
  ctx: PrepareContext,
): Promise<PreparedAnswer> {
  const timeline = createTimeline(ctx.debug);
  const question = request.queryText.trim();
  const standalone = await standaloneQuestion(deps.llm, timeline, question, ctx.history);
  const embedding = await queryEmbedding(deps.embedder, standalone, ctx.questionEmbedding);
  const retrieval = await retrieve(
    deps,
    timeline,
    identity,
    request,
    profile,
    standalone.query,
    embedding,
    ctx.onRetrievalFailure,
  );
  const memory = await recallMemory(deps, timeline, identity, embedding, ctx.memory);
  const hits = retrieval.kind === 'retrieved' ? retrieval.hits : [];
  const blocks = await timeline.step(
    'context',
    async () => buildContext(hits, deps.tokens, deps.settings.context),
    (b) => b.map((x) => ({ index: x.index, source: x.sourceUri, tokens: x.tokens })),
  );
  const { gate, background } = await assessGate(deps, timeline, standalone.query, hits, embedding);
  const prompt = buildPrompt(
    {
      systemPrompt,
      profileInstructions: profile.instructions,
      blocks,
      history: [...ctx.history],
      memory,
      question,
      maxTokens: request.maxTokens,
      temperature: request.temperature,
      ...(request.language ? { language: request.language } : {}),
    },
    deps.tokens,
  );
  const retrievalFailed = retrieval.kind === 'failed';
  return {
    question,
    standaloneQuery: standalone.query,
    profile,
    hits,
    retrievalFailed,
    sourceTypes: retrieval.kind === 'retrieved' ? retrieval.sourceTypes : null,
    memory,
    blocks,
    evidence: evidenceFrom(blocks, deps.settings.snippetLength),
    gate,
    confidence: retrievalFailed ? null : gate.level,
    background,
    prompt,
    next: nextStep(retrievalFailed, gate, deps.llm),
    retrievalEmbedding: embedding,
    steps: [...timeline.steps],
  };
}
