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
 * Row-level security (migrations/0013) holds for the group: it does not own the tables and has no
 * BYPASSRLS. It is a member of the search statement's role (`SEARCH_ROLE`) without inheriting it
 * (NOINHERIT), so that only the search statement, which switches to it, reads under that role's
 * policy.
 *
 * Role and schema names cannot be bind parameters in PostgreSQL; they are checked against a
 * plain-identifier pattern and quoted. The password is a bind parameter of `format(%L)`, quoted
 * by the server and never logged.
 */
import type { Database, Queryable } from './database';
import { SEARCH_ROLE } from './search-repository';
import { quoteIdentifier } from './sql-params';

/** Tables the application reads but never writes: the schema is the migrations' business. */
const READ_ONLY_TABLES = [
  'schema_migrations',
  'embedding_config',
  'embedding_switch',
  'filter_indexes',
] as const;

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
      await tx.exec(`CREATE ROLE ${g} NOLOGIN NOINHERIT`);
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
    await grantGroup(tx, g, s);
    await tx.exec(`GRANT CONNECT ON DATABASE ${database} TO ${g};\nGRANT ${g} TO ${login}`);
    return { created, schema };
  });
}

/**
 * The group's grants in schema `s` (both quoted), and its membership of the search role. With
 * `selectOnly`, SELECT on the tables and nothing that writes (the read group).
 */
async function grantGroup(
  tx: Queryable,
  g: string,
  s: string,
  options: { readonly selectOnly?: boolean } = {},
): Promise<void> {
  const readOnly = READ_ONLY_TABLES.map((t) => `${s}.${quoteIdentifier(t)}`).join(', ');
  // An existing group from before row-level security inherited what it was granted.
  await tx.exec(`ALTER ROLE ${g} NOINHERIT`);
  await tx.exec(
    (options.selectOnly
      ? [`GRANT USAGE ON SCHEMA ${s} TO ${g}`, `GRANT SELECT ON ALL TABLES IN SCHEMA ${s} TO ${g}`]
      : [
          `GRANT USAGE ON SCHEMA ${s} TO ${g}`,
          `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${s} TO ${g}`,
          `REVOKE INSERT, UPDATE, DELETE ON ${readOnly} FROM ${g}`,
          `GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA ${s} TO ${g}`,
          `GRANT EXECUTE ON FUNCTION ${s}.gw_claim_expired_leases(timestamptz, integer) TO ${g}`,
          // Documents an older ingestion version indexed (migrations/0022, 0023), for the same sweep.
          `GRANT EXECUTE ON FUNCTION ${s}.gw_outdated_documents(integer, integer, integer) TO ${g}`,
          // The model switch's job (migrations/0019), run by the ingest function.
          ...[
            'gw_embedding_switch_claim(integer)',
            'gw_embedding_switch_write(uuid[], text[])',
            'gw_embedding_switch_progress()',
            'gw_embedding_switch_finish()',
          ].map((f) => `GRANT EXECUTE ON FUNCTION ${s}.${f} TO ${g}`),
        ]
    ).join(';\n'),
  );
  // PostgreSQL 16 and later record inheritance per grant (from NOINHERIT when it is made); 15
  // reads it from the member role alone and has no INHERIT option.
  const { rows } = await tx.query<{ v: number }>(
    "SELECT current_setting('server_version_num')::int AS v",
  );
  const perGrant = (rows[0]?.v ?? 0) >= 160000;
  await tx.exec(
    `GRANT ${quoteIdentifier(SEARCH_ROLE)} TO ${g}${perGrant ? ' WITH INHERIT FALSE, SET TRUE' : ''}`,
  );
}

/** The group role of the read connection: SELECT only (postgres/databases.ts). */
export const READ_GROUP_ROLE = 'groundwork_app_ro';

/**
 * The read group (no login), for a second connection that serves the reads of
 * postgres/databases.ts (`GROUNDWORK_DATABASE_READ_URL`): SELECT on the tables, nothing that
 * writes, and the search role as the application's group has it. The read connection switches to
 * it for each request (`DatabaseOptions.requestRole`), so a write sent there by mistake fails as it
 * would on an Aurora reader. Run it on the writer, as the owner; `member` (the read connection's
 * login) is made a member so that it may switch.
 */
export function ensureReadRole(
  db: Database,
  options: { readonly group?: string; readonly member: string },
): Promise<void> {
  return ensureGroup(db, options.group ?? READ_GROUP_ROLE, options.member, { selectOnly: true });
}

/**
 * The group role alone (no login), for a session that logs in as another role and switches to
 * the group for each request (`DatabaseOptions.requestRole`): the embedded default (PGlite's
 * superuser) and a developer's server (the owner, made a member here so that it may switch).
 */
export function ensureRequestRole(db: Database, group: string = APP_GROUP_ROLE): Promise<void> {
  return ensureGroup(db, group, null, {});
}

/**
 * Creates `group` (NOLOGIN NOINHERIT) if missing, grants it its privileges in the current schema,
 * and makes `member` (null: the current user) a member of it.
 */
async function ensureGroup(
  db: Database,
  group: string,
  member: string | null,
  grants: { readonly selectOnly?: boolean },
): Promise<void> {
  const g = quoteIdentifier(group);
  await db.transaction(async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock(hashtext('groundwork:app-role'))");
    const { rows } = await tx.query<{ schema: string; exists: boolean; member: boolean }>(
      `SELECT current_schema() AS schema,
              EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1) AS exists,
              EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)
                AND pg_has_role(coalesce($2::text, current_user::text), $1, 'MEMBER') AS member`,
      [group, member],
    );
    const row = rows[0]!;
    if (!row.exists) await tx.exec(`CREATE ROLE ${g} NOLOGIN NOINHERIT`);
    await grantGroup(tx, g, quoteIdentifier(row.schema), grants);
    if (!row.member)
      await tx.exec(`GRANT ${g} TO ${member === null ? 'CURRENT_USER' : quoteIdentifier(member)}`);
  });
}
