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

/** 413: the request body is larger than the API accepts. */
export class PayloadTooLargeError extends AppError {
  override name = 'PayloadTooLargeError';
  constructor(limitBytes: number, headers?: Record<string, string>) {
    super('payload_too_large', `The request body is larger than ${limitBytes} bytes`, 413, {
      ...(headers ? { headers } : {}),
    });
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

/**
 * Maps any thrown value to a status and a body that leaks nothing unexpected. A store or network
 * error that is not an AppError is classified first ({@link classifyStoreError}): the caller's
 * input is a 4xx, a dependency that is down a retryable 503, anything else a 500.
 */
export function toErrorResponse(err: unknown): { status: number; body: ErrorBody } {
  if (!(err instanceof AppError)) err = classifyStoreError(err) ?? err;
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

/** Socket and DNS errno codes of a dependency that cannot be reached. */
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

/** node-postgres's own errors (they carry no code): a lost or refused connection, a pool timeout. */
const DRIVER_UNAVAILABLE =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error)/;

/**
 * What a store error says about whose fault it is, by PostgreSQL's SQLSTATE class
 * (https://www.postgresql.org/docs/current/errcodes-appendix.html) or the socket's errno:
 *
 * - 22 data exception (a value out of range, malformed, holding NUL) and 54 program limit (too
 *   many parameters, a statement too complex): the request's values, a 422;
 * - 23 integrity constraint: the request conflicts with stored data, a 409 for a unique
 *   violation and a 422 otherwise;
 * - 08 connection, 53 insufficient resources, 57 operator intervention (shutdown, a statement
 *   timeout), 40001 / 40P01 (serialization failure, deadlock), an unreachable host or a lost
 *   connection: the dependency, a retryable 503;
 * - anything else (42 syntax or undefined object: our bug): null, for the caller to treat as
 *   internal.
 */
export function classifyStoreError(err: unknown): AppError | null {
  if (err instanceof AppError) return err;
  const code = errorCode(err);
  if (code && /^[0-9A-Z]{5}$/.test(code)) {
    const sqlClass = code.slice(0, 2);
    if (sqlClass === '22' || sqlClass === '54') {
      return new AppError(
        'validation_error',
        `The request holds a value the database cannot use (SQLSTATE ${code})`,
        422,
        { cause: err },
      );
    }
    if (sqlClass === '23') {
      return code === '23505'
        ? new AppError('conflict', 'The request conflicts with a stored record', 409, {
            cause: err,
          })
        : new AppError(
            'validation_error',
            `The request breaks a rule of the stored data (SQLSTATE ${code})`,
            422,
            { cause: err },
          );
    }
    if (['08', '53', '57'].includes(sqlClass) || code === '40001' || code === '40P01') {
      return new UnavailableError('The database is unavailable; try again shortly.', err);
    }
    return null;
  }
  if (code && UNREACHABLE.has(code)) {
    return new UnavailableError('A dependency cannot be reached; try again shortly.', err);
  }
  if (err instanceof Error && DRIVER_UNAVAILABLE.test(err.message)) {
    return new UnavailableError('The database is unavailable; try again shortly.', err);
  }
  return null;
}
