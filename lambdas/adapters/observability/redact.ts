/**
 * What an error may carry into a log line. Database drivers attach the statement's parameters
 * (PGlite's `params`), the offending row (`detail`: "Key (title)=(...)") and, for a value
 * PostgreSQL cannot read, quote the value in the message itself: in each case a user's question,
 * title or document text. Logs keep the error's name, SQLSTATE, statement and location, which is
 * what diagnosis needs, and never the data.
 */

/** Attributes of a driver's error that hold the caller's data rather than the statement's. */
const DATA_ATTRIBUTES: ReadonlySet<string> = new Set([
  'params',
  'parameters',
  'values',
  'queryOptions',
  'detail',
  'where',
  'internalQuery',
  'hint',
]);

/** SQLSTATE class 22 (data exception) messages quote the value they could not read. */
const QUOTED = /"(?:[^"\\]|\\.)*"/g;

function isDataException(error: Error & { code?: unknown }): boolean {
  return typeof error.code === 'string' && error.code.startsWith('22');
}

/**
 * A copy of `error` (and of its chain of causes) without the attributes that hold data, and with
 * the quoted value removed from a data exception's message. Name, stack, SQLSTATE and the
 * statement stay.
 */
export function redactError(error: Error, depth = 0): Error {
  const copy = new Error(
    isDataException(error) ? error.message.replace(QUOTED, '"[redacted]"') : error.message,
  );
  copy.name = error.name;
  if (error.stack !== undefined) {
    const frames = error.stack.indexOf('\n    at ');
    copy.stack = `${error.name}: ${copy.message}${frames >= 0 ? error.stack.slice(frames) : ''}`;
  }
  const target = copy as unknown as Record<string, unknown>;
  for (const [key, value] of Object.entries(error)) {
    if (DATA_ATTRIBUTES.has(key) || key === 'cause') continue;
    target[key] = value;
  }
  if (error.cause !== undefined) {
    copy.cause =
      error.cause instanceof Error && depth < 8
        ? redactError(error.cause, depth + 1)
        : error.cause instanceof Error
          ? '[cause omitted]'
          : error.cause;
  }
  return copy;
}

/** A JSON replacer for log lines: every error in an entry is logged redacted. */
export function redactLogValue(_key: string, value: unknown): unknown {
  return value instanceof Error ? redactError(value) : value;
}
