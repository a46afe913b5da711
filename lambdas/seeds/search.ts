/**
 * Seed 004's search, a thin adapter over the existing use cases (the upload: upload.ts):
 *
 * - `GET /api/search?q=...`: the Search use case, mapped to the seed's `results`;
 * - `GET /api/search?q=...&rag=true`: the Answering use case with its debug steps, mapped to the
 *   seed's `rag` object, plus the monthly answer quota the limiter admitted the request against.
 *
 * Invalid input is a 400 here (the seed's status), with the one error model's body; a used-up
 * monthly quota is a 429, as the seed's monthly cap answers (SEED_004_STATUSES in the route
 * table). Why the route is served by the `rag-answer` function:
 * docs/decisions/0144-seed-search-and-upload.md.
 */
import type { AnswerResult, Answering, PipelineStep } from '../core/answer/answer';
import { ValidationError } from '../core/errors';
import type { Search } from '../core/retrieval/search';
import type { SearchHit } from '../core/retrieval/types';
import * as z from '../core/zod';
import { createHttpHandler, parseQuery, type HttpHandlerDeps } from '../http/http-handler';
import { normaliseEvent } from '../http/api-event';
import type { RouteHandler } from '../http/route-dispatch';
import { chargeAnswer, debugFor } from '../rag-answer/handler';
import { answerRequestSchema } from '../rag-answer/schema';
import type { Admission } from '../core/limits/limiter';
import {
  seedSearchQuerySchema,
  type RagObject,
  type SeedSearchQuery,
  type SeedSearchResponse,
} from './search-upload-schema';

/** Results of the results-only search (the project's default `top_k`). */
const SEED_SEARCH_TOP_K = 8;
/** Chunks retrieved for `rag=true` (the seed's `performRAGSearch(query, 5)`). */
const SEED_RAG_TOP_K = 5;
/** Generation and memory settings: POST /api/rag/answer's defaults, from its schema. */
const ANSWER_DEFAULTS = answerRequestSchema.parse({ query_text: '-' });
const EXCERPT_LENGTH = 200;

const noBody = z.looseObject({});

/**
 * The query, refused with a 400 naming the parameter when it repeats a name (`query` joins the
 * values with commas), names an unknown one, or breaks `seedSearchQuerySchema`.
 */
export function parseSeedQuery(
  queryValues: Readonly<Record<string, readonly string[]>>,
  query: Readonly<Record<string, string | undefined>>,
): SeedSearchQuery {
  for (const [name, values] of Object.entries(queryValues)) {
    if (values.length > 1) throw new ValidationError(`${name}: given more than once`);
  }
  return parseQuery(seedSearchQuerySchema, query);
}

/** The file name of a source URI: the last segment of its object key. */
export function fileNameOf(sourceUri: string): string {
  const last = sourceUri.split('/').pop() ?? sourceUri;
  try {
    return decodeURIComponent(last);
  } catch {
    return last;
  }
}

/** Case-insensitive, non-overlapping occurrences of `needle` in `text`. */
export function countMatches(text: string, needle: string): number {
  const hay = text.toLowerCase();
  const n = needle.toLowerCase();
  if (n === '') return 0;
  let count = 0;
  for (let at = hay.indexOf(n); at !== -1; at = hay.indexOf(n, at + n.length)) count++;
  return count;
}

function toRetrievedChunk(hit: SearchHit) {
  return {
    doc_id: hit.documentId,
    filename: fileNameOf(hit.sourceUri),
    chunk_id: hit.chunkId,
    text: hit.text,
    similarity: Math.round(hit.score * 10000) / 10000,
    start_offset: hit.startOffset,
    end_offset: hit.endOffset,
  };
}

type AgentStep = RagObject['agent_steps'][number];

/**
 * How each answer-pipeline step shows in `agent_steps` (unlisted steps, such as embedding the
 * question, which the seed counts as part of its search: `debug_logs` only).
 */
