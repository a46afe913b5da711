/**
 * One Lambda serving several API routes: dispatch on API Gateway's `routeKey`
 * (`"POST /documents"`). An unknown route key is a wiring mistake: logged, and a 404.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Context } from 'aws-lambda';
import { NotFoundError, toErrorResponse } from '../core/errors';
import type { ApiEvent, ApiResult } from './http-handler';

export type RouteHandler = (event: ApiEvent, context: Context) => Promise<ApiResult>;

export function dispatchByRouteKey(
  routes: Readonly<Record<string, RouteHandler>>,
  logger: Pick<Logger, 'error'>,
): RouteHandler {
  return async (event, context) => {
    const route = Object.hasOwn(routes, event.routeKey) ? routes[event.routeKey] : undefined;
    if (route) return route(event, context);
    logger.error('no handler for route key', { routeKey: event.routeKey });
    const { status, body } = toErrorResponse(new NotFoundError('No such route'));
    return {
      statusCode: status,
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify(body),
    };
  };
}
