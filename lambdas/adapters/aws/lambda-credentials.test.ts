import {
  credentialsTreatedAsExpired,
  credentialsWillNeedRefresh,
  defaultProvider,
  MISSING_CREDENTIALS_MESSAGE,
} from './lambda-credentials';

const KEYS = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_PROFILE'];
let saved: Record<string, string | undefined>;
beforeEach(() => {
  saved = Object.fromEntries(KEYS.map((k) => [k, process.env[k]]));
  for (const k of KEYS) delete process.env[k];
});
afterEach(() => {
  for (const k of KEYS) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
});

describe('the Lambda bundles’ default credential provider', () => {
  it('returns the credentials Lambda puts in the environment, session token included', async () => {
    process.env.AWS_ACCESS_KEY_ID = 'ASIAEXAMPLE';
    process.env.AWS_SECRET_ACCESS_KEY = 'secret';
    process.env.AWS_SESSION_TOKEN = 'session';

    const credentials = await defaultProvider()();

    expect(credentials).toMatchObject({
      accessKeyId: 'ASIAEXAMPLE',
      secretAccessKey: 'secret',
      sessionToken: 'session',
    });
    expect(credentialsWillNeedRefresh(credentials)).toBe(false);
  });

  it('reads the environment when asked, not when created (the SDK creates it with the client)', async () => {
    const provider = defaultProvider({});
    process.env.AWS_ACCESS_KEY_ID = 'AKIDLATER';
    process.env.AWS_SECRET_ACCESS_KEY = 'secret';

    await expect(provider()).resolves.toMatchObject({ accessKeyId: 'AKIDLATER' });
  });

  it('fails naming the variables when they are missing, even with a profile set', async () => {
    process.env.AWS_PROFILE = 'developer';
    process.env.AWS_ACCESS_KEY_ID = 'AKIDONLY';

    const failure = defaultProvider()();

    await expect(failure).rejects.toThrow(MISSING_CREDENTIALS_MESSAGE);
    await expect(failure).rejects.toThrow(/AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY/);
  });

  it('treats credentials as expired five minutes before their expiry, as the SDK does', () => {
    const base = { accessKeyId: 'a', secretAccessKey: 's' };
    expect(credentialsTreatedAsExpired(base)).toBe(false);
    expect(
      credentialsTreatedAsExpired({ ...base, expiration: new Date(Date.now() + 60_000) }),
    ).toBe(true);
    expect(
      credentialsTreatedAsExpired({ ...base, expiration: new Date(Date.now() + 3_600_000) }),
    ).toBe(false);
  });
});
