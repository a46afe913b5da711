/**
 * The S3 emulator's gate (docs/ingestion.md, "The local S3 emulator's security"). s3rver stores
 * objects and emits events, but accepts anonymous requests and does not check Signature Version
 * 4 signatures. The gate is the only TCP listener of the emulator (on loopback): it verifies each
 * request's SigV4 signature, header-signed or presigned, with @smithy/signature-v4 (the SDK's own
 * signer: the signature is computed again from the request and compared), checks the signed
 * payload hash against the body and the presigned URL's expiry, answers CORS for the allowed
 * browser origins only, and forwards what passes to s3rver over a private socket.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdtemp, readFile, rm, mkdir } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { SignatureV4 } from '@smithy/signature-v4';
import type { Checksum, HttpRequest, SourceData } from '@smithy/types';
import { writeFileWhole } from './write-whole';

export interface S3Credentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
}

export interface S3Gate {
  /** `http://127.0.0.1:<port>`: the emulator's endpoint. */
  readonly endpoint: string;
  /** Lets a browser origin (e.g. the playground's) call the emulator with CORS. */
  allowOrigin(origin: string): void;
  close(): Promise<void>;
}

export interface S3GateOptions {
  /** The handler of the emulator behind the gate (s3rver's `callback()`). */
  readonly upstream: http.RequestListener;
  readonly credentials: S3Credentials;
  /** @default 0 (a free port) */
  readonly port?: number;
  /** Largest request body accepted (the body is held to check its hash). */
  readonly maxBodyBytes: number;
  readonly corsOrigins?: readonly string[];
}

/** How far a request's X-Amz-Date may be from the gate's clock (S3 allows 15 minutes). */
const MAX_CLOCK_SKEW_MS = 15 * 60 * 1000;
const MAX_PRESIGNED_SECONDS = 7 * 24 * 3600;
const UNSIGNED_PAYLOAD = 'UNSIGNED-PAYLOAD';
const PRESIGN_PARAMS = [
  'X-Amz-Algorithm',
  'X-Amz-Credential',
  'X-Amz-Date',
  'X-Amz-Expires',
  'X-Amz-SignedHeaders',
  'X-Amz-Signature',
];

/** The hash the signer wants: node:crypto's SHA-256, keyed (HMAC) when given a secret. */
class NodeSha256 implements Checksum {
  private readonly hash;
  constructor(secret?: SourceData) {
    this.hash = secret ? createHmac('sha256', toBuffer(secret)) : createHash('sha256');
  }
  update(data: Uint8Array): void {
    this.hash.update(data);
  }
  digest(): Promise<Uint8Array> {
    return Promise.resolve(this.hash.digest());
  }
  reset(): void {
    throw new Error('not supported');
  }
}

function toBuffer(data: SourceData): Buffer {
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.from(data);
}

class S3Denied extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const escapeXml = (s: string) => s.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);

function sendError(res: http.ServerResponse, err: S3Denied, extra: Record<string, string>) {
  res.writeHead(err.status, { 'content-type': 'application/xml', ...extra });
  res.end(
    `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${err.code}</Code><Message>${escapeXml(err.message)}</Message></Error>`,
  );
}

const equalText = (a: string, b: string) =>
  a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** `20261124T195259Z` → Date. */
function parseAmzDate(value: string | undefined): Date {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value ?? '');
  if (!m) throw new S3Denied(403, 'AccessDenied', 'X-Amz-Date is missing or malformed');
  const [, y, mo, d, h, mi, s] = m.map(Number) as [number, ...number[]];
  return new Date(Date.UTC(y!, mo! - 1, d, h, mi, s));
}

function headerValue(req: http.IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(',') : v;
}

/** The query as the signer wants it: decoded names and values, repeated names as arrays. */
function parseQuery(raw: string): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {};
  for (const part of raw.split('&')) {
    if (!part) continue;
    const at = part.indexOf('=');
    const name = decodeURIComponent(at === -1 ? part : part.slice(0, at));
    const value = at === -1 ? '' : decodeURIComponent(part.slice(at + 1));
    const prior = query[name];
    query[name] =
      prior === undefined ? value : [...(Array.isArray(prior) ? prior : [prior]), value];
  }
  return query;
}

