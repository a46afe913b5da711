/**
 * Production entry of the `rag-answer` Lambda: its buffered routes in the route table
 * (lambdas/http/api-routes.ts: POST /api/rag/answer, POST /api/lexybrain/rag, seed 003's chat
 * route, seed 004's GET /api/search, the thread and feedback routes, POST /api/admin/harness)
 * behind the REST API's
 * Cognito authorizer, one function for all of them, dispatched on the event's route key.
 *
 * In AWS the streamed routes (`streams: true`: POST /api/rag/answer and seed 003's chat route) are
 * served by `stream.ts` on the response-streaming function, buffered or streamed; the embedded
 * default serves them from these handlers and its own streams.
 *
 * Cold start: the environment is parsed once (failing with the variable's name), the limiter's
 * DynamoDB client is created once, and the database pool opens on the first request. The answer
 * pipeline (the cl100k tokenizer, Bedrock clients) loads on the first answer only, and the search
 * use case on the first search or answer, so the thread routes start without them.
 */
import { ragAnswerRoutes } from './routes';
import { databasesFromEnv, limiterFromEnv, limitsEnvShape } from '../adapters/aws/lambda-wiring';
// A namespace import lets esbuild tree-shake zod (a named `{ z }` import keeps all of it).
import * as z from '../core/zod';
import { lambdaEnvSchema, parseEnv } from '../adapters/aws/lambda-env';
import {
  createObservability,
  logPort,
  metricsSink,
  traceClient,
} from '../adapters/observability/powertools';
import {
  createConversationRepository,
  createPromptRepository,
} from '../adapters/postgres/conversation-repository';
import type { Answering } from '../core/answer/answer';
import { calibrationOverridesFromEnv, confidenceEnvShape } from './confidence-env';
import { apiDepsFromEnv, apiEnvShape } from '../http/api-env';
import { bindRoutes, dispatchByRouteKey, type RouteHandler } from '../http/route-dispatch';
import { lexybrainEnvShape } from './lexybrain-env';
import type { Search } from '../core/retrieval/search';

/** The `rag-answer` function's environment (set by the CDK app's grant helpers). */
export const answerEnvSchema = z.extend(lambdaEnvSchema, {
  POWERTOOLS_SERVICE_NAME: z._default(z.string().check(z.minLength(1)), 'rag-answer'),
  ...limitsEnvShape,
  ...apiEnvShape,
  /** Bedrock model or inference profile for answers; unset: the offline extractive answerer. */
  GENERATION_MODEL_ID: z.optional(z.string().check(z.minLength(1))),
  /**
   * Deadline of one LLM call in milliseconds, retries included; unset: the adapter's. The stack
   * keeps it under API Gateway's integration timeout, so that an answer whose model is too slow
   * still returns its sources before the gateway gives up (lib/api-stack.ts).
   */
  GENERATION_TIMEOUT_MS: z.optional(z.pipe(z.coerce.number(), z.int().check(z.gte(1)))),
  ...confidenceEnvShape,
  ...lexybrainEnvShape,
});
export type AnswerEnv = z.infer<typeof answerEnvSchema>;

const env = parseEnv(answerEnvSchema);
const observability = createObservability(env.POWERTOOLS_SERVICE_NAME);
const { logger, metrics, tracer } = observability;

// Retrieval reads from the readers when DB_READ_HOST is set; conversations and prompts stay on
// the writer (postgres/databases.ts).
const { writer, reads } = databasesFromEnv(env, tracer);

const conversations = createConversationRepository(writer);
const limiter = limiterFromEnv(env, observability);

/**
 * The search use case and the Bedrock client it shares with the answer pipeline, built on the
 * first request that needs them.
 */
let searching: Promise<Awaited<ReturnType<typeof buildSearch>>> | undefined;
async function buildSearch() {
  const [{ searchFromEnv }, bedrock] = await Promise.all([
    import('../adapters/aws/search-from-env'),
    import('../adapters/embeddings/bedrock-runtime-client'),
  ]);
  const client = traceClient(
    tracer,
    bedrock.createBedrockRuntimeClient({ region: env.AWS_REGION }),
  );
  const log = logPort(logger);
  const sink = metricsSink(metrics);
  return { client, ...searchFromEnv(env, { reads, bedrock: client, log, metrics: sink }) };
}

let pipeline: Promise<Answering> | undefined;
/** Builds the answer pipeline on the first answer or chat message (its modules are the heavy ones). */
async function buildAnswering(): Promise<Answering> {
  const [
    { createAnswering },
    { answeringPerLiveModel },
    { createTokenCounter },
    llm,
    { client, search, embedder },
  ] = await Promise.all([
    import('../core/answer/answer'),
    import('../core/embedding/per-live-model'),
    import('../adapters/tokenizer/gpt-token-counter'),
    import('../adapters/llm/bedrock-converse'),
    (searching ??= buildSearch()),
  ]);
  // After a model switch, the gate's calibration follows the new model.
  return answeringPerLiveModel(embedder, () =>
    createAnswering({
      search,
      embedder,
      tokens: createTokenCounter(),
      conversations,
      prompts: createPromptRepository(writer),
      llm: env.GENERATION_MODEL_ID
        ? llm.createBedrockLlm({
            client,
            modelId: env.GENERATION_MODEL_ID,
            ...(env.GENERATION_TIMEOUT_MS ? { timeoutMs: env.GENERATION_TIMEOUT_MS } : {}),
          })
        : null,
      settings: {
        calibrationOverrides: calibrationOverridesFromEnv(env),
      },
      log: logPort(logger),
      metrics: metricsSink(metrics),
    }),
  );
}
const answering: Answering = {
  answer: async (...args) => (await (pipeline ??= buildAnswering())).answer(...args),
  prepare: async (...args) => (await (pipeline ??= buildAnswering())).prepare(...args),
};
const search: Pick<Search, 'search'> = {
  search: async (...args) => (await (searching ??= buildSearch())).search.search(...args),
};

const deps = { logger, metrics, tracer, limiter, ...apiDepsFromEnv(env) };
/** The routes this function serves, by route key (from the route table). */
export const routes: Readonly<Record<string, RouteHandler>> = bindRoutes(
  'rag-answer',
  ragAnswerRoutes({
    ...deps,
    answering,
    conversations,
    search,
    lexybrainRagEnabled: env.LEXYBRAIN_RAG_ENABLED,
  }),
);

/** One handler for every route above; an unknown route key (a wiring mistake) is a 404. */
export const handler = dispatchByRouteKey(routes, logger);
