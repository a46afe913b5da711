/**
 * `groundwork reembed`: the model switch in the foreground, from the command line. An index built
 * by the local model is switched to the model the environment configures (an OpenAI-compatible
 * server, the fake of test/support); a model server that fails stops the command with what is
 * kept and how to continue, leaves search on the live model, and the next run completes.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { reembedCommand } from '../../local/commands/reembed';
import { loadLocalEnv, stackOptionsFromEnv } from '../../local/config';
import { startLocalStack, type LocalStack } from '../../local/stack';
import {
  startFakeOpenAiEmbeddings,
  type FakeEmbeddingsServer,
} from '../support/fake-openai-embeddings';

process.env.POWERTOOLS_METRICS_DISABLED = 'true';
jest.setTimeout(180_000);

const DOCS: Record<string, string> = {
  'tenants/acme/refunds.md': '# Refunds\n\nRefunds are paid within fourteen days of the return.',
  'tenants/acme/shipping.md': '# Shipping\n\nExpress shipping arrives the next working day.',
  'tenants/acme/security.md': '# Security\n\nPasswords are rotated every ninety days.',
};

/** The command's exit code and what it printed. */
async function reembed(env: Record<string, string>) {
  const out: string[] = [];
  const err: string[] = [];
  const log = jest.spyOn(console, 'log').mockImplementation((m: string) => out.push(m));
  const error = jest.spyOn(console, 'error').mockImplementation((m: string) => err.push(m));
  try {
    const code = await reembedCommand(loadLocalEnv(env));
    return { code, out: out.join('\n'), err: err.join('\n') };
  } finally {
    log.mockRestore();
    error.mockRestore();
  }
}

async function withStack<T>(
  env: Record<string, string>,
  fn: (stack: LocalStack) => Promise<T>,
): Promise<T> {
  const stack = await startLocalStack({
    ...(await stackOptionsFromEnv(loadLocalEnv(env))),
    modelSwitch: { background: false },
    logLevel: 'SILENT',
  });
  try {
    return await fn(stack);
  } finally {
    await stack.stop();
  }
}

describe('groundwork reembed', () => {
  let dir: string;
  let fake: FakeEmbeddingsServer;
  let local: Record<string, string>;
  let served: Record<string, string>;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'groundwork-reembed-'));
    fake = await startFakeOpenAiEmbeddings();
    local = { GROUNDWORK_DATA_DIR: dir };
    served = {
      ...local,
      GROUNDWORK_EMBEDDER: 'openai',
      GROUNDWORK_EMBED_BASE_URL: fake.url,
      GROUNDWORK_EMBED_MODEL_ID: 'fake-embed',
      GROUNDWORK_EMBED_DIMENSION: '256',
      GROUNDWORK_EMBED_SEND_DIMENSIONS: 'true',
      GROUNDWORK_EMBED_MAX_RETRIES: '0',
    };
    // The index is built by the local model.
    await withStack(local, async (stack) => {
      for (const [key, body] of Object.entries(DOCS))
        await stack.s3.client.send(
          new PutObjectCommand({ Bucket: stack.s3.bucket, Key: key, Body: body }),
        );
      await stack.queue.idle();
    });
  });
  afterAll(async () => {
    await fake.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('says there is nothing to do while the configured model is the live one', async () => {
    const run = await reembed(local);
    expect(run.code).toBe(0);
    expect(run.out).toMatch(/already uses local\/use-lite-512; nothing to re-embed/);
  });

  it('stops when the model server fails, keeping the live model, and completes on the next run', async () => {
    fake.setBehaviour({ kind: 'always-fail', status: 500 });
    const failed = await reembed(served);
    expect(failed.code).toBe(1);
    expect(failed.out).toMatch(
      /switching embedding model from local\/use-lite-512 to openai\/fake-embed\/256: 0 of 3 chunks/,
    );
    expect(failed.err).toMatch(
      /did not complete .*; 0 of 3 chunks are re-embedded and kept, and search still uses local\/use-lite-512\. Run again to continue\./,
    );
    // The switch is begun and recorded; the live model still serves. (A start with the local
    // model configured would cancel the switch: configuring the live model again goes back.)
    await withStack(served, async (stack) => {
      const status = await stack.modelSwitch.status();
      expect(status.live?.modelId).toBe('local/use-lite-512');
      expect(status.target?.modelId).toBe('openai/fake-embed/256');
      const { hits } = await stack.search.search(
        { tenantId: 'acme', userId: 'u' },
        { queryText: 'how long do refunds take', topK: 3, mode: 'vector', filters: {} },
      );
      expect(hits[0]?.title).toBe('Refunds');
    });

    fake.reset();
    const done = await reembed(served);
    expect(done.err).toBe('');
    expect(done.code).toBe(0);
    expect(done.out).toMatch(/re-embedded 3 chunks; the index now uses openai\/fake-embed\/256\.$/);
    // Every chunk went to the server once.
    const inputs = fake.requests.flatMap((r) => (r.body as { input: string[] }).input);
    expect(inputs).toHaveLength(3);
    for (const body of Object.values(DOCS)) {
      const sentence = body.split('\n\n')[1]!;
      expect(inputs.filter((t) => t.includes(sentence))).toHaveLength(1);
    }

    await withStack(served, async (stack) => {
      const status = await stack.modelSwitch.status();
      expect(status.live?.modelId).toBe('openai/fake-embed/256');
      expect(status.target).toBeNull();
      const { rows } = await stack.db.query<{ dims: number; n: number }>(
        'SELECT vector_dims(embedding) AS dims, count(*)::int AS n FROM chunks GROUP BY 1',
      );
      expect(rows).toEqual([{ dims: 256, n: 3 }]);
    });
    const again = await reembed(served);
    expect(again.code).toBe(0);
    expect(again.out).toMatch(/already uses openai\/fake-embed\/256/);
  });
});