interface Scope {
  readonly accessKeyId: string;
  readonly region: string;
}

/** `AKID/20261124/us-east-1/s3/aws4_request`. */
function parseCredential(value: string | undefined, date: Date): Scope {
  const parts = (value ?? '').split('/');
  if (parts.length !== 5 || parts[3] !== 's3' || parts[4] !== 'aws4_request') {
    throw new S3Denied(403, 'AccessDenied', 'The credential scope is malformed');
  }
  if (parts[1] !== date.toISOString().slice(0, 10).replace(/-/g, '')) {
    throw new S3Denied(403, 'SignatureDoesNotMatch', 'The credential date is not the request date');
  }
  return { accessKeyId: parts[0]!, region: parts[2]! };
}

/**
 * Verifies the request's signature; returns the payload hash it signs (a hex SHA-256, or
 * UNSIGNED-PAYLOAD). Throws S3Denied when the request is anonymous or the signature is wrong.
 */
async function verifySignature(
  req: http.IncomingMessage,
  credentials: S3Credentials,
  now: Date,
): Promise<string> {
  const url = req.url ?? '/';
  const queryAt = url.indexOf('?');
  const rawPath = queryAt === -1 ? url : url.slice(0, queryAt);
  const query = parseQuery(queryAt === -1 ? '' : url.slice(queryAt + 1));
  const authorization = headerValue(req, 'authorization');
  const presigned = 'X-Amz-Algorithm' in query;
  if (!authorization && !presigned) {
    throw new S3Denied(403, 'AccessDenied', 'Anonymous access is not allowed: sign the request');
  }
  if (authorization && presigned) {
    throw new S3Denied(400, 'InvalidArgument', 'Only one auth mechanism allowed');
  }

  let algorithm: string | undefined;
  let credential: string | undefined;
  let signedHeaderList: string | undefined;
  let signature: string | undefined;
  let amzDate: string | undefined;
  if (authorization) {
    const m =
      /^(\S+) Credential=([^,\s]+),\s*SignedHeaders=([^,\s]+),\s*Signature=([0-9a-f]+)$/.exec(
        authorization.trim(),
      );
    if (!m) throw new S3Denied(400, 'AuthorizationHeaderMalformed', 'Malformed Authorization');
    [, algorithm, credential, signedHeaderList, signature] = m;
    amzDate = headerValue(req, 'x-amz-date');
  } else {
    const one = (name: string) => {
      const v = query[name];
      return Array.isArray(v) ? undefined : v;
    };
    algorithm = one('X-Amz-Algorithm');
    credential = one('X-Amz-Credential');
    signedHeaderList = one('X-Amz-SignedHeaders');
    signature = one('X-Amz-Signature');
    amzDate = one('X-Amz-Date');
  }
  if (algorithm !== 'AWS4-HMAC-SHA256') {
    throw new S3Denied(400, 'InvalidArgument', 'Only AWS4-HMAC-SHA256 signatures are accepted');
  }
  const date = parseAmzDate(amzDate);
  const scope = parseCredential(credential, date);
  if (scope.accessKeyId !== credentials.accessKeyId) {
    throw new S3Denied(403, 'InvalidAccessKeyId', 'The access key id is not known');
  }
  const signedHeaders = (signedHeaderList ?? '').split(';').filter(Boolean);
  if (!signedHeaders.includes('host') || !signature) {
    throw new S3Denied(403, 'AccessDenied', 'The host header must be signed');
  }

  const headers: Record<string, string> = {};
  for (const name of signedHeaders) headers[name] = headerValue(req, name) ?? '';
  const signer = new SignatureV4({
    service: 's3',
    region: scope.region,
    credentials,
    sha256: NodeSha256,
    // S3 signs the path as sent, without encoding it again.
    uriEscapePath: false,
    applyChecksum: false,
  });
  const base = {
    method: req.method ?? 'GET',
    protocol: 'http:',
    hostname: '127.0.0.1',
    path: rawPath,
  };

  let expected: string | undefined;
  let payloadHash: string;
  if (authorization) {
    payloadHash = headers['x-amz-content-sha256'] ?? '';
    if (!payloadHash) {
      throw new S3Denied(400, 'InvalidRequest', 'x-amz-content-sha256 must be signed');
    }
    if (Math.abs(now.getTime() - date.getTime()) > MAX_CLOCK_SKEW_MS) {
      throw new S3Denied(403, 'RequestTimeTooSkewed', 'The request time is too far from now');
    }
    const signed = await signer.sign({ ...base, query, headers } as HttpRequest, {
      signingDate: date,
      signableHeaders: new Set(signedHeaders),
    });
    const auth = String(signed.headers.authorization ?? signed.headers.Authorization ?? '');
    expected = /Signature=([0-9a-f]+)/.exec(auth)?.[1];
  } else {
    const expires = Number(query['X-Amz-Expires']);
    if (!Number.isInteger(expires) || expires < 1 || expires > MAX_PRESIGNED_SECONDS) {
      throw new S3Denied(403, 'AuthorizationQueryParametersError', 'X-Amz-Expires is invalid');
    }
    if (now.getTime() > date.getTime() + expires * 1000) {
      throw new S3Denied(403, 'AccessDenied', 'Request has expired');
    }
    if (date.getTime() - now.getTime() > MAX_CLOCK_SKEW_MS) {
      throw new S3Denied(403, 'AccessDenied', 'The request is dated in the future');
    }
    // The signer sets the authentication parameters again and hoists x-amz-content-sha256 back
    // into the query; a URL without it signs UNSIGNED-PAYLOAD, as every presigned URL does.
    const rest = { ...query };
    for (const p of PRESIGN_PARAMS) delete rest[p];
    const hoisted = rest['X-Amz-Content-Sha256'];
    delete rest['X-Amz-Content-Sha256'];
    payloadHash = typeof hoisted === 'string' ? hoisted : UNSIGNED_PAYLOAD;
    const shaHeader = typeof hoisted === 'string' ? 'X-Amz-Content-Sha256' : 'x-amz-content-sha256';
    const presignedRequest = await signer.presign(
      { ...base, query: rest, headers: { ...headers, [shaHeader]: payloadHash } },
      {
        signingDate: date,
        expiresIn: expires,
        signableHeaders: new Set(signedHeaders),
        ...(typeof hoisted === 'string'
          ? {}
          : {
              unhoistableHeaders: new Set(['x-amz-content-sha256']),
              unsignableHeaders: new Set(['x-amz-content-sha256']),
            }),
      },
    );
    const sig = presignedRequest.query?.['X-Amz-Signature'];
    expected = typeof sig === 'string' ? sig : undefined;
  }
  if (!expected || !equalText(expected, signature)) {
    throw new S3Denied(
      403,
      'SignatureDoesNotMatch',
      'The request signature we calculated does not match the signature you provided',
    );
  }
  return payloadHash;
}

