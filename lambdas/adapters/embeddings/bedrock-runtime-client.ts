/**
 * Builds the one BedrockRuntimeClient a process shares (embeddings now, Converse later).
 * Throttling and transient errors are retried by the SDK's own retry strategy.
 */
import {
  BedrockRuntimeClient,
  type BedrockRuntimeClientConfig,
} from '@aws-sdk/client-bedrock-runtime';

/** Options of {@link createBedrockRuntimeClient}. */
export interface BedrockRuntimeClientOptions {
  /** AWS region, e.g. `us-east-1`. */
  readonly region: string;
  /** Endpoint override (a local fake in tests); the regional endpoint when omitted. */
  readonly endpoint?: string;
  /**
   * Attempts per request, the first included, for throttling and transient errors.
   * @default 5
   */
  readonly maxAttempts?: number;
  /**
   * `standard` backs off with jitter per request; `adaptive` also rate-limits the whole client
   * once it has been throttled, which suits long bulk ingestion runs.
   * @default 'standard'
   */
  readonly retryMode?: 'standard' | 'adaptive';
  /**
   * Credentials; the default provider chain (Lambda role, env, profile) when omitted.
   */
  readonly credentials?: BedrockRuntimeClientConfig['credentials'];
  /**
   * Socket timeout of one attempt, in milliseconds.
   * @default 30000
   */
  readonly requestTimeoutMs?: number;
}

/** Creates a BedrockRuntimeClient; create it once per process, at module scope. */
export function createBedrockRuntimeClient(
  options: BedrockRuntimeClientOptions,
): BedrockRuntimeClient {
  return new BedrockRuntimeClient({
    region: options.region,
    ...(options.endpoint !== undefined ? { endpoint: options.endpoint } : {}),
    ...(options.credentials !== undefined ? { credentials: options.credentials } : {}),
    maxAttempts: options.maxAttempts ?? 5,
    retryMode: options.retryMode ?? 'standard',
    // The client's default handler is HTTP/2 with one stream per session; keep that, add a timeout.
    requestHandler: {
      requestTimeout: options.requestTimeoutMs ?? 30_000,
      disableConcurrentStreams: true,
    },
  });
}
