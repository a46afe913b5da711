/**
 * A local HTTP server that answers Secrets Manager's `GetSecretValue` as the service does (the
 * awsJson1.1 protocol: `X-Amz-Target: secretsmanager.GetSecretValue`, `{ SecretId }` in,
 * `{ ARN, Name, SecretString }` out, `ResourceNotFoundException` for an unknown id), for driving
 * the real SDK client with `AWS_ENDPOINT_URL_SECRETS_MANAGER`.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeSecretsManager {
  /** Endpoint URL for the SDK client. */
  readonly url: string;
  /** The SecretId of every GetSecretValue received, in order. */
  readonly reads: string[];
  /** Stores (or replaces) a secret's text under its ARN. */
  put(secretArn: string, secretString: string): void;
  close(): Promise<void>;
}

export async function startFakeSecretsManager(
  secrets: Readonly<Record<string, string>> = {},
): Promise<FakeSecretsManager> {
  const store = new Map(Object.entries(secrets));
  const reads: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      res.setHeader('content-type', 'application/x-amz-json-1.1');
      const target = req.headers['x-amz-target'];
      let id = '';
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { SecretId?: unknown };
        if (typeof body.SecretId === 'string') id = body.SecretId;
      } catch {
        // an empty id is not found below
      }
      if (target !== 'secretsmanager.GetSecretValue') {
        res.statusCode = 400;
        res.end(JSON.stringify({ __type: 'UnknownOperationException', message: String(target) }));
        return;
      }
      reads.push(id);
      const text = store.get(id);
      if (text === undefined) {
        res.statusCode = 400;
        res.end(
          JSON.stringify({
            __type: 'ResourceNotFoundException',
            message: "Secrets Manager can't find the specified secret.",
          }),
        );
        return;
      }
      res.end(JSON.stringify({ ARN: id, Name: id.split(':').pop(), SecretString: text }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    reads,
    put: (arn, text) => void store.set(arn, text),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
