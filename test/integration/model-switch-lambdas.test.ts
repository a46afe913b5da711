/**
 * The model switch as the Lambdas run it, on both databases: the migration's reconciliation
 * begins the switch, the ingest handler steps it on the schedule's event within the invocation's
 * time (as the application's role, through the migration's functions, under row-level
 * security), and a live embedder built as search's is switches model when the swap commits.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { Context } from 'aws-lambda';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { APP_GROUP_ROLE } from '../../lambdas/adapters/postgres/app-role';
import type { Database, Queryable } from '../../lambdas/adapters/postgres/database';
import { reconcileEmbeddingModel } from '../../lambdas/adapters/postgres/embedding-guard';
import {
  createModelSwitchStore,
  readModels,
} from '../../lambdas/adapters/postgres/model-switch-store';
import { createTokenCounter } from '../../lambdas/adapters/tokenizer/gpt-token-counter';
import { createLiveEmbedder } from '../../lambdas/core/embedding/live-embedder';
import { createModelSwitch } from '../../lambdas/core/embedding/model-switch';
import { DEFAULT_INGESTION_SETTINGS } from '../../lambdas/core/ingestion/ingest';
import { makeHandler } from '../../lambdas/ingest/handler';
import { lambdaContext } from '../../local/ingest-queue';
import { startLocalStack } from '../../local/stack';
import { ENGINES, openTestDatabase, type EngineName } from '../support/databases';
import { createHashEmbedder } from '../support/hash-embedder';

process.env.POWERTOOLS_METRICS_DISABLED = 'true';

/** The database as the application's login sees it: every statement as its group role. */
function asApplication(db: Database): Database {
  const inRole = <T>(fn: (tx: Queryable) => Promise<T>) =>
    db.transaction(async (tx) => {
      await tx.exec(`SET LOCAL ROLE ${APP_GROUP_ROLE}`);
      return fn(tx);
    });
  return {
    ...db,
    query: (text, params) => inRole((tx) => tx.query(text, params)),
    transaction: (fn) => inRole(fn),
  };
}

/**
 * A scheduled invocation's context with time for `batches` embedding calls of `embedder` (one
 * per batch here), then too little.
 */
function contextWithTime(embedder: { calls: number }, batches: number): Context {
  const start = embedder.calls;
  return {
    ...lambdaContext('ingest'),
    getRemainingTimeInMillis: () => (embedder.calls - start < batches ? 300_000 : 1_000),
  };
}

describe.each(ENGINES)('the model switch in the Lambdas on %s', (engine: EngineName) => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase(engine);
  });
  afterAll(() => db.close());

  it('begins at migration, steps on the schedule within its time, swaps once complete', async () => {
    const modelA = createHashEmbedder(512, 'test/model-a');
    const modelB = createHashEmbedder(384, 'test/model-b');
    const stack = await startLocalStack({
      db,
      embedder: modelA,
      logLevel: 'SILENT',
      ingestion: { chunking: { targetTokens: 20, overlapTokens: 0 } },
    });
    for (const name of ['one', 'two', 'three'])
      await stack.s3.client.send(
        new PutObjectCommand({
          Bucket: stack.s3.bucket,
          Key: `tenants/t${name}/${name}.md`,
          Body:
            `# ${name}\n\n` +
            `The ${name} handbook says what ${name} means for each team. `.repeat(6),
        }),
      );
    await stack.queue.idle();
    await stack.stop();

    // The migrate function, deployed with model B.
    const began = await reconcileEmbeddingModel(db, {
      modelId: modelB.modelId,
      dimension: modelB.dimension,
      settings: { provider: 'openai', settings: { MODEL_ID: 'b', DIMENSION: 384 } },
    });
    expect(began).toMatchObject({ began: true, live: { modelId: 'test/model-a' } });
    expect(began.target?.settings).toEqual({
      provider: 'openai',
      settings: { MODEL_ID: 'b', DIMENSION: 384 },
    });

    // The search function's embedder, configured with B, embeds with A until the swap.
    const app = asApplication(db);
    const live = createLiveEmbedder({
      registry: { models: () => readModels(app) },
      configured: modelB,
      build: async (record) => {
        expect(record.modelId).toBe('test/model-a');
        return modelA;
      },
    });
    expect((await live.embed(['a question'], 'query'))[0]).toHaveLength(512);

    const modelSwitch = createModelSwitch({
      store: createModelSwitchStore(app),
      target: modelB,
      tokens: createTokenCounter(),
      embedding: DEFAULT_INGESTION_SETTINGS,
      settings: { batchChunks: 2, pauseMs: 0 },
    });
    const handler = makeHandler({
      ingestion: { syncObject: async () => ({ action: 'ignored', reason: 'unused' }) },
      modelSwitch,
      logger: new Logger({ logLevel: 'SILENT' }),
      metrics: new Metrics(),
    });
    const { chunksTotal } = await modelSwitch.status();
    expect(chunksTotal).toBeGreaterThan(6);

    // The first scheduled run has time for two batches (two chunks each).
    await handler({ groundwork: 'lease-sweep' }, contextWithTime(modelB, 2));
    const partial = await modelSwitch.status();
    expect(partial.chunksDone).toBe(4);
    expect(partial.target?.modelId).toBe('test/model-b');
    expect((await live.embed(['a question'], 'query'))[0]).toHaveLength(512);

    // The next has all the time it needs: it completes and swaps.
    await handler({ groundwork: 'lease-sweep' }, contextWithTime(modelB, 1000));
    const done = await modelSwitch.status();
    expect(done.target).toBeNull();
    expect(done.live?.modelId).toBe('test/model-b');
    expect((await live.embed(['a question'], 'query'))[0]).toHaveLength(384);
    expect(live.modelId).toBe('test/model-b');
    const { rows } = await db.query<{ n: string }>(
      `SELECT count(*) AS n FROM chunks WHERE vector_dims(embedding) = 384`,
    );
    expect(Number(rows[0]?.n)).toBe(chunksTotal);

    // Later runs find no switch.
    await handler({ groundwork: 'lease-sweep' }, contextWithTime(modelB, 1000));
    expect((await modelSwitch.status()).target).toBeNull();
  });
});
