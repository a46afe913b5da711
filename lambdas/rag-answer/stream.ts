/**
 * Production entry of the streamed routes of the route table (`streams: true`): POST
 * /api/rag/answer and seed 003's chat route (POST /api/chat/conversations/{conversationId}/messages,
 * lambdas/rag-answer/chat.ts), through Lambda response streaming behind the REST API, whose
 * integrations for these routes stream (`responseTransferMode: STREAM`): the function is invoked
 * with InvokeWithResponseStream and what it writes reaches the client as it is written. The
 * Cognito authorizer verifies the ID token and passes its claims in
 * `requestContext.authorizer.claims`; the request lifecycle checks the token's client
 * (`TOKEN_AUDIENCES`) as on every route.
 *
 * POST /api/rag/answer with `"stream": true` answers with Server-Sent Events while the answer is
 * produced (`delta` events, then one `done` event with citations and usage, or an `error` event);
 * without it, with the buffered route's JSON (makeAnswerHandler), so one path serves both. The chat
 * route always streams. Errors before the first event are ordinary JSON error responses with their
 * status; errors after it are an error event, since the status line is already sent.
 *
 * Cold start: the environment is parsed once (failing with the variable's name), clients are
 * created once, the database pool opens on the first request, and the cl100k tokenizer loads on
 * the first answer (adapters/tokenizer; it ships beside the bundle).
 */
import { databasesFromEnv, limiterFromEnv, limitsEnvShape } from '../adapters/aws/lambda-wiring';
import { searchFromEnv } from '../adapters/aws/search-from-env';
import type { Writable } from 'node:stream';
import type { Context } from 'aws-lambda';
// A namespace import lets esbuild tree-shake zod (a named `{ z }` import keeps all of it).
import * as z from '../core/zod';
import { calibrationOverridesFromEnv, confidenceEnvShape } from './confidence-env';
import { lambdaEnvSchema, parseEnv } from '../adapters/aws/lambda-env';
import { createBedrockRuntimeClient } from '../adapters/embeddings/bedrock-runtime-client';
import { createBedrockLlm } from '../adapters/llm/bedrock-converse';
import {
  createObservability,
  logPort,
  metricsSink,
  traceClient,
  withTracing,
} from '../adapters/observability/powertools';
import {
  createConversationRepository,
  createPromptRepository,
} from '../adapters/postgres/conversation-repository';
import { createTokenCounter } from '../adapters/tokenizer/gpt-token-counter';
import { createAnswering } from '../core/answer/answer';
import { answeringPerLiveModel } from '../core/embedding/per-live-model';
import { NotFoundError } from '../core/errors';
import { routeKeyOf, type ApiEvent } from '../http/api-event';
import { apiRoute, routeKey } from '../http/api-routes';
import { apiDepsFromEnv, apiEnvShape } from '../http/api-env';
import { identityFromEvent } from '../http/identity';
import { runStreamedRequest, type EventStream } from '../http/request-lifecycle';
import { CHAT_ROUTE, streamChat } from './chat';
import { asksForStream, makeAnswerHandler, streamAnswer } from './handler';
import { answerRequestSchema } from './schema';

/** The writable response stream Lambda passes to a streaming handler. */
export type ResponseStream = Writable;

/** The Node.js runtime's global for response streaming (not in @types/aws-lambda). */
declare const awslambda: {
  streamifyResponse<E>(
    fn: (event: E, responseStream: ResponseStream, context: Context) => Promise<void>,
  ): (event: E, context: Context) => Promise<void>;
  HttpResponseStream: {
    from(
      responseStream: ResponseStream,
      prelude: { statusCode: number; headers?: Record<string, string> },
    ): ResponseStream;
  };
};

/** The route name of this endpoint in metrics and in the limiter (draws on the answers quota). */
export const STREAM_ROUTE = 'answer-stream';

