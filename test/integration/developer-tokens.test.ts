/**
 * The tokens the embedded default hands its own developer (the playground's sign-in, the start
 * banner's and the CLI commands') are on the developer plan, with no monthly quota; a plan asked
 * for by name is honoured. Checked through GET /api/usage on the local server.
 */
import { startLocalApi, type LocalApi } from '../../local/api';
import { DEVELOPER_PLAN, developerToken } from '../../local/commands/token';
import { startLocalStack, type LocalStack } from '../../local/stack';
import { createHashEmbedder } from '../support/hash-embedder';

process.env.POWERTOOLS_METRICS_DISABLED = 'true';

interface Usage {
  plan: string;
  quotas: { answers: { limit: number | null } };
}

describe('development tokens of the embedded default', () => {
  let stack: LocalStack;
  let api: LocalApi;

  beforeAll(async () => {
    stack = await startLocalStack({ embedder: createHashEmbedder(), logLevel: 'SILENT' });
    api = await startLocalApi(stack);
  });
  afterAll(async () => {
    await api?.close();
    await stack?.stop();
  });

  const usage = async (token: string): Promise<Usage> => {
    const res = await fetch(`${api.server.url}/api/usage`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.status).toBe(200);
    return (await res.json()) as Usage;
  };
  const signIn = async (body: object): Promise<string> => {
    const res = await fetch(`${api.server.url}/local/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { token: string }).token;
  };

  it('signs the playground in on the developer plan, without a monthly answer quota', async () => {
    const body = await usage(await signIn({ user_id: 'dev', tenant_id: 'demo' }));
    expect(body.plan).toBe(DEVELOPER_PLAN);
    expect(body.quotas.answers.limit).toBeNull();
  });

  it('honours a plan asked for by name', async () => {
    const body = await usage(await signIn({ user_id: 'dev', tenant_id: 'demo', plan: 'free' }));
    expect(body.plan).toBe('free');
    expect(body.quotas.answers.limit).toBe(50);
  });

  it("gives the banner's and the CLI's tokens the developer plan, admin or not", async () => {
    expect((await usage(developerToken(api.issuer, 'dev', 'demo'))).plan).toBe(DEVELOPER_PLAN);
    const admin = await usage(developerToken(api.issuer, 'dev', 'demo', { admin: true }));
    expect(admin.quotas.answers.limit).toBeNull();
  });
});
