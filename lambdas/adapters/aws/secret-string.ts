/** Reads a Secrets Manager secret's text: the database logins and the model servers' keys. */
import type { Tracer } from '@aws-lambda-powertools/tracer';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { traceClient } from '../observability/powertools';

/** The secret's `SecretString`; undefined for a binary secret. */
export async function readSecretString(
  secretArn: string,
  region: string,
  tracer?: Tracer,
): Promise<string | undefined> {
  const client = traceClient(tracer, new SecretsManagerClient({ region }));
  const out = await client.send(new GetSecretValueCommand({ SecretId: secretArn }));
  return out.SecretString;
}

/** A reader of model-server keys for the provider factories: the text, or an error naming the secret. */
export function secretReader(region: string): (secretArn: string) => Promise<string> {
  return async (secretArn) => {
    const text = await readSecretString(secretArn, region);
    if (!text) throw new Error(`The secret ${secretArn} holds no text`);
    return text.trim();
  };
}