/** The streaming function's environment (set by the CDK app's grant helpers). */
export const streamEnvSchema = z.extend(lambdaEnvSchema, {
  POWERTOOLS_SERVICE_NAME: z._default(z.string().check(z.minLength(1)), 'rag-answer-stream'),
  ...limitsEnvShape,
  GENERATION_MODEL_ID: z.optional(z.string().check(z.minLength(1))),
  ...confidenceEnvShape,
  ...apiEnvShape,
});
export type StreamEnv = z.infer<typeof streamEnvSchema>;

const env = parseEnv(streamEnvSchema);
const observability = createObservability(env.POWERTOOLS_SERVICE_NAME);
const { logger, metrics, tracer } = observability;
// Retrieval reads from the readers when DB_READ_HOST is set; conversations and prompts stay on
// the writer (postgres/databases.ts).
const { writer, reads } = databasesFromEnv(env, tracer);

const log = logPort(logger);
const sink = metricsSink(metrics);
const bedrock = traceClient(tracer, createBedrockRuntimeClient({ region: env.AWS_REGION }));
const { search, embedder } = searchFromEnv(env, { reads, bedrock, log, metrics: sink });
// After a model switch, the gate's calibration follows the new model.
const answering = answeringPerLiveModel(embedder, () =>
  createAnswering({
    search,
    embedder,
    tokens: createTokenCounter(),
    conversations: createConversationRepository(writer),
    prompts: createPromptRepository(writer),
    llm: env.GENERATION_MODEL_ID
      ? createBedrockLlm({ client: bedrock, modelId: env.GENERATION_MODEL_ID })
      : null,
    settings: {
      calibrationOverrides: calibrationOverridesFromEnv(env),
    },
    log,
    metrics: sink,
  }),
);
const limiter = limiterFromEnv(env, observability);

const ANSWER_KEY = routeKey(apiRoute('answer'));
const CHAT_KEY = routeKey(apiRoute(CHAT_ROUTE));

const deps = { logger, metrics, limiter, ...apiDepsFromEnv(env) };
/** POST /api/rag/answer without `"stream": true`: the buffered route's handler. */
const bufferedAnswer = makeAnswerHandler({ ...deps, answering });

/** The streaming handler itself (exported for tests; `handler` is it wrapped for Lambda). */
export async function streamHandler(
  event: ApiEvent,
  responseStream: ResponseStream,
  context: Context,
): Promise<void> {
  logger.addContext(context);
  let out: ResponseStream | undefined;
  const stream: EventStream = {
    start: (statusCode, headers) => {
      out = awslambda.HttpResponseStream.from(responseStream, { statusCode, headers });
    },
    write: (chunk) => (out ?? responseStream).write(chunk),
    end: () => (out ?? responseStream).end(),
  };
  const key = routeKeyOf(event);
  if (key === ANSWER_KEY && !asksForStream(event)) {
    const result = await bufferedAnswer(event, context);
    stream.start(result.statusCode, result.headers);
    stream.write(result.body);
    stream.end();
    return;
  }
  try {
    if (key === CHAT_KEY) {
      await streamChat({ ...deps, answering }, event, stream);
      return;
    }
    await runStreamedRequest(
      deps,
      {
        route: STREAM_ROUTE,
        schema: answerRequestSchema,
        // The same contract as the buffered POST /api/rag/answer (seed 001's statuses).
        statuses: apiRoute('answer').statuses,
        identify: (e: ApiEvent) => {
          if (routeKeyOf(e) !== ANSWER_KEY) throw new NotFoundError('No such route');
          return identityFromEvent(e, deps.identity);
        },
      },
      event,
      stream,
      ({ body, identity, admission }, write) =>
        streamAnswer(answering, identity, body, write, undefined, admission),
    );
  } finally {
    metrics.publishStoredMetrics();
  }
}

/** The Lambda handler: `streamHandler` with response streaming (InvokeWithResponseStream). */
export const handler = awslambda.streamifyResponse(withTracing(tracer, streamHandler));
