/**
 * The API's one event format, and its one reader. Every route reaches its function as an API
 * Gateway REST API Lambda proxy event (payload format 1.0), streamed or buffered, and the
 * embedded default's server builds the same events (local/http-server.ts). `normaliseEvent`
 * reads one into what handlers use, so no handler reads the event's raw fields: the route key
 * (`POST /api/documents/{id}/retry`, from `httpMethod` and `resource`), lower-case header names,
 * decoded path parameters (REST APIs pass them percent-encoded), query parameters with repeated
 * names joined by commas, and the body as sent (`isBase64Encoded` for binary media types).
 */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { mediaTypeOf } from '../core/ingestion/formats';

/** A REST API proxy event; `requestContext.authorizer.claims` holds a verified token's claims. */
export type ApiEvent = APIGatewayProxyEvent;

/** What handlers read of a request, whatever built the event. */
export interface ApiRequest {
  /** `METHOD /resource/{param}`: the route table's key (api-routes.ts `routeKey`). */
  readonly routeKey: string;
  /** Header names in lower case; a repeated header's values joined by `, `. */
  readonly headers: Readonly<Record<string, string>>;
  readonly pathParameters: Readonly<Record<string, string>>;
  /** Each query parameter's values joined by commas (one value: itself). */
  readonly query: Readonly<Record<string, string>>;
  /** Each query parameter's values, in order, repeats included. */
  readonly queryValues: Readonly<Record<string, readonly string[]>>;
  readonly body: string | null;
  readonly isBase64Encoded: boolean;
}

/** The fields of a proxy event the reader needs (a test may build no more). */
export type ApiEventFields = Pick<
  ApiEvent,
  | 'httpMethod'
  | 'resource'
  | 'headers'
  | 'multiValueHeaders'
  | 'pathParameters'
  | 'queryStringParameters'
  | 'multiValueQueryStringParameters'
  | 'body'
  | 'isBase64Encoded'
>;

type Values = Readonly<Record<string, readonly (string | undefined)[] | undefined>> | null;
type Single = Readonly<Record<string, string | undefined>> | null;

/** Every name's values: the multi-value map where given, else the single-value one. */
function valuesOf(multi: Values | undefined, single: Single | undefined): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [name, values] of Object.entries(multi ?? {})) {
    const defined = (values ?? []).filter((v): v is string => v !== undefined);
    if (defined.length > 0) out.set(name, defined);
  }
  for (const [name, value] of Object.entries(single ?? {})) {
    if (value !== undefined && !out.has(name)) out.set(name, [value]);
  }
  return out;
}

