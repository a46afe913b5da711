/**
 * Glue between the limiter and the HTTP handlers: `createHttpHandler` admits each request after
 * authentication (`limiter.admit`), binds the admission to the event here, merges its headers
 * into the response and settles it in `finally`. A handler that calls an LLM reports the token
 * usage with `admissionOf(req.event)?.recordUsage(usage, modelId)` so that `settle` adds its cost.
 */
import type { Admission } from '../core/limits/limiter';

const admissions = new WeakMap<object, Admission>();

/** Binds a request's admission to its event, where the handler can find it. */
export function attachAdmission(event: object, admission: Admission): void {
  admissions.set(event, admission);
}

/** The admission of the request this event belongs to (undefined when limits are off). */
export function admissionOf(event: object): Admission | undefined {
  return admissions.get(event);
}

/** The response headers with the rate-limit headers added (the handler's own win). */
export function withLimitHeaders(
  headers: Record<string, string> | undefined,
  admission: Admission | undefined,
): Record<string, string> {
  return { ...(admission?.headers ?? {}), ...(headers ?? {}) };
}