/** Reads the body, refusing more than `max` bytes. */
async function readBody(req: http.IncomingMessage, max: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > max) {
    throw new S3Denied(400, 'EntityTooLarge', `The body is larger than ${max} bytes`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > max)
      throw new S3Denied(400, 'EntityTooLarge', `The body is larger than ${max} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** Headers a browser may send on a cross-origin request to the emulator. */
const CORS_ALLOWED_HEADERS = /^(content-type|content-md5|authorization|x-amz-[a-z0-9-]+)$/;
/** Never forwarded: authentication (verified here, unknown to s3rver) and hop-by-hop headers. */
const DROPPED_REQUEST_HEADERS = new Set(['authorization', 'origin', 'connection', 'keep-alive']);
const DROPPED_RESPONSE_HEADERS = new Set(['connection', 'keep-alive', 'transfer-encoding']);

/**
 * The longest key segment the emulator can store: it keeps an object in a file named by the
 * key's last segment and `._S3rver_metadata.json` (22 bytes), and file names end at 255 bytes.
 */
const MAX_KEY_SEGMENT_BYTES = 233;

/**
 * Refuses a key the emulator would store outside its folder (a `.` or `..` segment, which it
 * resolves on disk) or could not store at all (a segment over {@link MAX_KEY_SEGMENT_BYTES}:
 * s3rver crashes on the file system's error). S3 itself takes both; the local stack does not.
 */
function checkKey(url: string): void {
  const queryAt = url.indexOf('?');
  const rawPath = queryAt === -1 ? url : url.slice(0, queryAt);
  let key: string;
  try {
    key = decodeURIComponent(rawPath.split('/').slice(2).join('/'));
  } catch {
    throw new S3Denied(400, 'InvalidURI', 'The key is not valid percent-encoding');
  }
  for (const segment of key.split('/')) {
    if (segment === '.' || segment === '..') {
      throw new S3Denied(
        400,
        'InvalidArgument',
        'A key segment of "." or ".." is not stored locally',
      );
    }
    if (Buffer.byteLength(segment, 'utf8') > MAX_KEY_SEGMENT_BYTES) {
      throw new S3Denied(
        400,
        'KeyTooLongError',
        `A key segment longer than ${MAX_KEY_SEGMENT_BYTES} bytes cannot be stored by the local emulator`,
      );
    }
  }
}

function forwardedUrl(url: string): string {
  const queryAt = url.indexOf('?');
  if (queryAt === -1) return url;
  const kept = url
    .slice(queryAt + 1)
    .split('&')
    .filter((p) => p && !/^x-amz-/i.test(decodeURIComponent(p.split('=')[0] ?? '')));
  return url.slice(0, queryAt) + (kept.length ? `?${kept.join('&')}` : '');
}

/**
 * Runs the requests on one object one after the other. s3rver writes an object's file in place,
 * so two writes at once interleave their bytes and a read during a write sees part of it; S3
 * stores each write whole and serves the last one. Requests on other objects run as they come.
 */
function oneAtATimePerObject(): <T>(url: string, run: () => Promise<T>) => Promise<T> {
  const tails = new Map<string, Promise<unknown>>();
  return async (url, run) => {
    const object = url.split('?')[0] ?? '';
    const before = tails.get(object) ?? Promise.resolve();
    const result = before.then(run, run);
    const tail = result.catch(() => undefined);
    tails.set(object, tail);
    try {
      return await result;
    } finally {
      if (tails.get(object) === tail) tails.delete(object);
    }
  };
}

export async function startS3Gate(options: S3GateOptions): Promise<S3Gate> {
  const origins = new Set(options.corsOrigins ?? []);
  const inTurn = oneAtATimePerObject();
  // s3rver listens on a socket in a folder only this user can open, never on a TCP port.
  const socketDir = await mkdtemp(path.join(os.tmpdir(), 'groundwork-s3-'));
  const socketPath =
    process.platform === 'win32'
      ? `\\\\?\\pipe\\groundwork-s3-${randomBytes(8).toString('hex')}`
      : path.join(socketDir, 's3.sock');
  const inner = http.createServer(options.upstream);
  await new Promise<void>((resolve, reject) => {
    inner.once('error', reject);
    inner.listen(socketPath, () => resolve());
  });

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const origin = headerValue(req, 'origin');
    const cors: Record<string, string> =
      origin && origins.has(origin)
        ? {
            'access-control-allow-origin': origin,
            'access-control-expose-headers': 'ETag',
            vary: 'Origin',
          }
        : {};
    try {
      if (origin && !origins.has(origin)) {
        throw new S3Denied(403, 'AccessDenied', `CORS: the origin ${origin} is not allowed`);
      }
      if (req.method === 'OPTIONS') {
        if (!origin) throw new S3Denied(400, 'BadRequest', 'A CORS preflight needs an Origin');
        const method = headerValue(req, 'access-control-request-method') ?? '';
        const wanted = (headerValue(req, 'access-control-request-headers') ?? '')
          .split(',')
          .map((h) => h.trim().toLowerCase())
          .filter(Boolean);
        if (
          !['GET', 'HEAD', 'PUT'].includes(method) ||
          wanted.some((h) => !CORS_ALLOWED_HEADERS.test(h))
        ) {
          throw new S3Denied(403, 'AccessDenied', 'CORS: this method or header is not allowed');
        }
        res.writeHead(200, {
          ...cors,
          'access-control-allow-methods': 'GET, HEAD, PUT',
          ...(wanted.length ? { 'access-control-allow-headers': wanted.join(', ') } : {}),
          'access-control-max-age': '600',
        });
        res.end();
        return;
      }
      const payloadHash = await verifySignature(req, options.credentials, new Date());
      checkKey(req.url ?? '/');
      if (payloadHash.startsWith('STREAMING-')) {
        throw new S3Denied(501, 'NotImplemented', 'aws-chunked uploads are not supported locally');
      }
      const body = await readBody(req, options.maxBodyBytes);
      if (payloadHash !== UNSIGNED_PAYLOAD) {
        const actual = createHash('sha256').update(body).digest('hex');
        if (actual !== payloadHash) {
          throw new S3Denied(
            400,
            'XAmzContentSHA256Mismatch',
            "The body's SHA-256 is not the one the request signs",
          );
        }
      }
      const headers: http.OutgoingHttpHeaders = {};
      for (const [name, value] of Object.entries(req.headers)) {
        if (!DROPPED_REQUEST_HEADERS.has(name)) {
          headers[name] = value;
        }
      }
      headers['content-length'] = String(body.length);
      await inTurn(
        req.url ?? '/',
        () =>
          new Promise<void>((resolve, reject) => {
            // The object's turn ends when the emulator's answer has been read to its end. A
            // client that goes away mid-answer stops reading it: the rest is read and dropped,
            // so that the emulator finishes (a write is never cut short) and the turn ends.
            let answered: http.IncomingMessage | null = null;
            const drain = () => setImmediate(() => answered?.resume());
            res.on('close', () => {
              if (!res.writableFinished) drain();
            });
            const upstream = http.request(
              { socketPath, method: req.method, path: forwardedUrl(req.url ?? '/'), headers },
              (answer) => {
                answered = answer;
                answer.on('end', resolve);
                answer.on('close', resolve);
                answer.on('error', reject);
                if (res.destroyed) return drain();
                const out: http.OutgoingHttpHeaders = { ...cors };
                for (const [name, value] of Object.entries(answer.headers)) {
                  if (!DROPPED_RESPONSE_HEADERS.has(name) && !name.startsWith('access-control-')) {
                    out[name] = value;
                  }
                }
                res.writeHead(answer.statusCode ?? 502, out);
                answer.pipe(res);
              },
            );
            upstream.on('error', reject);
            upstream.end(body);
          }),
      );
    } catch (err) {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      const denied =
        err instanceof S3Denied
          ? err
          : new S3Denied(500, 'InternalError', err instanceof Error ? err.message : String(err));
      // A refused body is not read: close the connection rather than drain it.
      if (!req.complete) res.setHeader('connection', 'close');
      sendError(res, denied, cors);
    }
  };

  const server = http.createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    allowOrigin: (origin) => void origins.add(origin),
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      inner.closeAllConnections();
      await new Promise((r) => inner.close(r));
      await rm(socketDir, { recursive: true, force: true });
    },
  };
}

/**
 * The emulator's credentials: random, kept in the data folder (readable by its owner only) so
 * that CLI commands in another terminal can sign; fresh for each process without a data folder.
 */
export async function localS3Credentials(keyDir?: string): Promise<S3Credentials> {
  const fresh = (): S3Credentials => ({
    accessKeyId: `GWLOCAL${randomBytes(6).toString('hex').toUpperCase()}`,
    secretAccessKey: randomBytes(30).toString('base64url'),
  });
  if (!keyDir) return fresh();
  const file = path.join(keyDir, 's3-credentials.json');
  try {
    const stored = JSON.parse(await readFile(file, 'utf8')) as Partial<S3Credentials> | null;
    if (typeof stored?.accessKeyId === 'string' && typeof stored.secretAccessKey === 'string') {
      return { accessKeyId: stored.accessKeyId, secretAccessKey: stored.secretAccessKey };
    }
  } catch (err) {
    // A file that is not JSON was never read by anyone: it is replaced like a missing one.
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT' && !(err instanceof SyntaxError))
      throw err;
  }
  const created = fresh();
  await mkdir(keyDir, { recursive: true, mode: 0o700 });
  await writeFileWhole(file, JSON.stringify(created), 0o600);
  return created;
}
