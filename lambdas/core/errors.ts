/**
 * The one error model. Every failure the API reports is an AppError (or becomes a generic
 * internal error), rendered as `{ "error": { "code", "message", "retryable" } }`.
 */

/**
 * Base class: a stable machine code, an HTTP status and whether the message may be shown. Every
 * subclass names itself (`override name = '...'`): bundles are minified without keeping class
 * names (lib/bundling.ts), so `new.target.name` would log a one-letter name.
 */
export class AppError extends Error {
  override name = 'AppError';
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
    readonly options: {
      retryable?: boolean;
      expose?: boolean;
      details?: unknown;
      cause?: unknown;
      /** Response headers that belong to this error (e.g. Retry-After). */
      headers?: Record<string, string>;
    } = {},
  ) {
    super(message, { cause: options.cause });
  }
  get retryable(): boolean {
    return this.options.retryable ?? false;
  }
  /** Whether `message` is safe to return to the caller (5xx messages are not, by default). */
  get expose(): boolean {
    return this.options.expose ?? this.status < 500;
  }
}

/** 422: the request or event does not match its schema; the message names the field. */
export class ValidationError extends AppError {
  override name = 'ValidationError';
  constructor(message: string, details?: unknown) {
    super('validation_error', message, 422, { details });
  }
}

/** 401: no credentials, or credentials that do not verify. */
export class AuthenticationError extends AppError {
  override name = 'AuthenticationError';
  constructor(message = 'Authentication is required') {
    super('authentication_required', message, 401);
  }
}

/** 403: authenticated, but not allowed. */
export class ForbiddenError extends AppError {
  override name = 'ForbiddenError';
  constructor(message: string) {
    super('forbidden', message, 403);
  }
}

/** 404: missing, or owned by someone else (we do not reveal which). */
export class NotFoundError extends AppError {
  override name = 'NotFoundError';
  constructor(message: string) {
    super('not_found', message, 404);
  }
}

/** 409: the resource is not in a state that allows the request (`code` says which). */
export class ConflictError extends AppError {
  override name = 'ConflictError';
  constructor(code: string, message: string) {
    super(code, message, 409);
  }
}

/** 503: a dependency (database, embedding model, LLM) cannot be reached right now. */
export class UnavailableError extends AppError {
  override name = 'UnavailableError';
  constructor(message: string, cause?: unknown) {
    super('unavailable', message, 503, { retryable: true, expose: true, cause });
  }
}

/** Configuration is wrong: raised at start-up, never per request. */
export class ConfigError extends AppError {
  override name = 'ConfigError';
  constructor(message: string) {
    super('config_error', message, 500, { expose: true });
  }
}

/** The shape every error response takes. */
export interface ErrorBody {
  error: { code: string; message: string; retryable: boolean; details?: unknown };
}

/** Maps any thrown value to a status and a body that leaks nothing unexpected. */
export function toErrorResponse(err: unknown): { status: number; body: ErrorBody } {
  if (err instanceof AppError) {
    return {
      status: err.status,
      body: {
        error: {
          code: err.code,
          message: err.expose ? err.message : 'Internal error',
          retryable: err.retryable,
          ...(err.expose && err.options.details !== undefined
            ? { details: err.options.details }
            : {}),
        },
      },
    };
  }
  return {
    status: 500,
    body: { error: { code: 'internal_error', message: 'Internal error', retryable: false } },
  };
}

/**
 * The `code` a thrown value carries, if any: Node's errno codes (`ENOENT`), PostgreSQL's SQLSTATE
 * (`42883`) as both drivers report it.
 */
export function errorCode(err: unknown): string | undefined {
  const code =
    typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : undefined;
}