const STEP_ROLES: Readonly<Record<string, 'tool' | 'thought'>> = {
  standalone_query: 'thought',
  retrieve: 'tool',
  memory: 'tool',
  context: 'thought',
  confidence: 'thought',
  generate: 'tool',
  cite: 'tool',
};

/** The seed's names for the tools it names; the others show under the pipeline's own. */
const SEED_TOOL_NAMES: Readonly<Record<string, string>> = {
  retrieve: 'semantic_search',
  generate: 'generate_answer',
};

/** What a step's recorded detail says, in a line. */
function describeStep(step: PipelineStep, result: AnswerResult): string {
  const detail = step.detail as Record<string, unknown> | unknown[] | string | undefined;
  switch (step.name) {
    case 'standalone_query':
      return `Search the knowledge base for: ${typeof detail === 'string' ? detail : result.queryText}`;
    case 'retrieve':
      return `Retrieved ${String((detail as { hits?: number } | undefined)?.hits ?? 0)} chunks`;
    case 'memory':
      return `Recalled ${Array.isArray(detail) ? detail.length : 0} similar past messages`;
    case 'context': {
      const blocks = Array.isArray(detail) ? (detail as { tokens?: number }[]) : [];
      const tokens = blocks.reduce((sum, b) => sum + (b.tokens ?? 0), 0);
      return `Context built from ${blocks.length} sources (${tokens} tokens)`;
    }
    case 'confidence': {
      const gate = detail as {
        level?: string;
        avgRelevance?: number;
        evidenceChunks?: number;
        unmatchedNames?: string[];
      };
      const names = gate?.unmatchedNames?.length
        ? `; named in no source: ${gate.unmatchedNames.join(', ')}`
        : '';
      const next =
        gate?.level === 'low'
          ? 'not enough support: answer without calling a model'
          : `generate with ${result.answer.model ?? 'none'}`;
      return `Confidence ${String(gate?.level)} (average relevance ${String(gate?.avgRelevance)}, ${String(gate?.evidenceChunks)} evidence chunks${names}): ${next}`;
    }
    case 'generate':
      return `Answer generated by ${result.answer.model ?? 'none'} (${result.answer.text.length} characters)`;
    case 'cite':
      return `${result.citations.length} sources cited`;
    default:
      return step.name;
  }
}

/** The answer pipeline's recorded steps as the seed's thought / action / tool_result list. */
export function agentStepsOf(result: AnswerResult): AgentStep[] {
  const steps: AgentStep[] = [];
  if (result.flags.conversational) {
    steps.push({ type: 'thought', text: 'A greeting: answered conversationally, no retrieval' });
  }
  for (const step of result.debug?.steps ?? []) {
    const role = Object.hasOwn(STEP_ROLES, step.name) ? STEP_ROLES[step.name] : undefined;
    const line = describeStep(step, result);
    if (role === 'thought') {
      steps.push({ type: 'thought', text: line });
    } else if (role === 'tool') {
      const input = step.name === 'generate' || step.name === 'cite' ? 'context' : result.queryText;
      const tool = Object.hasOwn(SEED_TOOL_NAMES, step.name)
        ? SEED_TOOL_NAMES[step.name]!
        : step.name;
      steps.push({
        type: 'action',
        text: `Using tool: ${tool}`,
        tool,
        tool_input: step.name === 'retrieve' ? (result.debug?.standaloneQuery ?? input) : input,
      });
      steps.push({
        type: 'tool_result',
        text: `Tool result from ${tool}`,
        tool,
        tool_output: line,
      });
    }
  }
  return steps;
}

/** The monthly answer quota after this request, as the seed's `rateLimit`. */
export function rateLimitOf(admission: Admission | undefined): RagObject['rateLimit'] {
  const quota = admission?.quotaUsage;
  if (!quota) return null;
  return {
    limit: quota.limit,
    remaining:
      quota.limit === null || quota.used === null ? null : Math.max(0, quota.limit - quota.used),
    resetDate: quota.resetsAt.toISOString(),
  };
}

