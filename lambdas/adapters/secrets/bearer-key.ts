/**
 * The bearer key of a model server (an OpenAI-compatible embeddings server, a rerank server):
 * given as is (the embedded default's environment), or read on first use from a secret store (a
 * Secrets Manager secret in AWS, so the key never sits in a function's configuration).
 */
import { ConfigError, UnavailableError } from '../../core/errors';

/** A key, or how to read it. */
export type BearerKey = string | (() => Promise<string>);

/** Reads a secret's text by its id (a Secrets Manager ARN in AWS). */
export type SecretReader = (secretId: string) => Promise<string>;

/**
 * The `Authorization` header for `key` ({} without one). A key read from a store is read once
 * and kept; a failed read is a retryable UnavailableError and is tried again on the next call.
 */
export function bearerHeader(
  key: BearerKey | undefined,
): () => Promise<Readonly<Record<string, string>>> {
  if (key === undefined) return () => Promise.resolve({});
  if (typeof key === 'string') {
    const header = { authorization: `Bearer ${key}` };
    return () => Promise.resolve(header);
  }
  let pending: Promise<string> | undefined;
  return async () => {
    pending ??= key().catch((err: unknown) => {
      pending = undefined;
      throw new UnavailableError('The model server key could not be read from its secret', err);
    });
    return { authorization: `Bearer ${await pending}` };
  };
}

/**
 * The key a provider's settings name: the key itself (`API_KEY`), else a secret read with
 * `readSecret` (`API_KEY_SECRET_ARN`), else none.
 * @throws ConfigError naming the setting when a secret is named but no reader is available.
 */
export function configuredKey(
  settings: {
    readonly API_KEY?: string | undefined;
    readonly API_KEY_SECRET_ARN?: string | undefined;
  },
  readSecret: SecretReader | undefined,
  secretSetting: string,
): BearerKey | undefined {
  if (settings.API_KEY !== undefined) return settings.API_KEY;
  const secretId = settings.API_KEY_SECRET_ARN;
  if (secretId === undefined) return undefined;
  if (!readSecret) {
    throw new ConfigError(`${secretSetting} is read in AWS only; set the key itself here`);
  }
  return () => readSecret(secretId);
}
