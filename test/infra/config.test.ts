/** The CDK app's configuration: defaults, sources, and errors that name the bad key. */
import { cdkJsonContext } from './support';
import { CONFIG_KEYS, envVarFor, loadConfig, parseConfig } from '../../lib/config';

const noContext = () => undefined;

describe('configuration', () => {
  it('defaults to a deployable development configuration', () => {
    const config = loadConfig(noContext, {});
    expect(config).toEqual(
      expect.objectContaining({
        stage: 'dev',
        embeddingModelId: 'amazon.titan-embed-text-v2:0',
        embeddingDimension: 512,
        generationModelId: 'amazon.nova-lite-v1:0',
        auroraMinCapacity: 0,
        deletionProtection: true,
        rdsProxy: true,
        corsOrigins: ['*'],
        leaseSweepMinutes: 5,
        limitsJson: '{}',
      }),
    );
    expect(config.account).toBeUndefined();
    expect(config.limitsConfig.costCaps.globalUsdPerDay).toBe(100);
  });

  it('accepts every key cdk.json sets, and cdk.json sets only known keys besides feature flags', () => {
    const context = cdkJsonContext();
    const keys = Object.keys(context).filter((k) => !k.startsWith('@'));
    expect(keys.filter((k) => !(CONFIG_KEYS as string[]).includes(k))).toEqual([]);
    expect(() => loadConfig((k) => context[k], {})).not.toThrow();
  });

  it('reads GROUNDWORK_<KEY> before context, converting strings as -c values are', () => {
    const context: Record<string, unknown> = { stage: 'ctx', auroraMaxCapacity: 8 };
    const config = loadConfig((k) => context[k], {
      GROUNDWORK_STAGE: 'prod',
      GROUNDWORK_DELETION_PROTECTION: 'false',
      GROUNDWORK_CORS_ORIGINS: 'https://app.example.com, https://admin.example.com',
      GROUNDWORK_GENERATION_MODEL_ID: 'extractive',
    });
    expect(config.stage).toBe('prod');
    expect(config.auroraMaxCapacity).toBe(8);
    expect(config.deletionProtection).toBe(false);
    expect(config.corsOrigins).toEqual(['https://app.example.com', 'https://admin.example.com']);
    expect(config.generationModelId).toBeNull();
    expect(envVarFor('embeddingDimension')).toBe('GROUNDWORK_EMBEDDING_DIMENSION');
    expect(loadConfig(noContext, {}).publishingTenants).toEqual(['global']);
    expect(
      loadConfig(noContext, { GROUNDWORK_PUBLISHING_TENANTS: 'help, docs' }).publishingTenants,
    ).toEqual(['help', 'docs']);
    expect(() => loadConfig(noContext, { GROUNDWORK_PUBLISHING_TENANTS: 'a b' })).toThrow(
      /publishingTenants/,
    );
  });

  it('pins the environment only when account and region are both known', () => {
    expect(
      loadConfig(noContext, {
        CDK_DEFAULT_ACCOUNT: '123456789012',
        CDK_DEFAULT_REGION: 'us-east-1',
      }),
    ).toEqual(expect.objectContaining({ account: '123456789012', region: 'us-east-1' }));
    expect(() => loadConfig((k) => (k === 'account' ? '123456789012' : undefined), {})).toThrow(
      /region.*account and region together/,
    );
  });

  it('names the key and its source when a value is invalid', () => {
    expect(() => loadConfig(noContext, { GROUNDWORK_EMBEDDING_DIMENSION: '768' })).toThrow(
      /embeddingDimension \(from GROUNDWORK_EMBEDDING_DIMENSION\)/,
    );
    expect(() => loadConfig((k) => (k === 'alarmEmail' ? 'not-an-email' : undefined), {})).toThrow(
      /alarmEmail \(from context "alarmEmail"\)/,
    );
    expect(() => parseConfig({ confidenceHigh: 0.5, confidenceMedium: 0.7 })).toThrow(
      /confidenceMedium: must not exceed confidenceHigh/,
    );
    expect(() => parseConfig({ unknownKey: 1 })).toThrow(/unknownKey|Unrecognized/);
    expect(() => parseConfig({ leaseSweepMinutes: 0 })).toThrow(/leaseSweepMinutes/);
    expect(() => parseConfig({ auroraEngineVersion: '17.2' })).toThrow(
      /auroraEngineVersion: must be 17.4 or later/,
    );
    expect(() => parseConfig({ auroraEngineVersion: '16.6' })).toThrow(/must be 17.<minor>/);
    expect(() => parseConfig({ readReplicas: 16 })).toThrow(/readReplicas/);
    expect(() => parseConfig({ readReplicas: 1.5 })).toThrow(/readReplicas/);
    expect(() => parseConfig({ readReplicas: -1 })).toThrow(/readReplicas/);
    expect(parseConfig({ readReplicas: '2' }).readReplicas).toBe(2);
    expect(parseConfig({}).exactScanIndex).toBe(false);
    expect(parseConfig({ exactScanIndex: 'true' }).exactScanIndex).toBe(true);
    expect(parseConfig({ exactScanIndex: true }).exactScanIndex).toBe(true);
    expect(() => parseConfig({ exactScanIndex: 'yes' })).toThrow(/exactScanIndex/);
    expect(parseConfig({}).filterIndexes).toEqual([]);
    expect(
      parseConfig({ filterIndexes: '[{"key": "category", "value": "manual"}]' }).filterIndexes,
    ).toEqual([{ key: 'category', value: 'manual' }]);
    expect(parseConfig({ filterIndexes: [{ key: 'year', value: 2024 }] }).filterIndexes).toEqual([
      { key: 'year', value: 2024 },
    ]);
    expect(() => parseConfig({ filterIndexes: '[{"key": "category"' })).toThrow(
      /filterIndexes.*not JSON/,
    );
    expect(() => parseConfig({ filterIndexes: [{ key: 'a b', value: 1 }] })).toThrow(
      /filterIndexes/,
    );
    expect(() => parseConfig({ filterIndexes: [{ key: 'k', value: { nested: 1 } }] })).toThrow(
      /filterIndexes/,
    );
    expect(() =>
      parseConfig({
        filterIndexes: Array.from({ length: 21 }, (_, i) => ({ key: 'k', value: i })),
      }),
    ).toThrow(/filterIndexes.*at most 20/);
    expect(parseConfig({ auroraEngineVersion: '17.7' }).auroraEngineVersion).toBe('17.7');
    expect(() => parseConfig({ ingestConcurrency: 5, ingestReservedConcurrency: 3 })).toThrow(
      /ingestReservedConcurrency: must be at least ingestConcurrency/,
    );
    expect(() => parseConfig({ documentsBucketName: 'Not_A_Bucket' })).toThrow(
      /documentsBucketName: not an S3 bucket name/,
    );
    expect(() => parseConfig({ hostedLoginDomainPrefix: 'groundwork' })).toThrow(
      /hostedLoginCallbackUrls: hostedLoginDomainPrefix and hostedLoginCallbackUrls go together/,
    );
  });

  it('validates the limits config as the Lambdas will', () => {
    expect(() => parseConfig({ limits: '{"defaultPlan":"platinum"}' })).toThrow(
      /limits.*defaultPlan/,
    );
    expect(() => parseConfig({ limits: '{not json' })).toThrow(/limits: is not valid JSON/);
    expect(
      parseConfig({ limits: { costCaps: { globalUsdPerDay: 5 } } }).limitsConfig.costCaps
        .globalUsdPerDay,
    ).toBe(5);
  });

  it("checks the models with the functions' own factories, naming the key at fault", () => {
    const openai = {
      embeddingProvider: 'openai',
      embeddingModelId: 'nomic-embed-text',
      embeddingDimension: 768,
    };
    expect(() => parseConfig(openai)).toThrow(/embeddingBaseUrl: .*needs EMBEDDING_BASE_URL/);
    expect(
      parseConfig({ ...openai, embeddingBaseUrl: 'https://tei.internal/v1' }).embeddingDimension,
    ).toBe(768);
    expect(() =>
      parseConfig({ embeddingModelId: 'cohere.embed-multilingual-v3', embeddingDimension: 512 }),
    ).toThrow(/embeddingDimension: EMBEDDING_DIMENSION must be 1024/);
    expect(
      parseConfig({ embeddingModelId: 'cohere.embed-english-v3', embeddingDimension: 1024 })
        .embeddingModelId,
    ).toBe('cohere.embed-english-v3');
    expect(() => parseConfig({ embeddingModelId: 'not a model' })).toThrow(
      /embeddingModelId: not a Bedrock model id/,
    );
    expect(() => parseConfig({ rerankProvider: 'http', rerankModelId: 'bge' })).toThrow(
      /rerankBaseUrl: .*needs RERANK_BASE_URL/,
    );
    expect(() => parseConfig({ embeddingApiKeySecretArn: 'my-key' })).toThrow(
      /embeddingApiKeySecretArn: not a Secrets Manager secret ARN/,
    );
    expect(() => parseConfig({ modelServerEgress: '10.0.0.5:443' })).toThrow(
      /modelServerEgress.*<IPv4 CIDR>:<port>/,
    );
    expect(
      parseConfig({ modelServerEgress: '10.0.0.5/32:443, 10.1.0.0/24:8080' }).modelServerEgress,
    ).toEqual(['10.0.0.5/32:443', '10.1.0.0/24:8080']);
  });

  it('accepts the Titan v2 dimensions (the first deploy fits the embedding columns)', () => {
    for (const d of [256, 512, 1024])
      expect(parseConfig({ embeddingDimension: d }).embeddingDimension).toBe(d);
  });
});
