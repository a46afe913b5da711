/**
 * Model servers' keys in AWS: a Lambda configured with `EMBEDDING_API_KEY_SECRET_ARN` or
 * `RERANK_API_KEY_SECRET_ARN` reads the key from Secrets Manager (the real SDK client against a
 * fake that speaks its protocol) once, on first use, and sends it as the bearer token; a secret
 * that cannot be read is a retryable 503, tried again on the next call.
 */
import type { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { embedderFromEnv } from '../../lambdas/adapters/aws/embedder-from-env';
import { lambdaEnvSchema, parseEnv } from '../../lambdas/adapters/aws/lambda-env';
import { secretReader } from '../../lambdas/adapters/aws/secret-string';
import { rerankFromEnv } from '../../lambdas/adapters/rerank/rerank-factory';
import { AppError, ConfigError } from '../../lambdas/core/errors';
import {
  startFakeOpenAiEmbeddings,
  type FakeEmbeddingsServer,
} from '../support/fake-openai-embeddings';
import { startFakeRerank, type FakeRerankServer } from '../support/fake-rerank';
import { startFakeSecretsManager, type FakeSecretsManager } from '../support/fake-secrets-manager';

const EMBED_KEY_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:embed-key-AbCdEf';
const RERANK_KEY_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:rerank-key-AbCdEf';
const SAVED = ['AWS_ENDPOINT_URL_SECRETS_MANAGER', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'];
const saved = Object.fromEntries(SAVED.map((k) => [k, process.env[k]]));

let secrets: FakeSecretsManager;
let embeddings: FakeEmbeddingsServer;
let rerank: FakeRerankServer;

beforeAll(async () => {
  [secrets, embeddings, rerank] = await Promise.all([
    startFakeSecretsManager({ [RERANK_KEY_ARN]: 'rerank-secret\n' }),
    startFakeOpenAiEmbeddings(),
    startFakeRerank(),
  ]);
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_SECRETS_MANAGER: secrets.url,
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
  });
});
afterAll(async () => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  await Promise.all([secrets.close(), embeddings.close(), rerank.close()]);
});

function noBedrock(): BedrockRuntimeClient {
  throw new Error('no Bedrock client for this provider');
}

describe('an OpenAI-compatible embedding server behind a key in Secrets Manager', () => {
  it('reads the key once, on first use, and answers 503 retryable while it cannot', async () => {
    embeddings.setModel({ apiKey: 'embed-secret', nativeDimension: 64 });
    const env = parseEnv(lambdaEnvSchema, {
      AWS_REGION: 'eu-west-1',
      DB_SECRET_ARN: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:db',
      EMBEDDING_PROVIDER: 'openai',
      EMBEDDING_BASE_URL: embeddings.url,
      EMBEDDING_MODEL_ID: 'bge-small',
      EMBEDDING_DIMENSION: '64',
      EMBEDDING_API_KEY_SECRET_ARN: EMBED_KEY_ARN,
    });
    // Building the embedder reads nothing: the key is read when it is first needed.
    const embedder = embedderFromEnv(env, noBedrock);
    expect(secrets.reads).toEqual([]);

    // The secret does not exist yet: a dependency is down, not a bad request.
    const failure = await embedder.embed(['refunds'], 'query').then(
      () => null,
      (err: unknown) => err,
    );
    expect(failure).toBeInstanceOf(AppError);
    expect(failure).toMatchObject({ status: 503, retryable: true });
    expect(embeddings.requests).toHaveLength(0);

    secrets.put(EMBED_KEY_ARN, 'embed-secret');
    const [vector] = await embedder.embed(['refunds'], 'query');
    await embedder.embed(['warranty', 'probation'], 'document');
    expect(vector).toHaveLength(64);
    expect(embeddings.requests.map((r) => r.headers.authorization)).toEqual([
      'Bearer embed-secret',
      'Bearer embed-secret',
    ]);
    // One failed read, then one read for every later call.
    expect(secrets.reads).toEqual([EMBED_KEY_ARN, EMBED_KEY_ARN]);
  });
});

describe('an http reranker behind a key in Secrets Manager', () => {
  it('sends the secret text, trimmed, as the bearer token', async () => {
    const env = {
      RERANK_BASE_URL: rerank.url,
      RERANK_MODEL_ID: 'bge-reranker-v2-m3',
      RERANK_API_KEY_SECRET_ARN: RERANK_KEY_ARN,
    };
    const { reranker } = rerankFromEnv('http', env, 'RERANK_', {
      bedrockClient: noBedrock,
      readSecret: secretReader('eu-west-1'),
    });
    const signal = AbortSignal.timeout(5_000);
    await reranker!.rerank('refund time', ['refunds take 14 days', 'warranty'], {
      topN: 2,
      signal,
    });
    await reranker!.rerank('warranty', ['refunds take 14 days', 'warranty'], { topN: 2, signal });
    expect(rerank.requests.map((r) => r.headers.authorization)).toEqual([
      'Bearer rerank-secret',
      'Bearer rerank-secret',
    ]);
    expect(secrets.reads.filter((id) => id === RERANK_KEY_ARN)).toHaveLength(1);
  });

  it('is refused where no secret store is wired (the embedded default sets the key itself)', () => {
    expect(() =>
      rerankFromEnv(
        'http',
        {
          RERANK_BASE_URL: rerank.url,
          RERANK_MODEL_ID: 'm',
          RERANK_API_KEY_SECRET_ARN: RERANK_KEY_ARN,
        },
        'RERANK_',
        { bedrockClient: noBedrock },
      ),
    ).toThrow(ConfigError);
  });
});
