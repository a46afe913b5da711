import {
  AppError,
  AuthenticationError,
  ConfigError,
  ConflictError,
  ForbiddenError,
  NotFoundError,
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
    ['RateLimitExceededError', new RateLimitExceededError(1, 1, {})],
    ['QuotaExceededError', new QuotaExceededError(QUOTA_KINDS[0], 'free', 1, 1, new Date(), {})],
    ['CostCapReachedError', new CostCapReachedError('tenant', new Date(), {})],
  ])('%s', (name, err) => {
    expect(err.name).toBe(name);
    expect(err.constructor.name).toBe(name);
  });
});
