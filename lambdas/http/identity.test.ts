import type { Context } from 'aws-lambda';
import { createLogger, createMetrics } from '../adapters/observability/powertools';
import * as z from '../core/zod';
import { buildApiEvent } from './api-event';
import { createHttpHandler } from './http-handler';
import { DEFAULT_IDENTITY_CONFIG, identityFromEvent, listClaim } from './identity';

/** A REST API proxy event carrying the claims the Cognito authorizer verified. */
const restEvent = (claims: Record<string, string>) =>
  buildApiEvent({ method: 'GET', resource: '/api/usage', claims });
process.env.POWERTOOLS_METRICS_DISABLED = 'true';
const logger = createLogger({ serviceName: 'identity-test', logLevel: 'SILENT' });

const base = { sub: 'u1', 'custom:tenant_id': 'acme' };

describe('group claims, as the Cognito authorizer sends them', () => {
  it('comma-joined, or a real array', () => {
    expect(listClaim('admin,readers')).toEqual(['admin', 'readers']);
    expect(listClaim(['admin', 'readers'])).toEqual(['admin', 'readers']);
    expect(listClaim('')).toEqual([]);
  });

  it('the admin group is recognised', () => {
    expect(
      identityFromEvent(restEvent({ ...base, 'cognito:groups': 'readers,admin' })).isAdmin,
    ).toBe(true);
  });

  it('a group name merely containing "admin" is not the admin group', () => {
    expect(
      identityFromEvent(restEvent({ ...base, 'cognito:groups': 'admins,notadmin' })).isAdmin,
    ).toBe(false);
  });
});

describe("the token's subject, which names the user in storage keys and rows", () => {
  it('takes a UUID or another issuer\'s subject ("auth0|42", an e-mail)', () => {
    for (const sub of ['8d1f7c52-0c4a-4f7e-9d1e-2f5b8a1c3e44', 'auth0|42', 'ana@example.com'])
      expect(identityFromEvent(restEvent({ ...base, sub })).userId).toBe(sub);
  });

  it('refuses with 401 a subject holding "/" (a storage key segment of another user), a control character or an unpaired surrogate, over 200 bytes in UTF-8 (a storage key segment), or "." or ".."', () => {
    for (const sub of [
      'victim/x',
      '../victim',
      'a\u0000b',
      'a\nb',
      'a\ud800b',
      'x'.repeat(201),
      'ü'.repeat(101),
      '.',
      '..',
    ]) {
      expect(() => identityFromEvent(restEvent({ ...base, sub }))).toThrow(
        expect.objectContaining({ code: 'authentication_required', status: 401 }),
      );
    }
    // Dots elsewhere name a user as any other character does.
    for (const sub of ['...', '.x', 'a..b', 'j.doe', 'x'.repeat(200), 'ü'.repeat(100)]) {
      expect(identityFromEvent(restEvent({ ...base, sub })).userId).toBe(sub);
    }
  });
});

describe("the token's client (audience), checked for every route", () => {
  const config = { ...DEFAULT_IDENTITY_CONFIG, audiences: ['our-client'] };

  it("accepts an ID token of our app client (`aud`) and an access token's `client_id`", () => {
    expect(identityFromEvent(restEvent({ ...base, aud: 'our-client' }), config).userId).toBe('u1');
    expect(identityFromEvent(restEvent({ ...base, client_id: 'our-client' }), config).userId).toBe(
      'u1',
    );
  });

  it('refuses a token of another app client of the same pool, or one naming no client', () => {
    for (const claims of [{ ...base, aud: 'another-client' }, base]) {
      expect(() => identityFromEvent(restEvent(claims), config)).toThrow(
        expect.objectContaining({ code: 'authentication_required', status: 401 }),
      );
    }
  });

  it('answers 401 in the error model through the handler builder', async () => {
    const handler = createHttpHandler(
      {
        logger,
        metrics: createMetrics('identity-test', logger),
        identity: config,
      },
      { route: 'usage', schema: z.looseObject({}) },
      async () => ({ body: { ok: true } }),
    );
    const context = { functionName: 'usage', awsRequestId: 'r1' } as Context;
    const foreign = await handler(restEvent({ ...base, aud: 'another-client' }), context);
    expect(foreign.statusCode).toBe(401);
    expect(JSON.parse(foreign.body)).toEqual({
      error: {
        code: 'authentication_required',
        message: 'The token was issued to another application',
        retryable: false,
      },
    });
    const ours = await handler(restEvent({ ...base, aud: 'our-client' }), context);
    expect(ours.statusCode).toBe(200);
  });
});
