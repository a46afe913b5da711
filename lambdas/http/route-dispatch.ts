/**
 * One Lambda serving several API routes: dispatch on the event's route key (`"POST /api/documents"`,
 * from the REST API's `httpMethod` and `resource`). An unknown route key is a wiring mistake:
 * logged, and a 404.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Context } from 'aws-lambda';
import { ConfigError, NotFoundError, toErrorResponse } from '../core/errors';
import { API_ROUTES, routeKey, type ApiFunction } from './api-routes';
import { routeKeyOf, type ApiEvent } from './api-event';
import type { ApiResult } from './http-handler';

export type RouteHandler = (event: ApiEvent, context: Context) => Promise<ApiResult>;

export function dispatchByRouteKey(
  routes: Readonly<Record<string, RouteHandler>>,
  logger: Pick<Logger, 'error'>,
): RouteHandler {
  return async (event, context) => {
    const key = routeKeyOf(event);
    const route = Object.hasOwn(routes, key) ? routes[key] : undefined;
    if (route) return route(event, context);
    logger.error('no handler for route key', { routeKey: key });
    const { status, body } = toErrorResponse(new NotFoundError('No such route'));
    return {
      statusCode: status,
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify(body),
    };
  };
}

/**
 * A function's handlers by route key, from its handlers by route name: the route
 * table decides the method and path. Used by each Lambda entry and by the embedded default.
 * @throws ConfigError when a route of `fn` has no handler or a handler has no route.
 */
export function bindRoutes(
  fn: ApiFunction,
  handlers: Readonly<Record<string, RouteHandler>>,
): Record<string, RouteHandler> {
  const routes = API_ROUTES.filter((r) => r.function === fn);
  const bound: Record<string, RouteHandler> = {};
  for (const route of routes) {
    const handler = Object.hasOwn(handlers, route.name) ? handlers[route.name] : undefined;
    if (!handler) throw new ConfigError(`${fn}: no handler for route ${route.name}`);
    bound[routeKey(route)] = handler;
  }
  const extra = Object.keys(handlers).filter((name) => !routes.some((r) => r.name === name));
  if (extra.length > 0)
    throw new ConfigError(`${fn}: handlers without a route: ${extra.join(', ')}`);
  return bound;
}
