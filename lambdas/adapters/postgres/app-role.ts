/**
 * The application's database role: what the request-serving functions log in as in AWS, so that
 * a bug or an injection in a handler can read and change rows but never the schema.
 *
 * A NOLOGIN group role holds the grants; the login role is its member. Secrets Manager's
 * single-user rotation changes the login's password as the login itself, so the role never
 * changes name (lib/constructs/serverless-database.ts says why). The migration function (which
 * logs in as the cluster's owner) calls `ensureAppRole` after every migration run, so tables
 * added by later migrations are granted too.
 *
 * Granted, in the current schema only: SELECT, INSERT, UPDATE, DELETE on the tables (SELECT
 * only on the migration ledger and the embedding-model record), USAGE and SELECT on sequences,
 * USAGE on the schema, CONNECT on the database. Not granted: CREATE anywhere, TRUNCATE,
 * REFERENCES, TRIGGER, ownership of anything.
 *
 * Role and schema names cannot be bind parameters in PostgreSQL; they are checked against a
 * plain-identifier pattern and quoted. The password is a bind parameter of `format(%L)`, quoted
 * by the server and never logged.
 */
import type { Database } from './database';
import { quoteIdentifier } from './sql-params';

/** Tables the application reads but never writes: the schema is the migrations' business. */
export const READ_ONLY_TABLES = ['schema_migrations', 'embedding_config'] as const;

/** The default group role holding the application's grants. */
export const APP_GROUP_ROLE = 'groundwork_app_rw';

export interface AppRoleOptions {
  /** The NOLOGIN role that holds the grants. @default APP_GROUP_ROLE */
  readonly group?: string;
  /** The login role (the username in the application's secret). */
  readonly login: string;
  /** Its password, set only when the role is created: afterwards, rotation owns it. */
  readonly password: string;
}

export interface AppRoleResult {
  /** Roles this call created (empty when they existed). */
  readonly created: string[];
  readonly schema: string;
}

/** Creates (if missing) the group and login roles and (re)grants the group its privileges. */
export async function ensureAppRole(db: Database, options: AppRoleOptions): Promise<AppRoleResult> {
  const group = options.group ?? APP_GROUP_ROLE;
  const g = quoteIdentifier(group);
  const login = quoteIdentifier(options.login);
  return db.transaction(async (tx) => {
    const { rows: ctx } = await tx.query<{ schema: string; database: string }>(
      'SELECT current_schema() AS schema, current_database() AS database',
    );
    const schema = ctx[0]?.schema ?? 'public';
    const s = quoteIdentifier(schema);
    const database = quoteIdentifier(ctx[0]?.database ?? '');
    // Two processes may get here at once (roles are cluster-wide): one at a time.
    await tx.query("SELECT pg_advisory_xact_lock(hashtext('groundwork:app-role'))");
    const { rows: existing } = await tx.query<{ rolname: string }>(
      'SELECT rolname FROM pg_roles WHERE rolname = ANY($1::text[])',
      [[group, options.login]],
    );
    const exists = new Set(existing.map((r) => r.rolname));
    const created: string[] = [];
    if (!exists.has(group)) {
      await tx.exec(`CREATE ROLE ${g} NOLOGIN`);
      created.push(group);
    }
    if (!exists.has(options.login)) {
      const { rows } = await tx.query<{ sql: string }>(
        `SELECT format('CREATE ROLE %I LOGIN PASSWORD %L', $1::text, $2::text) AS sql`,
        [options.login, options.password],
      );
      await tx.exec(rows[0]!.sql);
      created.push(options.login);
    }
    const readOnly = READ_ONLY_TABLES.map((t) => `${s}.${quoteIdentifier(t)}`).join(', ');
    await tx.exec(
      [
        `GRANT CONNECT ON DATABASE ${database} TO ${g}`,
        `GRANT USAGE ON SCHEMA ${s} TO ${g}`,
        `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${s} TO ${g}`,
        `REVOKE INSERT, UPDATE, DELETE ON ${readOnly} FROM ${g}`,
        `GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA ${s} TO ${g}`,
        `GRANT ${g} TO ${login}`,
      ].join(';\n'),
    );
    return { created, schema };
  });
}
