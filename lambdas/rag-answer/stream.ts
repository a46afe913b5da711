/**
 * Production entry of the streaming answer: POST /api/rag/answer as Server-Sent Events while the answer
 * is produced (`delta` events, then one `done` event with citations and usage, or an `error`
 * event), through Lambda response streaming behind an API Gateway REST API whose integration
 * streams (`responseTransferMode: STREAM`; HTTP APIs buffer responses). The REST API's Cognito
 * authorizer verifies the ID token, as the HTTP API's JWT authorizer does for the other routes,
 * and passes its claims in `requestContext.authorizer.claims`.
 *
 * The request body is the POST /api/rag/answer body; the response is always a stream (`stream` in the
 * body is ignored). Seed 003's chat route (POST /api/chat/conversations/{conversationId}/messages,
 * lambdas/rag-answer/chat.ts) is served here too. Errors before the first event are ordinary JSON
 * error responses with their status; errors after it are an error event, since the status line
 * is already sent.
 *
 * Cold start: the environment is parsed once (failing with the variable's name), clients are
 * created once, the database pool opens on the first request, and the cl100k tokenizer loads on
 * the first answer (adapters/tokenizer; it ships beside the bundle).
 */
import { databasesFromEnv, limiterFromEnv, limitsEnvShape } from '../adapters/aws/lambda-wiring';
import { searchFromEnv } from '../adapters/aws/search-from-env';
import type { Writable } from 'node:stream';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
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
import { AuthenticationError, NotFoundError } from '../core/errors';
import { apiRoute, routeKey } from '../http/api-routes';
import { claimsOf, identityFromEvent } from '../http/identity';
import { runStreamedRequest, type EventStream } from '../http/request-lifecycle';
import { CHAT_ROUTE, streamChat } from './chat';
import { streamAnswer } from './handler';
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
  /** The app clients whose ID tokens are accepted, a JSON array (the REST authorizer does not check `aud`). */
  TOKEN_AUDIENCES: z.pipe(
    z.pipe(
      z.string(),
      z.transform((s): unknown => {
        try {
          return JSON.parse(s);
        } catch {
          return s;
        }
      }),
    ),
    z.array(z.string().check(z.minLength(1))).check(z.minLength(1)),
  ),
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

/**
 * The REST API's Cognito authorizer accepts the ID tokens of every app client of the pool (the
 * HTTP API's JWT authorizer checks the audience itself): only our app clients' tokens pass.
 */
function requireAudience(event: APIGatewayProxyEvent, audiences: readonly string[]): void {
  const claims = claimsOf(event);
  const audience = claims?.aud ?? claims?.client_id;
  if (typeof audience !== 'string' || !audiences.includes(audience))
    throw new AuthenticationError('The token was issued to another application');
}

/**
 * The caller, as the buffered routes' JWT authorizer would give it: claims the REST API's Cognito
 * authorizer verified, issued to our app client (else a 401).
 */
function identify(event: APIGatewayProxyEvent) {
  requireAudience(event, env.TOKEN_AUDIENCES);
  return identityFromEvent(event);
}

const ANSWER_KEY = routeKey(apiRoute('answer'));
const CHAT_KEY = routeKey(apiRoute(CHAT_ROUTE));

/** The streaming handler itself (exported for tests; `handler` is it wrapped for Lambda). */
export async function streamHandler(
  event: APIGatewayProxyEvent,
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
  const deps = { logger, metrics, limiter };
  const key = `${event.httpMethod} ${event.resource}`;
  try {
    if (key === CHAT_KEY) {
      await streamChat({ ...deps, answering }, event, stream, { identify });
      return;
    }
    await runStreamedRequest(
      deps,
      {
        route: STREAM_ROUTE,
        schema: answerRequestSchema,
        // The same contract as the buffered POST /api/rag/answer (seed 001's statuses).
        statuses: apiRoute('answer').statuses,
        identify: (e: APIGatewayProxyEvent) => {
          if (`${e.httpMethod} ${e.resource}` !== ANSWER_KEY)
            throw new NotFoundError('No such route');
          return identify(e);
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