/** A path parameter as the caller meant it; a malformed escape stays as sent. */
function decodePathParameter(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/** The event's route key, `METHOD /resource/{param}` (the route table's, api-routes.ts). */
export function routeKeyOf(event: Pick<ApiEvent, 'httpMethod' | 'resource'>): string {
  return `${event.httpMethod.toUpperCase()} ${event.resource}`;
}

/** Reads a REST API proxy event into the request handlers use. */
export function normaliseEvent(event: ApiEventFields): ApiRequest {
  // Objects without a prototype: a header or parameter may be named `__proto__` or `constructor`,
  // which on a plain object would set its prototype or read an inherited function.
  const headers: Record<string, string> = Object.create(null);
  for (const [name, values] of valuesOf(event.multiValueHeaders, event.headers)) {
    const key = name.toLowerCase();
    headers[key] =
      headers[key] === undefined ? values.join(', ') : `${headers[key]}, ${values.join(', ')}`;
  }
  const pathParameters: Record<string, string> = Object.create(null);
  for (const [name, value] of Object.entries(event.pathParameters ?? {})) {
    if (value !== undefined) pathParameters[name] = decodePathParameter(value);
  }
  const queryValues: Record<string, string[]> = Object.create(null);
  const query: Record<string, string> = Object.create(null);
  for (const [name, values] of valuesOf(
    event.multiValueQueryStringParameters,
    event.queryStringParameters,
  )) {
    queryValues[name] = values;
    query[name] = values.join(',');
  }
  return {
    routeKey: routeKeyOf(event),
    headers,
    pathParameters,
    query,
    queryValues,
    body: event.body ?? null,
    isBase64Encoded: event.isBase64Encoded === true,
  };
}

/**
 * Request bodies API Gateway hands to Lambda base64-encoded (`isBase64Encoded: true`): the REST
 * API's binary media types (lib/constructs/groundwork-rest-api.ts), so the upload route's
 * multipart body arrives byte for byte. Every other body arrives as UTF-8 text.
 */
export const BINARY_MEDIA_TYPES: readonly string[] = ['multipart/form-data'];

/** Whether API Gateway passes a body of this Content-Type base64-encoded. */
export function isBinaryMediaType(contentType: string | undefined): boolean {
  return BINARY_MEDIA_TYPES.includes(mediaTypeOf(contentType));
}

/** What a REST API proxy event is built from (the local server's request, or a test's). */
export interface ApiEventInit {
  readonly method: string;
  /** The route's template, `/api/threads/{id}`. */
  readonly resource: string;
  /** The request's path, `/api/threads/abc` (path parameters as sent, percent-encoded). */
  readonly path?: string;
  /** Each header's values. */
  readonly headers?: Readonly<Record<string, string | readonly string[]>>;
  /** Each query parameter's values, decoded. */
  readonly query?: Readonly<Record<string, string | readonly string[]>>;
  /** As sent, percent-encoded, as API Gateway passes them. */
  readonly pathParameters?: Readonly<Record<string, string>>;
  readonly body?: string | null;
  readonly isBase64Encoded?: boolean;
  /** The verified token's claims, as the Cognito authorizer passes them (strings). */
  readonly claims?: Readonly<Record<string, string>> | null;
  readonly requestId?: string;
  readonly sourceIp?: string;
  readonly received?: Date;
}

const lists = (
  values: Readonly<Record<string, string | readonly string[]>> | undefined,
): Record<string, string[]> | null => {
  const entries = Object.entries(values ?? {});
  if (entries.length === 0) return null;
  return Object.fromEntries(entries.map(([k, v]) => [k, typeof v === 'string' ? [v] : [...v]]));
};

/** The last value of each name, as a REST API's single-value maps hold. */
const lastOf = (multi: Record<string, string[]> | null): Record<string, string> | null =>
  multi && Object.fromEntries(Object.entries(multi).map(([k, v]) => [k, v[v.length - 1] ?? '']));

/** API Gateway's `requestContext.requestTime` format: `12/Mar/2020:19:03:58 +0000`. */
function requestTime(date: Date): string {
  const month = date.toLocaleString('en-US', { month: 'short', timeZone: 'UTC' });
  const pad = (n: number) => String(n).padStart(2, '0');
  return (
    `${pad(date.getUTCDate())}/${month}/${date.getUTCFullYear()}:` +
    `${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())} +0000`
  );
}

/**
 * A REST API Lambda proxy event as API Gateway sends it: the embedded default's server and the
 * tests build theirs here, so both exercise the production format.
 */
export function buildApiEvent(init: ApiEventInit): ApiEvent {
  const multiValueHeaders = lists(init.headers);
  const multiValueQueryStringParameters = lists(init.query);
  const received = init.received ?? new Date();
  const path =
    init.path ??
    init.resource.replace(/\{([^}]+)\}/g, (_, name: string) => init.pathParameters?.[name] ?? '');
  const claims = init.claims ?? null;
  return {
    resource: init.resource,
    path,
    httpMethod: init.method,
    headers: lastOf(multiValueHeaders) ?? {},
    multiValueHeaders: multiValueHeaders ?? {},
    queryStringParameters: lastOf(multiValueQueryStringParameters),
    multiValueQueryStringParameters,
    pathParameters:
      init.pathParameters && Object.keys(init.pathParameters).length > 0
        ? { ...init.pathParameters }
        : null,
    stageVariables: null,
    body: init.body ?? null,
    isBase64Encoded: init.isBase64Encoded ?? false,
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      authorizer: claims ? { claims: { ...claims } } : null,
      protocol: 'HTTP/1.1',
      httpMethod: init.method,
      identity: {
        accessKey: null,
        accountId: null,
        apiKey: null,
        apiKeyId: null,
        caller: null,
        clientCert: null,
        cognitoAuthenticationProvider: null,
        cognitoAuthenticationType: null,
        cognitoIdentityId: null,
        cognitoIdentityPoolId: null,
        principalOrgId: null,
        sourceIp: init.sourceIp ?? '127.0.0.1',
        user: null,
        userAgent: lastOf(multiValueHeaders)?.['user-agent'] ?? null,
        userArn: null,
      },
      path,
      stage: 'v1',
      requestId: init.requestId ?? 'local-request',
      requestTime: requestTime(received),
      requestTimeEpoch: received.getTime(),
      resourceId: 'local',
      resourcePath: init.resource,
    },
  };
}