/**
 * The seed's `rag` object from an answer (run with `debug`), as `viewer` may see it: the rendered
 * prompt carries the tenant's system prompt, so only a tenant admin gets it in `final_prompt`;
 * anyone else gets an empty string, and a line in `debug_logs` saying so.
 */
export function toRagObject(
  result: AnswerResult,
  viewer: { readonly isAdmin: boolean },
  admission: Admission | undefined,
): RagObject {
  const debug = debugFor(result.debug, viewer);
  const usage = result.usage;
  const logs = (result.debug?.steps ?? []).map((s) => `[step] ${s.name}: ${s.ms} ms`);
  logs.push(
    `[flags] ${Object.entries(result.flags)
      .map(([k, v]) => `${k}=${String(v)}`)
      .join(' ')}`,
    `[answer] status=${result.status} confidence=${String(result.answer.confidence)} thread=${result.threadId} message=${result.messageId} ${result.processingTimeMs} ms`,
  );
  if (!viewer.isAdmin) logs.push('[prompt] final_prompt is shown to tenant admins only');
  return {
    query: result.queryText,
    final_answer: result.answer.text,
    // The seed's `model` is a string: `none` when no model wrote the answer.
    model: result.answer.model ?? 'none',
    token_usage: {
      prompt_tokens: usage?.inputTokens ?? 0,
      completion_tokens: usage?.outputTokens ?? 0,
      total_tokens: (usage?.inputTokens ?? 0) + (usage?.outputTokens ?? 0),
    },
    retrieved_chunks: (result.debug?.chunks ?? []).map(toRetrievedChunk),
    final_prompt: debug?.prompt ?? '',
    agent_steps: agentStepsOf(result),
    debug_logs: logs,
    rateLimit: rateLimitOf(admission),
  };
}

/**
 * GET /api/search. Results only and `rag=true` draw on different quota classes (`search`,
 * `answer`), and the limiter admits a request by its class before the handler runs; so each is a
 * handler of its own, chosen on the raw `rag` value (anything but exactly `true` goes to the
 * results-only handler, whose validation refuses what is not `false`).
 */
export function makeSeedSearchHandler(
  deps: HttpHandlerDeps & { search: Pick<Search, 'search'>; answering: Answering },
): RouteHandler {
  const results = createHttpHandler(
    deps,
    { route: 'api-search', schema: noBody },
    async ({ identity, queryValues, query }) => {
      const { q } = parseSeedQuery(queryValues, query);
      const { hits } = await deps.search.search(identity, {
        queryText: q,
        topK: SEED_SEARCH_TOP_K,
        mode: 'hybrid',
        filters: {},
      });
      const body: SeedSearchResponse = {
        results: hits.map((hit) => ({
          ...toRetrievedChunk(hit),
          excerpt: hit.text.slice(0, EXCERPT_LENGTH),
          matches: countMatches(hit.text, q.trim()),
        })),
        ...(hits.length === 0 ? { message: `No results found for '${q}'` } : {}),
      };
      return { body };
    },
  );
  const rag = createHttpHandler(
    deps,
    { route: 'api-search', quota: 'answer', schema: noBody },
    async ({ identity, queryValues, query, admission }) => {
      const { q } = parseSeedQuery(queryValues, query);
      const result = await deps.answering.answer(identity, {
        queryText: q,
        topK: SEED_RAG_TOP_K,
        filters: {},
        useMemory: false,
        memory: {
          limit: ANSWER_DEFAULTS.memory.limit,
          tokenBudget: ANSWER_DEFAULTS.memory.token_budget,
        },
        maxTokens: ANSWER_DEFAULTS.options.max_tokens,
        temperature: ANSWER_DEFAULTS.options.temperature,
        debug: true,
      });
      chargeAnswer(result, admission);
      const body: SeedSearchResponse = {
        // As the seed: the chunks are in `rag.retrieved_chunks`, `results` stays empty.
        results: [],
        rag: toRagObject(result, identity, admission),
      };
      return { body };
    },
  );
  return (event, context) =>
    normaliseEvent(event).query.rag === 'true' ? rag(event, context) : results(event, context);
}
