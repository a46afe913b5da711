/**
 * The models as deployed: an OpenAI-compatible embeddings server with an http reranker (keys in
 * Secrets Manager, egress opened to the servers only), and Cohere Embed v3 with Bedrock
 * reranking. Synthesized without bundling; cdk-nag must stay clean in both.
 */
import { nagFindings, resourcesOfType, synthGroundwork, type SynthesizedApp } from './support';

const EMBED_KEY = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:tei-key-AbCdEf';
const RERANK_KEY = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:rerank-key-AbCdEf';
/** The key of the model a switch in progress replaces. */
const OLD_KEY = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:old-key-AbCdEf';

type Statement = { Action: string | string[]; Resource: unknown };

function functionEnv(built: SynthesizedApp, service: string): Record<string, unknown> {
  const fn = Object.values(resourcesOfType(built.apiTemplate, 'AWS::Lambda::Function')).find(
    (r) =>
      (r.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables
        ?.POWERTOOLS_SERVICE_NAME === service,
  );
  if (!fn) throw new Error(`no function for ${service}`);
  return (fn.Properties?.Environment as { Variables: Record<string, unknown> }).Variables;
}

function statements(built: SynthesizedApp): Statement[] {
  return Object.values(resourcesOfType(built.apiTemplate, 'AWS::IAM::Policy')).flatMap(
    (p) => (p.Properties?.PolicyDocument as { Statement: Statement[] }).Statement,
  );
}

const actionsOf = (s: Statement) => [s.Action].flat();

describe('an OpenAI-compatible embedding server and an http reranker', () => {
  let built: SynthesizedApp;
  beforeAll(() => {
    built = synthGroundwork(
      {
        stage: 'test',
        embeddingProvider: 'openai',
        embeddingModelId: 'bge-m3',
        embeddingDimension: 1024,
        embeddingBaseUrl: 'https://tei.internal:8443/v1',
        embeddingApiKeySecretArn: EMBED_KEY,
        previousEmbeddingApiKeySecretArn: OLD_KEY,
        embeddingQueryPrefix: 'query: ',
        rerankProvider: 'http',
        rerankModelId: 'bge-reranker-v2-m3',
        rerankBaseUrl: 'https://rerank.internal/v1',
        rerankApiKeySecretArn: RERANK_KEY,
        rerankCandidates: 40,
        modelServerEgress: ['10.20.0.15/32:8443', '10.20.0.16/32:443'],
      },
      { bundle: false },
    );
  });

  it('gives every function that embeds the server, and the searching ones the reranker', () => {
    for (const service of ['ingest', 'rag-search', 'rag-answer']) {
      expect(functionEnv(built, service)).toMatchObject({
        EMBEDDING_PROVIDER: 'openai',
        EMBEDDING_MODEL_ID: 'bge-m3',
        EMBEDDING_DIMENSION: '1024',
        EMBEDDING_BASE_URL: 'https://tei.internal:8443/v1',
        EMBEDDING_API_KEY_SECRET_ARN: EMBED_KEY,
        EMBEDDING_QUERY_PREFIX: 'query: ',
      });
    }
    for (const service of ['rag-search', 'rag-answer']) {
      expect(functionEnv(built, service)).toMatchObject({
        RERANK_PROVIDER: 'http',
        RERANK_MODEL_ID: 'bge-reranker-v2-m3',
        RERANK_BASE_URL: 'https://rerank.internal/v1',
        RERANK_API_KEY_SECRET_ARN: RERANK_KEY,
        RERANK_CANDIDATES: '40',
      });
    }
    // Ingestion does not rank, so it neither knows the reranker nor reads its key.
    expect(functionEnv(built, 'ingest')).not.toHaveProperty('RERANK_PROVIDER');
    // The migration records the model as the functions' embedder names it.
    const [schema] = Object.values(resourcesOfType(built.apiTemplate, 'Custom::GroundworkSchema'));
    expect(schema?.Properties?.EmbeddingModel).toBe('openai/bge-m3/1024');
  });

  it('lets functions read the keys and invoke no Bedrock embedding model', () => {
    const all = statements(built);
    const readable = new Set(
      all
        .filter((s) => actionsOf(s).includes('secretsmanager:GetSecretValue'))
        .flatMap((s) => [s.Resource].flat()),
    );
    // The server's key, the replaced model's key (a switch is in progress), the reranker's key.
    for (const key of [EMBED_KEY, OLD_KEY, RERANK_KEY]) expect(readable.has(key)).toBe(true);
    const invoked = all
      .filter((s) => actionsOf(s).includes('bedrock:InvokeModel'))
      .flatMap((s) => [s.Resource].flat())
      .map((r) => JSON.stringify(r));
    expect(invoked.some((r) => r.includes('titan-embed'))).toBe(false);
  });

  it('opens egress to the model servers, and only to them besides AWS', () => {
    const [group] = Object.values(
      resourcesOfType(built.dataTemplate, 'AWS::EC2::SecurityGroup'),
    ).filter((g) => String(g.Properties?.GroupDescription).startsWith('Groundwork functions'));
    const egress = (group?.Properties?.SecurityGroupEgress ?? []) as {
      CidrIp?: string;
      FromPort?: number;
    }[];
    const cidrs = egress.filter((e) => e.CidrIp).map((e) => `${e.CidrIp}:${e.FromPort}`);
    expect(cidrs.sort()).toEqual(['10.20.0.15/32:8443', '10.20.0.16/32:443']);
  });

  it('passes cdk-nag', () => {
    expect(nagFindings(built.app)).toEqual([]);
  });
});

describe('Cohere Embed v3 with Bedrock reranking', () => {
  let built: SynthesizedApp;
  beforeAll(() => {
    built = synthGroundwork(
      {
        stage: 'test',
        embeddingModelId: 'cohere.embed-multilingual-v3',
        embeddingDimension: 1024,
        // A switch from Titan v2 in progress: queries still embed with it.
        previousEmbeddingModelId: 'amazon.titan-embed-text-v2:0',
        rerankProvider: 'bedrock',
        rerankModelId: 'cohere.rerank-v3-5:0',
      },
      { bundle: false },
    );
  });

  it('invokes the Cohere models on their ARNs, the reranker from the searching functions only', () => {
    const invoked = (service: string) => {
      const env = functionEnv(built, service);
      expect(env).toMatchObject({
        EMBEDDING_PROVIDER: 'bedrock',
        EMBEDDING_MODEL_ID: 'cohere.embed-multilingual-v3',
      });
      return env;
    };
    expect(invoked('rag-search')).toMatchObject({
      RERANK_PROVIDER: 'bedrock',
      RERANK_MODEL_ID: 'cohere.rerank-v3-5:0',
    });
    expect(invoked('ingest')).not.toHaveProperty('RERANK_PROVIDER');
    const resources = statements(built)
      .filter((s) => actionsOf(s).includes('bedrock:InvokeModel'))
      .map((s) => JSON.stringify(s.Resource));
    expect(resources.some((r) => r.includes('foundation-model/cohere.embed-multilingual-v3'))).toBe(
      true,
    );
    expect(resources.some((r) => r.includes('foundation-model/cohere.rerank-v3-5:0'))).toBe(true);
    expect(resources.some((r) => r.includes('foundation-model/amazon.titan-embed-text-v2:0'))).toBe(
      true,
    );
    const [schema] = Object.values(resourcesOfType(built.apiTemplate, 'Custom::GroundworkSchema'));
    expect(schema?.Properties?.EmbeddingModel).toBe('cohere.embed-multilingual-v3/1024');
  });

  it('passes cdk-nag', () => {
    expect(nagFindings(built.app)).toEqual([]);
  });
});
