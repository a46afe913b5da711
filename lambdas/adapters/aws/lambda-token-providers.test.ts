import { fromEnvSigningName, NO_TOKEN_MESSAGE, nodeProvider } from './lambda-token-providers';

const KEY = 'AWS_BEARER_TOKEN_BEDROCK';
let saved: string | undefined;
beforeEach(() => {
  saved = process.env[KEY];
  delete process.env[KEY];
});
afterEach(() => {
  if (saved === undefined) delete process.env[KEY];
  else process.env[KEY] = saved;
});

describe('the Lambda bundles’ bearer-token providers', () => {
  it('read the token of the signing name from the environment', async () => {
    process.env[KEY] = 'bedrock-api-key';

    await expect(fromEnvSigningName({ signingName: 'bedrock' })()).resolves.toMatchObject({
      token: 'bedrock-api-key',
    });
  });

  it('fail naming the variable when it is missing, so the client signs with SigV4', async () => {
    await expect(fromEnvSigningName({ signingName: 'bedrock' })()).rejects.toThrow(KEY);
    await expect(fromEnvSigningName()()).rejects.toThrow(/signingName/);
  });

  it('look in no SSO cache, and say so', async () => {
    await expect(nodeProvider({ signingName: 'bedrock' })()).rejects.toThrow(NO_TOKEN_MESSAGE);
  });
});
