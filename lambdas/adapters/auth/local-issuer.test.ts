import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AuthenticationError } from '../../core/errors';
import { createJwtVerifier } from './jwt-verifier';
import { createLocalIssuer, type LocalIssuer } from './local-issuer';

function verifierFor(issuer: LocalIssuer) {
  return createJwtVerifier({
    issuer: issuer.issuer,
    audience: issuer.audience,
    jwks: issuer.jwks(),
  });
}

function decodePart(token: string, index: number): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[index] ?? '', 'base64url').toString('utf8'));
}

describe('local issuer', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'groundwork-keys-'));
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('issues Cognito-shaped tokens that the verifier accepts', async () => {
    const issuer = await createLocalIssuer();

    const token = issuer.issueToken({
      sub: 'user-1',
      tenantId: 'acme',
      plan: 'pro',
      groups: ['editors'],
      admin: true,
    });
    const claims = await verifierFor(issuer).verify(token);

    expect(decodePart(token, 0)).toEqual({ alg: 'RS256', typ: 'JWT', kid: issuer.kid });
    expect(claims).toMatchObject({
      sub: 'user-1',
      iss: 'http://localhost/groundwork-local',
      aud: 'groundwork-local',
      client_id: 'groundwork-local',
      token_use: 'id',
      'cognito:username': 'user-1',
      'custom:tenant_id': 'acme',
      'custom:plan': 'pro',
      'cognito:groups': ['editors', 'admin'],
    });
    expect(Number(claims.exp) - Number(claims.iat)).toBe(12 * 60 * 60);
  });

  it('publishes only the public key, with kid, alg and use', async () => {
    const issuer = await createLocalIssuer();

    const { keys } = issuer.jwks();

    expect(keys).toHaveLength(1);
    expect(keys[0]).toEqual({
      kty: 'RSA',
      n: expect.any(String),
      e: 'AQAB',
      kid: issuer.kid,
      alg: 'RS256',
      use: 'sig',
    });
  });

  it('keeps its key in the folder, private, so tokens survive a restart', async () => {
    const first = await createLocalIssuer({ keyDir: dir });
    const token = first.issueToken({ sub: 'user-1', tenantId: 'acme' });

    const second = await createLocalIssuer({ keyDir: dir });

    expect(second.kid).toBe(first.kid);
    await expect(verifierFor(second).verify(token)).resolves.toMatchObject({ sub: 'user-1' });
    const mode = (await stat(path.join(dir, 'signing-key.pem'))).mode & 0o777;
    expect(mode).toBe(0o600);
  });

  it('agrees on one key when two issuers create the folder at once', async () => {
    const [a, b] = await Promise.all([
      createLocalIssuer({ keyDir: dir }),
      createLocalIssuer({ keyDir: dir }),
    ]);

    expect(a.kid).toBe(b.kid);
  });

  it('rejects an expired token with the expiry message', async () => {
    const thirteenHoursAgo = Date.now() - 13 * 60 * 60 * 1000;
    const issuer = await createLocalIssuer({ now: () => thirteenHoursAgo });
    const token = issuer.issueToken({ sub: 'user-1', tenantId: 'acme' });

    const result = verifierFor(issuer).verify(token);

    await expect(result).rejects.toBeInstanceOf(AuthenticationError);
    await expect(result).rejects.toThrow('The token has expired');
  });

  it("rejects a token signed with another issuer's key", async () => {
    const trusted = await createLocalIssuer();
    const other = await createLocalIssuer();
    const token = other.issueToken({ sub: 'user-1', tenantId: 'acme' });

    await expect(verifierFor(trusted).verify(token)).rejects.toThrow(
      new AuthenticationError('The token is invalid'),
    );
  });

  it('rejects a token whose signature does not match its payload', async () => {
    const issuer = await createLocalIssuer();
    const [header, , signature] = issuer.issueToken({ sub: 'user-1', tenantId: 'acme' }).split('.');
    const forged = Buffer.from(
      JSON.stringify({
        ...decodePart(issuer.issueToken({ sub: 'u', tenantId: 'a' }), 1),
        sub: 'root',
      }),
    ).toString('base64url');

    await expect(verifierFor(issuer).verify(`${header}.${forged}.${signature}`)).rejects.toThrow(
      'The token is invalid',
    );
  });

  it('rejects a token for another audience', async () => {
    const issuer = await createLocalIssuer({ audience: 'another-app' });
    const token = issuer.issueToken({ sub: 'user-1', tenantId: 'acme' });
    const verifier = createJwtVerifier({
      issuer: issuer.issuer,
      audience: 'groundwork-local',
      jwks: issuer.jwks(),
    });

    await expect(verifier.verify(token)).rejects.toThrow('The token is invalid');
  });

  it('rejects a token from another issuer name', async () => {
    const issuer = await createLocalIssuer({ issuer: 'http://localhost/someone-else' });
    const token = issuer.issueToken({ sub: 'user-1', tenantId: 'acme' });
    const verifier = createJwtVerifier({
      issuer: 'http://localhost/groundwork-local',
      audience: issuer.audience,
      jwks: issuer.jwks(),
    });

    await expect(verifier.verify(token)).rejects.toThrow('The token is invalid');
  });

  it('accepts client_id in place of aud, as API Gateway does for Cognito access tokens', async () => {
    const issuer = await createLocalIssuer();
    const token = issuer.issueToken({
      sub: 'user-1',
      tenantId: 'acme',
      extraClaims: { aud: undefined, token_use: 'access' },
    });

    await expect(verifierFor(issuer).verify(token)).resolves.toMatchObject({ token_use: 'access' });
  });

  it('rejects malformed tokens without saying why', async () => {
    const verifier = verifierFor(await createLocalIssuer());

    await expect(verifier.verify('not-a-jwt')).rejects.toThrow('The token is invalid');
    await expect(verifier.verify('')).rejects.toThrow('The token is invalid');
  });
});
