/**
 * `groundwork harness "<question>" --tenant <id>` on the embedded default's data folder: files
 * ingested by `groundwork ingest`, then the harness prints the retrieved chunks with their
 * scores, the context blocks with their sources, the evidence with citations and the prompt
 * preview, with an LLM configured (an OpenAI-compatible fake) that it never calls.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runCli } from '../support/cli';
import { startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai';

process.env.POWERTOOLS_METRICS_DISABLED = 'true';

const QUESTION = 'How many days do refunds take?';

describe('groundwork harness', () => {
  let dir: string;
  let fake: FakeOpenAi;
  const saved = { ...process.env };

  const run = runCli;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'groundwork-harness-'));
    fake = await startFakeOpenAi();
    Object.assign(process.env, {
      GROUNDWORK_DATA_DIR: path.join(dir, 'data'),
      GROUNDWORK_LLM: 'openai',
      GROUNDWORK_OPENAI_BASE_URL: fake.url,
      GROUNDWORK_OPENAI_MODEL: 'test-model',
      GROUNDWORK_EMBED_THREADS: '1',
      GROUNDWORK_LOG_LEVEL: 'SILENT',
    });
    const docs = path.join(dir, 'docs');
    await mkdir(docs);
    await writeFile(
      path.join(docs, 'refunds.md'),
      '# Refunds\n\nRefunds take fourteen days to reach the customer account after approval.',
    );
    await writeFile(
      path.join(docs, 'shipping.md'),
      '# Shipping\n\nExpress shipping takes two business days; standard shipping takes five.',
    );
    const ingested = await run(['ingest', docs, '--tenant', 'acme']);
    expect(ingested.code).toBe(0);
  }, 180_000);
  afterAll(async () => {
    process.env = saved;
    await fake?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('prints chunks with scores, context blocks with sources, evidence and the prompt preview, without calling the LLM', async () => {
    const res = await run(['harness', QUESTION, '--tenant', 'acme']);
    expect(res.code).toBe(0);
    const text = res.stdout;
    expect(text).toContain(`question: ${QUESTION}`);
    expect(text).toContain('tenant: acme  profile: general');
    expect(text).toContain('source types: permissive, every type allowed');
    expect(text).toMatch(/retrieved chunks \(2\)/);
    expect(text).toMatch(
      / {2}1\. score \d\.\d{3} {2}fused \d\.\d{3} {2}keyword \d\.\d{3} {2}\[doc\] Refunds/,
    );
    expect(text).toMatch(/s3:\/\/[^/]+\/tenants\/acme\/refunds\.md \[\d+-\d+\]/);
    expect(text).toMatch(
      /context blocks \(2\)\n {2}\[1\] Refunds {2}\[doc\] {2}score \d\.\d{3} {2}\d+ tokens/,
    );
    expect(text).toMatch(/evidence \(2\)\n {2}\[1\] Refunds {2}relevance [\d.]+ {2}chunks /);
    expect(text).toMatch(
      /confidence: (high|medium|low) \(avg relevance [\d.]+, \d evidence chunks\)/,
    );
    expect(text).toMatch(/next: (generate|insufficient_context): /);
    const preview = text.slice(text.indexOf('prompt preview'));
    expect(preview).toContain('<document index="1" title="Refunds"');
    expect(preview).toContain('Refunds take fourteen days');
    expect(preview).toContain(`USER: ${QUESTION}`);
    expect(fake.requests).toHaveLength(0);
  }, 120_000);

  it('prints the route JSON with --json, and narrows by --source-type', async () => {
    const res = await run(['harness', QUESTION, '--tenant', 'acme', '--json', '--top-k', '1']);
    expect(res.code).toBe(0);
    const body = JSON.parse(res.stdout);
    expect(Object.keys(body)).toEqual(
      expect.arrayContaining(['chunks', 'context_blocks', 'evidence', 'prompt', 'next_step']),
    );
    expect(body.chunks).toHaveLength(1);
    expect(body.tenant_id).toBe('acme');
    const none = await run([
      'harness',
      QUESTION,
      '--tenant',
      'acme',
      '--json',
      '--source-type',
      'faq',
    ]);
    expect(JSON.parse(none.stdout).chunks).toEqual([]);
    expect(fake.requests).toHaveLength(0);
  }, 120_000);

  it('refuses a call without a question (exit 2, usage on stderr)', async () => {
    const res = await run(['harness', '--tenant', 'acme']);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('Usage: groundwork harness');
  });
});
