/**
 * Statements installed as PL/pgSQL functions ("routines"), so that the server keeps their plans.
 *
 * node-pg sends each statement unnamed, so the server parses and plans it on every request, a
 * large share of a search statement's time (docs/decisions/0101-search-plans-kept-as-routines.md).
 * Named prepared statements would keep the plan, but they pin RDS Proxy connections to one server
 * process. A PL/pgSQL function keeps the plans of its statements in the server process that runs
 * it, whichever client connection calls it, so nothing is pinned.
 *
 * A routine is generated from the statement itself, never written by hand. Its name is a hash of
 * its whole definition (the statement's text, its parameters' types, the wrapper around them),
 * each run of whitespace in the statement outside quotes read as one space: a changed statement
 * is a new routine, a statement only laid out differently is not, and a server that lacks the
 * routine (not yet migrated, or a routine dropped) is detected by the caller, which then runs the
 * statement directly.
 * `installRoutines` runs from `migrate`, after the versioned migrations, and drops routines under
 * the same prefix that the code no longer generates.
 *
 * A routine also applies the run-time settings its caller passes, for the call only, so a call is
 * one round trip where a statement in a transaction with `SET LOCAL` is three (BEGIN with the
 * settings, the statement, COMMIT).
 *
 * `plan_cache_mode = force_generic_plan` plans each statement once per server process, without
 * its parameter values. Only statements whose good plan does not depend on the values may become
 * routines (the search statement's plan is chosen before it is built; see search-plan.ts).
 */
import { createHash } from 'node:crypto';
import { errorCode } from '../../core/errors';
import type { LocalSettings, Queryable } from './database';

/** A statement whose text depends only on its shape, with every parameter's type. */
export interface RoutineStatement {
  readonly text: string;
  readonly types: readonly (string | undefined)[];
}

export interface Routine {
  readonly name: string;
  /** `CREATE OR REPLACE FUNCTION ...`, returning `SETOF record`. */
  readonly definition: string;
}

function typesOf(stmt: RoutineStatement): string[] {
  return stmt.types.map((t, i) => {
    if (!t) throw new Error(`parameter $${i + 1} has no type; a routine needs every type`);
    return t;
  });
}

/**
 * Everything of the definition after the routine's name. After the statement's parameters come
 * two arrays, run-time setting names and values, applied with `set_config(.., true)` (as `SET
 * LOCAL`) before the statement runs or is planned, so that a call is one round trip, with no
 * BEGIN and COMMIT around it: outside a transaction block the call is its own transaction, and
 * the settings end with it. With `role`, the routine runs as that role (`SET role`, restored when
 * it returns): the search statement's role of migrations/0013.
 */
function definitionAfterName(stmt: RoutineStatement, role?: string): string {
  if (stmt.text.includes('$routine$')) throw new Error('the statement contains $routine$');
  if (role !== undefined && !/^[a-z_][a-z0-9_]*$/.test(role))
    throw new Error(`not a role: ${role}`);
  const types = typesOf(stmt);
  return `(${[...types, 'text[]', 'text[]'].join(', ')})
RETURNS SETOF record LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan${role ? `\nSET role = ${role}` : ''}
AS $routine$
BEGIN
  PERFORM set_config(s.name, s.value, true) FROM unnest($${types.length + 1}, $${types.length + 2}) AS s(name, value);
  RETURN QUERY ${stmt.text};
END
$routine$`;
}

/**
 * SQL text with each run of whitespace outside quoted literals and identifiers as one space, and
 * none at either end: the same statement whatever its layout.
 */
export function normaliseSpace(sql: string): string {
  return sql
    .replace(/'(?:[^']|'')*'|"(?:[^"]|"")*"|\s+/g, (token) => (/^\s/.test(token) ? ' ' : token))
    .trim();
}

/**
 * The routine's name: the prefix and 16 hex digits of a hash of its whole definition, the
 * statement's layout aside ({@link normaliseSpace}).
 */
export function routineName(prefix: string, stmt: RoutineStatement, role?: string): string {
  const definition = definitionAfterName({ ...stmt, text: normaliseSpace(stmt.text) }, role);
  const hash = createHash('sha256').update(definition).digest('hex');
  return `${prefix}${hash.slice(0, 16)}`;
}

export function routineFor(prefix: string, stmt: RoutineStatement, role?: string): Routine {
  const name = routineName(prefix, stmt, role);
  return {
    name,
    definition: `CREATE OR REPLACE FUNCTION ${name}${definitionAfterName(stmt, role)}`,
  };
}

/**
 * The call of a statement's routine: its parameters and the settings to run it with, naming the
 * rows' columns.
 */
export function routineCall(
  name: string,
  stmt: RoutineStatement & { readonly values: readonly unknown[] },
  columns: string,
  settings: LocalSettings = {},
): { text: string; values: unknown[] } {
  const types = [...typesOf(stmt), 'text[]', 'text[]'];
  const args = types.map((t, i) => `$${i + 1}::${t}`);
  return {
    text: `SELECT * FROM ${name}(${args.join(', ')}) AS r(${columns})`,
    values: [...stmt.values, Object.keys(settings), Object.values(settings).map(String)],
  };
}

/** Whether an error is the server's "function does not exist" (SQLSTATE 42883). */
export function isUndefinedFunction(error: unknown): boolean {
  return errorCode(error) === '42883';
}

/**
 * Creates the routines the server lacks and drops those under the prefix that are not in the
 * list, in the current schema. Run it in the migration's transaction and lock.
 */
export async function installRoutines(
  tx: Queryable,
  prefix: string,
  routines: readonly Routine[],
): Promise<{ created: string[]; dropped: string[] }> {
  const { rows } = await tx.query<{ name: string; signature: string }>(
    `SELECT p.proname AS name, p.oid::regprocedure::text AS signature
     FROM pg_proc p
     WHERE p.pronamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())
       AND starts_with(p.proname, $1)`,
    [prefix],
  );
  const existing = new Set(rows.map((r) => r.name));
  const wanted = new Set(routines.map((r) => r.name));
  const created: string[] = [];
  for (const routine of routines) {
    if (existing.has(routine.name)) continue;
    await tx.exec(routine.definition);
    created.push(routine.name);
  }
  const dropped: string[] = [];
  for (const row of rows) {
    if (wanted.has(row.name)) continue;
    // regprocedure's text is the catalog's own quoting of the name and argument types.
    await tx.exec(`DROP FUNCTION ${row.signature}`);
    dropped.push(row.name);
  }
  return { created, dropped };
}
