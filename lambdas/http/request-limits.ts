/**
 * The size limits every API request is held to before any schema sees it, on every server (the
 * Lambda handlers and the embedded default's HTTP server alike). Documented in README.md's API
 * section and in the OpenAPI document.
 */

/** The largest request body any route accepts, in bytes (1 MiB); more is a 413. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** How deep a request's JSON may nest: far deeper than any valid request, filters included. */
export const MAX_JSON_DEPTH = 32;

/**
 * A synchronous Lambda invocation's request payload: 6 MB, counted in bytes of the event JSON
 * (https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html). API Gateway's own
 * payload limit (10 MB) is larger, so this one decides what a buffered upload can be.
 */
export const LAMBDA_SYNC_PAYLOAD_BYTES = 6 * 1024 * 1024;

/**
 * What the event adds around an upload's body: headers (API Gateway caps a request's headers at
 * 10 KB, the bearer token included), the request context with the JWT claims, the route and the
 * path: 2,086 bytes on the local server with a development token (test/contract/search-upload.test.ts
 * prints it). API Gateway adds forwarding headers; 64 KiB leaves room for any header set it accepts.
 */
const EVENT_ENVELOPE_BYTES = 64 * 1024;

/**
 * The largest multipart body `POST /api/upload` accepts (4,669,440 bytes, about 4.45 MiB): API
 * Gateway base64-encodes a binary body (4 bytes for every 3), and the encoded body plus the
 * envelope must fit in LAMBDA_SYNC_PAYLOAD_BYTES. The file itself is a little smaller (the
 * multipart framing: boundaries and part headers). Larger files take the presigned route,
 * `POST /api/documents`. See docs/decisions/0144-seed-search-and-upload.md.
 */
export const MAX_UPLOAD_BODY_BYTES =
  Math.floor((LAMBDA_SYNC_PAYLOAD_BYTES - EVENT_ENVELOPE_BYTES) / 4) * 3;
