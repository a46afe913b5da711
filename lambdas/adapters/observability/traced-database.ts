/**
 * A `Database` that records an X-Ray subsegment per statement, named by the statement's kind
 * (`postgres SELECT`, `postgres INSERT`, ...), and one per transaction with its statements
 * inside. A subsegment carries no SQL text and no parameter: statements are the code's, but a
 * transaction's `SET LOCAL` and every parameter can hold a tenant's or a user's data. A failed
 * statement is marked with its error, redacted as the logs redact it (redact.ts).
 */
import type { Tracer } from '@aws-lambda-powertools/tracer';
import type { Database, Queryable } from '../postgres/database';
import { redactError } from './redact';

/** The leading keywords a subsegment may be named by; anything else is `OTHER`. */
const STATEMENT_KINDS: ReadonlySet<string> = new Set([
  'SELECT',
  'INSERT',
  'UPDATE',
  'DELETE',
  'MERGE',
  'WITH',
  'VALUES',
  'CALL',
  'BEGIN',
  'COMMIT',
  'ROLLBACK',
  'SET',
  'CREATE',
  'ALTER',
  'DROP',
  'GRANT',
  'REVOKE',
  'ANALYZE',
  'VACUUM',
  'LOCK',
]);

/** Leading blanks and comments of a statement. */
const PREAMBLE = /^(?:\s+|--[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/)*/;

/** The statement's kind: its first keyword when it is a known one, else `OTHER`. */
function statementKind(sql: string): string {
  const rest = sql.slice(PREAMBLE.exec(sql)?.[0].length ?? 0);
  const word = /^[A-Za-z]+/.exec(rest)?.[0].toUpperCase();
  return word !== undefined && STATEMENT_KINDS.has(word) ? word : 'OTHER';
}

/** The subsegments' common prefix (the X-Ray console's timeline groups them by name). */
const DB_SUBSEGMENT_PREFIX = 'postgres';

type Segment = NonNullable<ReturnType<Tracer['getSegment']>>;

async function inSubsegment<T>(
  parent: Segment | undefined,
  name: string,
  fn: (subsegment: Segment | undefined) => Promise<T>,
): Promise<T> {
  if (!parent) return fn(undefined);
  const subsegment = parent.addNewSubsegment(name);
  try {
    return await fn(subsegment);
  } catch (err) {
    subsegment.addError(err instanceof Error ? redactError(err) : new Error('non-error thrown'));
    throw err;
  } finally {
    subsegment.close();
  }
}

function tracedQueryable(q: Queryable, parent: () => Segment | undefined): Queryable {
  return {
    query: (text, params) =>
      inSubsegment(parent(), `${DB_SUBSEGMENT_PREFIX} ${statementKind(text)}`, () =>
        q.query(text, params),
      ),
    exec: (script) =>
      inSubsegment(parent(), `${DB_SUBSEGMENT_PREFIX} script`, () => q.exec(script)),
  };
}

/**
 * `db` with a subsegment per statement and per transaction, under the current (sub)segment;
 * `db` itself where tracing is off.
 */
export function traceDatabase(db: Database, tracer: Tracer | undefined): Database {
  if (!tracer) return db;
  // Subsegments are attached to an explicit parent and never made current, so statements that
  // run concurrently stay siblings.
  const current = (): Segment | undefined => tracer.getSegment();
  const root = tracedQueryable(db, current);
  return {
    kind: db.kind,
    query: (text, params) => root.query(text, params),
    exec: (script) => root.exec(script),
    transaction: (fn, settings) =>
      inSubsegment(current(), `${DB_SUBSEGMENT_PREFIX} transaction`, (subsegment) =>
        db.transaction((tx) => fn(tracedQueryable(tx, () => subsegment)), settings),
      ),
    call: (text, params) =>
      inSubsegment(current(), `${DB_SUBSEGMENT_PREFIX} ${statementKind(text)}`, () =>
        db.call(text, params),
      ),
    close: () => db.close(),
  };
}
