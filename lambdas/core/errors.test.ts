import {
  AppError,
  AuthenticationError,
  ConfigError,
  ConflictError,
  ForbiddenError,
  NotFoundError,
  PayloadTooLargeError,
  toErrorResponse,
  UnavailableError,
  ValidationError,
} from './errors';
import { QUOTA_KINDS } from './limits/config';
import { CostCapReachedError, QuotaExceededError, RateLimitExceededError } from './limits/errors';

// Bundles are minified without keeping class names (lib/bundling.ts), so each error must name
// itself; a subclass that forgets would log as its parent.
describe('error names', () => {
  it.each<[string, Error]>([
    ['AppError', new AppError('x', 'm', 500)],
    ['ValidationError', new ValidationError('m')],
    ['AuthenticationError', new AuthenticationError()],
    ['ForbiddenError', new ForbiddenError('m')],
    ['NotFoundError', new NotFoundError('m')],
    ['ConflictError', new ConflictError('c', 'm')],
    ['UnavailableError', new UnavailableError('m')],
    ['ConfigError', new ConfigError('m')],
    ['PayloadTooLargeError', new PayloadTooLargeError(1)],
    ['RateLimitExceededError', new RateLimitExceededError(1, 1, {})],
    ['QuotaExceededError', new QuotaExceededError(QUOTA_KINDS[0], 'free', 1, 1, new Date(), {})],
    ['CostCapReachedError', new CostCapReachedError('tenant', new Date(), {})],
  ])('%s', (name, err) => {
    expect(err.name).toBe(name);
    expect(err.constructor.name).toBe(name);
  });
});

describe('store errors by whose fault they are', () => {
  /** An error as both PostgreSQL drivers report it: a message and the SQLSTATE in `code`. */
  const pgError = (code: string, message = 'store error') =>
    Object.assign(new Error(message), { code });

  it.each<[string, Error, number, boolean]>([
    ['22021 a NUL in text', pgError('22021'), 422, false],
    ['22008 a date out of range', pgError('22008'), 422, false],
    ['22003 a number out of range', pgError('22003'), 422, false],
    ['54000 too many parameters', pgError('54000'), 422, false],
    ['23505 a unique violation', pgError('23505'), 409, false],
    ['23514 a check violation', pgError('23514'), 422, false],
    ['08006 a connection failure', pgError('08006'), 503, true],
    ['57P01 an administrator shutdown', pgError('57P01'), 503, true],
    ['57014 a statement timeout', pgError('57014'), 503, true],
    ['53300 too many connections', pgError('53300'), 503, true],
    ['40P01 a deadlock', pgError('40P01'), 503, true],
    ['ECONNREFUSED', pgError('ECONNREFUSED'), 503, true],
    ['a connection the driver lost', new Error('Connection terminated unexpectedly'), 503, true],
    ['42P01 an undefined table (a bug)', pgError('42P01'), 500, false],
    ['a plain error', new Error('boom'), 500, false],
  ])('%s: %d, retryable %s', (_case, err, status, retryable) => {
    const rendered = toErrorResponse(err);

    expect(rendered.status).toBe(status);
    expect(rendered.body.error.retryable).toBe(retryable);
    // The store's own message never reaches the caller.
    expect(rendered.body.error.message).not.toContain('store error');
  });
});
