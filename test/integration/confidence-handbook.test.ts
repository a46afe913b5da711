/**
 * The confidence gate on a tiny corpus, as `npm start` first shows it: the five-document sample
 * handbook uploaded into the tenant `demo` through the S3 emulator, indexed by the real ingest
 * handler with the local embedding model into PGlite, and asked through POST /api/rag/answer on the local
 * server with the shipped calibration. Questions the handbook answers must not be refused for
 * the unrelated documents that necessarily fill the rest of the top 5; a question it has nothing
 * about must still be refused without an LLM call.
 */
import { INSUFFICIENT_CONTEXT_TEXT } from '../../lambdas/core/answer/answer';
import { startLocalApi, type LocalApi } from '../../local/api';
import { uploadFolder } from '../../local/commands/ingest';
import { DEMO_TENANT, SAMPLE_CORPUS } from '../../local/commands/start';
import { startLocalStack, type LocalStack } from '../../local/stack';

process.env.POWERTOOLS_METRICS_DISABLED = 'true';

interface AnswerBody {
  thread_id: string;
  answer: { text: string; confidence: string | null; model: string };
  citations: { source_uri: string }[];
  context_used: { chunks_retrieved: number; avg_relevance: number };
  flags: Record<string, boolean>;
}

/** Questions answered by one handbook page each, and that page. */
const ANSWERED: [string, string][] = [
  ['How do I make a warranty claim?', 'warranty.md'],
  ['Do you ship to the United States?', 'shipping.md'],
  ['I forgot my password, what should I do?', 'support.md'],
  ['Can I trade in my used gear?', 'sustainability.md'],
];
const OFF_TOPIC = [
  'What is the boiling point of tungsten?',
  'Who won the 1998 football world cup?',
  // On topic (the handbook covers payment and refunds), but it never names PayPal.
  'Can I pay with PayPal?',
];

describe('confidence gate on the sample handbook (local model, shipped calibration)', () => {
  let stack: LocalStack;
  let api: LocalApi;
  let token: string;

  beforeAll(async () => {
    stack = await startLocalStack({ logLevel: 'SILENT', embedThreads: 1 });
    api = await startLocalApi(stack);
    token = api.issuer.issueToken({ sub: 'demo-user', tenantId: DEMO_TENANT });
    const { keys } = await uploadFolder(
      SAMPLE_CORPUS,
      DEMO_TENANT,
      { client: stack.s3.client, bucket: stack.s3.bucket },
      { prefix: 'samples' },
    );
    expect(keys).toHaveLength(5);
    await stack.queue.idle();
  });
  afterAll(async () => {
    await api?.close();
    await stack?.stop();
  });

  const ask = async (question: string, extra: object = {}): Promise<AnswerBody> => {
    const res = await fetch(`${api.server.url}/api/rag/answer`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query_text: question, ...extra }),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as AnswerBody;
  };

  it.each(ANSWERED)('"%s" gates medium or high and cites %s', async (question, page) => {
    const body = await ask(question);
    // All five documents are retrieved: most of the top 5 is unrelated to the question.
    expect(body.context_used.chunks_retrieved).toBeGreaterThanOrEqual(5);
    expect(['medium', 'high']).toContain(body.answer.confidence);
    expect(body.flags.insufficient_context).toBe(false);
    expect(body.answer.text).not.toBe(INSUFFICIENT_CONTEXT_TEXT);
    expect(body.citations[0]?.source_uri).toMatch(new RegExp(`/samples/${page}$`));
  });

  it.each(OFF_TOPIC)('"%s" gates low, without an answer', async (question) => {
    const body = await ask(question);
    expect(body.context_used.chunks_retrieved).toBeGreaterThanOrEqual(5);
    expect(body.answer.confidence).toBe('low');
    expect(body.answer.model).toBeNull();
    expect(body.answer.text).toBe(INSUFFICIENT_CONTEXT_TEXT);
  });

  // The examples a newcomer tries first: the banner's curl and the README's `groundwork ask`.
  it("answers the banner's example with the refund period", async () => {
    const body = await ask('How long do refunds take?', { top_k: 3 });
    expect(['medium', 'high']).toContain(body.answer.confidence);
    expect(body.answer.text).toContain('within 14 days');
    expect(body.citations[0]?.source_uri).toMatch(/\/samples\/returns-and-refunds\.md$/);
  });

  it("answers the README's warranty example with what it covers, not what it excludes", async () => {
    const body = await ask('What does the warranty cover?');
    expect(['medium', 'high']).toContain(body.answer.confidence);
    expect(body.answer.text).toContain('defects in materials and workmanship');
    expect(body.answer.text).not.toContain('does not cover');
  });

  it('answers a question that names its own subject as asked, after another topic', async () => {
    const first = await ask('What does the warranty cover?');
    const body = await ask('How long do refunds take?', { thread_id: first.thread_id });
    expect(body.thread_id).toBe(first.thread_id);
    expect(body.answer.text).toContain('within 14 days');
    expect(body.citations[0]?.source_uri).toMatch(/\/samples\/returns-and-refunds\.md$/);
  });
});
