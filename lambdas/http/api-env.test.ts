import { parseEnv } from '../adapters/aws/lambda-env';
import * as z from '../core/zod';
import { apiDepsFromEnv, apiEnvShape } from './api-env';

const schema = z.object(apiEnvShape);

describe("an API function's environment", () => {
  it('reads the accepted app clients and the CORS origins (none allowed: an empty list)', () => {
    const env = parseEnv(schema, { TOKEN_AUDIENCES: '["client-a"]', CORS_ORIGINS: '[]' });
    expect(apiDepsFromEnv(env)).toMatchObject({
      identity: { audiences: ['client-a'] },
      corsOrigins: [],
    });
  });

  it('refuses a function without an accepted app client, naming the variable', () => {
    for (const TOKEN_AUDIENCES of ['[]', undefined, 'client-a']) {
      expect(() => parseEnv(schema, { TOKEN_AUDIENCES, CORS_ORIGINS: '["*"]' })).toThrow(
        /TOKEN_AUDIENCES/,
      );
    }
  });
});
