/**
 * `groundwork token --user <id> --tenant <id> [--plan <plan>] [--admin] [--expires <seconds>]`:
 * signs a token with the embedded default's local issuer (the key in `<dataDir>/keys`) and
 * prints only the token, so that scripts can write `TOKEN=$(groundwork token ...)`.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createLocalIssuer, type LocalIssuer } from '../../lambdas/adapters/auth/local-issuer';
import { TENANT_ID_PATTERN } from '../../lambdas/core/ingestion/object-attributes';
import { isUsableUserId } from '../../lambdas/http/identity';

const TOKEN_USAGE =
  'Usage: groundwork token --user <id> --tenant <id> [--plan <plan>] [--admin] [--expires <seconds>]';

/** Where the embedded default keeps its signing key (the server must use the same folder). */
export function localKeyDir(dataDir: string): string {
  return path.join(dataDir, 'keys');
}

/**
 * The plan of the tokens the embedded default hands its own developer: the start banner's, the
 * playground's sign-in and the CLI commands' (`ask`, `search`, `ingest`, ...). It has no monthly
 * quota, so that trying the product on one's own folder never stops at the free plan's 50
 * answers; `groundwork token --plan <plan>` (or the playground's API with `plan`) mints a token of
 * any plan to try quotas as an API consumer would meet them.
 */
export const DEVELOPER_PLAN = 'growth';

/** A development token on {@link DEVELOPER_PLAN}. */
export function developerToken(
  issuer: Pick<LocalIssuer, 'issueToken'>,
  userId: string,
  tenantId: string,
  options: { admin?: boolean } = {},
): string {
  return issuer.issueToken({
    sub: userId,
    tenantId,
    admin: options.admin === true,
    plan: DEVELOPER_PLAN,
  });
}

interface Output {
  write(text: string): unknown;
}

export interface TokenCommandOptions {
  readonly dataDir: string;
  /** @default process.stdout */
  readonly stdout?: Output;
  /** @default process.stderr */
  readonly stderr?: Output;
}

/** Runs the command; returns the exit code (2 for a usage error). */
export async function tokenCommand(args: string[], options: TokenCommandOptions): Promise<number> {
  const stdout = options.stdout ?? process.stdout;
  const stderr = options.stderr ?? process.stderr;
  const usageError = (message: string) => {
    stderr.write(`${message}\n${TOKEN_USAGE}\n`);
    return 2;
  };

  let values;
  try {
    ({ values } = parseArgs({
      args,
      strict: true,
      allowPositionals: false,
      options: {
        user: { type: 'string' },
        tenant: { type: 'string' },
        plan: { type: 'string' },
        admin: { type: 'boolean', default: false },
        expires: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }));
  } catch (err) {
    return usageError(err instanceof Error ? err.message : String(err));
  }
  if (values.help) {
    stdout.write(`${TOKEN_USAGE}\n`);
    return 0;
  }
  if (!values.user?.trim()) return usageError('--user is required.');
  if (!isUsableUserId(values.user.trim())) {
    return usageError(
      `--user "${values.user.trim()}" cannot name a user: no "/" or control characters, up to 256.`,
    );
  }
  if (!values.tenant) return usageError('--tenant is required.');
  if (!TENANT_ID_PATTERN.test(values.tenant)) {
    return usageError(
      `--tenant "${values.tenant}" is not a valid tenant id (letters, digits, - and _, up to 64).`,
    );
  }
  if (values.plan !== undefined && values.plan.trim() === '') {
    return usageError('--plan must not be empty.');
  }
  let expiresInSeconds: number | undefined;
  if (values.expires !== undefined) {
    expiresInSeconds = /^\d+$/.test(values.expires) ? Number(values.expires) : NaN;
    if (!Number.isSafeInteger(expiresInSeconds) || expiresInSeconds <= 0) {
      return usageError(`--expires "${values.expires}" must be a positive number of seconds.`);
    }
  }

  const issuer = await createLocalIssuer({ keyDir: localKeyDir(options.dataDir) });
  const token = issuer.issueToken({
    sub: values.user.trim(),
    tenantId: values.tenant,
    admin: values.admin,
    ...(values.plan === undefined ? {} : { plan: values.plan.trim() }),
    ...(expiresInSeconds === undefined ? {} : { expiresInSeconds }),
  });
  stdout.write(`${token}\n`);
  return 0;
}
