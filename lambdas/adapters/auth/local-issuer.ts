/**
 * The embedded default's stand-in for Cognito: an RSA key pair that signs RS256 tokens shaped
 * like Cognito ID tokens, so that the same JWT verification and the same identity code run on
 * one machine as in AWS. The private key is kept in `<keyDir>/signing-key.pem` (0600) so that
 * tokens survive restarts; without a key folder it lives in memory only.
 */
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  randomBytes,
  randomUUID,
  sign,
  type JsonWebKey,
  type KeyObject,
} from 'node:crypto';
import { chmod, link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { errorCode } from '../../core/errors';

const DEFAULT_LOCAL_ISSUER = 'http://localhost/groundwork-local';
const DEFAULT_LOCAL_AUDIENCE = 'groundwork-local';
/** Twelve hours, like a long Cognito ID token session. */
const DEFAULT_TOKEN_LIFETIME_SECONDS = 12 * 60 * 60;

const KEY_FILE = 'signing-key.pem';
const MIN_MODULUS_BITS = 2048;

export interface LocalIssuerOptions {
  /** Folder for the signing key (created 0700); omit to keep the key in memory only. */
  readonly keyDir?: string;
  /** The `iss` claim. @default 'http://localhost/groundwork-local' */
  readonly issuer?: string;
  /** The `aud` and `client_id` claims. @default 'groundwork-local' */
  readonly audience?: string;
  /** Milliseconds since the epoch; injected by tests. @default Date.now */
  readonly now?: () => number;
}

interface IssueTokenInput {
  /** The user id (`sub`, also `cognito:username`). */
  readonly sub: string;
  /** The `custom:tenant_id` claim. */
  readonly tenantId: string;
  /** The `custom:plan` claim, when given. */
  readonly plan?: string;
  /** The `cognito:groups` claim (omitted when empty, as Cognito does). */
  readonly groups?: readonly string[];
  /** Adds the `admin` group. */
  readonly admin?: boolean;
  /** @default 43200 (12 hours) */
  readonly expiresInSeconds?: number;
  /**
   * Merged last, so they may override or (with `undefined`) remove standard claims: tests use
   * this to build tokens that Cognito would never issue.
   */
  readonly extraClaims?: Readonly<Record<string, unknown>>;
}

/** A public JWK as published in a JWKS, with the fields JWT verifiers look for. */
type PublicJwk = JsonWebKey & { kid: string; alg: 'RS256'; use: 'sig'; kty: 'RSA' };

export interface LocalIssuer {
  readonly issuer: string;
  readonly audience: string;
  /** The key id in every token header and in the JWKS. */
  readonly kid: string;
  /** Signs a token shaped like a Cognito ID token. */
  issueToken(input: IssueTokenInput): string;
  /** The public key set (never the private key). */
  jwks(): { keys: PublicJwk[] };
}

function base64url(value: Buffer | string): string {
  return Buffer.from(value).toString('base64url');
}

/** RFC 7638 thumbprint: a stable kid derived from the public key itself. */
function thumbprint(jwk: JsonWebKey): string {
  const canonical = JSON.stringify({ e: jwk.e, kty: jwk.kty, n: jwk.n });
  return createHash('sha256').update(canonical).digest('base64url');
}

function generatePrivateKey(): KeyObject {
  return generateKeyPairSync('rsa', { modulusLength: MIN_MODULUS_BITS }).privateKey;
}

/**
 * Loads the key from the folder, creating it first when absent. Creation writes a private
 * temporary file and hard-links it into place, so two processes starting at once (the server
 * and `groundwork token`) end up with the same key and never read a half-written file.
 */
async function loadOrCreateKey(keyDir: string): Promise<KeyObject> {
  const file = path.join(keyDir, KEY_FILE);
  await mkdir(keyDir, { recursive: true, mode: 0o700 });
  let pem: string;
  try {
    pem = await readFile(file, 'utf8');
  } catch (err) {
    if (errorCode(err) !== 'ENOENT') throw err;
    const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    const created = generatePrivateKey().export({ type: 'pkcs8', format: 'pem' }).toString();
    await writeFile(tmp, created, { mode: 0o600, flag: 'wx' });
    try {
      await link(tmp, file);
    } catch (linkErr) {
      if (errorCode(linkErr) !== 'EEXIST') throw linkErr;
    } finally {
      await unlink(tmp).catch(() => undefined);
    }
    pem = await readFile(file, 'utf8');
  }
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch (err) {
    throw new Error(`${file} is not a readable private key; delete it to create a new one.`, {
      cause: err,
    });
  }
  const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
  if (key.asymmetricKeyType !== 'rsa' || bits < MIN_MODULUS_BITS) {
    throw new Error(`${file} is not an RSA key of at least ${MIN_MODULUS_BITS} bits.`);
  }
  // The file may have been created by hand or copied with looser permissions.
  await chmod(file, 0o600).catch(() => undefined);
  return key;
}

/** Creates the local issuer, loading (or creating) its signing key. */
export async function createLocalIssuer(options: LocalIssuerOptions = {}): Promise<LocalIssuer> {
  const issuer = options.issuer ?? DEFAULT_LOCAL_ISSUER;
  const audience = options.audience ?? DEFAULT_LOCAL_AUDIENCE;
  const now = options.now ?? Date.now;
  const privateKey = options.keyDir ? await loadOrCreateKey(options.keyDir) : generatePrivateKey();
  const publicJwk = createPublicKey(privateKey).export({ format: 'jwk' });
  const kid = thumbprint(publicJwk);
  const jwk: PublicJwk = {
    kty: 'RSA',
    n: publicJwk.n,
    e: publicJwk.e,
    kid,
    alg: 'RS256',
    use: 'sig',
  };

  return {
    issuer,
    audience,
    kid,
    issueToken(input) {
      if (typeof input.sub !== 'string' || input.sub === '') {
        throw new Error('issueToken: sub is required');
      }
      if (typeof input.tenantId !== 'string' || input.tenantId === '') {
        throw new Error('issueToken: tenantId is required');
      }
      const lifetime = input.expiresInSeconds ?? DEFAULT_TOKEN_LIFETIME_SECONDS;
      if (!Number.isInteger(lifetime) || lifetime <= 0) {
        throw new Error('issueToken: expiresInSeconds must be a positive whole number');
      }
      const groups = [...(input.groups ?? [])];
      if (input.admin && !groups.includes('admin')) groups.push('admin');
      const iat = Math.floor(now() / 1000);
      const payload: Record<string, unknown> = {
        sub: input.sub,
        iss: issuer,
        aud: audience,
        client_id: audience,
        token_use: 'id',
        auth_time: iat,
        iat,
        exp: iat + lifetime,
        jti: randomUUID(),
        'cognito:username': input.sub,
        'custom:tenant_id': input.tenantId,
        ...(input.plan ? { 'custom:plan': input.plan } : {}),
        ...(groups.length > 0 ? { 'cognito:groups': groups } : {}),
        ...input.extraClaims,
      };
      const header = { alg: 'RS256', typ: 'JWT', kid };
      const signingInput = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(payload))}`;
      const signature = sign('sha256', Buffer.from(signingInput), privateKey);
      return `${signingInput}.${base64url(signature)}`;
    },
    jwks() {
      return { keys: [{ ...jwk }] };
    },
  };
}
