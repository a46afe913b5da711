/**
 * Errors defined outside the core name themselves, as the core's do (lambdas/core/errors.test.ts):
 * bundles are minified without keeping class names (lib/bundling.ts), so a subclass that forgot
 * would log under its parent's name.
 */
import { ParserUnavailableError } from '../../lambdas/adapters/parsers/shared';
import { MalformedMessageError } from '../../lambdas/ingest/handler';

it.each<[string, Error]>([
  ['MalformedMessageError', new MalformedMessageError('m')],
  ['ParserUnavailableError', new ParserUnavailableError('pdf', new Error('m'))],
])('%s names itself', (name, err) => {
  expect(err.name).toBe(name);
  expect(err.constructor.name).toBe(name);
});
