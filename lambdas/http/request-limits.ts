/**
 * The size limits every API request is held to before any schema sees it, on every server (the
 * Lambda handlers and the embedded default's HTTP server alike). Documented in README.md's API
 * section and in the OpenAPI document.
 */

/** The largest request body any route accepts, in bytes (1 MiB); more is a 413. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** How deep a request's JSON may nest: far deeper than any valid request, filters included. */
export const MAX_JSON_DEPTH = 32;
