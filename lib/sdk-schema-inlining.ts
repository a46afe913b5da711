/**
 * A bundle-size workaround for the AWS SDK's generated schemas (aws/aws-sdk-js-v3#7607, open:
 * bundles grew sharply when the clients moved to schema-based serialisation in late 2025).
 *
 * Each client's ES module build keeps the shapes of its whole service in one module,
 * `dist-es/schemas/schemas_0.js`, and writes their trait keys as computed properties,
 * `{ [_e]: _c, [_hE]: 403 }`, where `_e`, `_c` and `_hE` are string constants of that module.
 * esbuild cannot prove a computed key free of side effects, so it keeps every such literal, and
 * with it every shape it refers to, whether or not a command the function sends needs it: 66 KB
 * of the S3 client in a bundle that sends three of its commands.
 *
 * {@link ensureSchemaInlinedClients} copies each client's ES module build into
 * `node_modules/.cache/groundwork-sdk/`, with those keys written as the string literals the
 * constants hold (the same objects: no other byte changes), and the `bundled` builds import the
 * copies through esbuild aliases ({@link schemaInlinedClientAliases}, used by bundleAliases in
 * lib/bundling.ts). esbuild then drops the unused shapes. The copies resolve their dependencies
 * (`@smithy/*`, `@aws-sdk/core`, ...) from the project's node_modules, as the originals do.
 * test/infra/sdk-schema-inlining.test.ts checks that every copied schema module exports the
 * same values as the original and that a bundled S3 client still works against an S3 emulator.
 *
 * When the SDK writes its keys as literals (or the pattern changes), the rewrite finds nothing
 * and the copies are the originals: bundles grow back, nothing breaks.
 */
import {
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';

/** The SDK clients the functions use, whose bundled builds take the rewritten copies. */
export const SCHEMA_INLINED_CLIENTS = [
  '@aws-sdk/client-bedrock-runtime',
  '@aws-sdk/client-dynamodb',
  '@aws-sdk/client-s3',
  '@aws-sdk/client-secrets-manager',
] as const;

/** Where the copies go, relative to the project root (inside node_modules: never committed). */
export const SCHEMA_INLINED_DIR = 'node_modules/.cache/groundwork-sdk';

/** Bump when the rewrite changes, so that copies made by an older one are made again. */
const REWRITE_VERSION = 1;

/** `const _x = "literal";` at the start of a line: the string constants a schema module declares. */
const STRING_CONSTANT = /^const (_\w*) = ("(?:[^"\\\n]|\\.)*");$/gm;
/** A computed key `[_x]:` opening an object literal or following a comma. */
const COMPUTED_KEY = /([{,]\s*)\[(_\w*)\]:/g;

/**
 * A schema module's source with each computed key that names one of its string constants
 * written as that string literal, and how many keys were rewritten.
 */
export function inlineSchemaKeys(source: string): { source: string; inlined: number } {
  const constants = new Map<string, string>();
  for (const [, name, literal] of source.matchAll(STRING_CONSTANT)) {
    if (name !== undefined && literal !== undefined) constants.set(name, literal);
  }
  let inlined = 0;
  const rewritten = source.replace(COMPUTED_KEY, (key: string, before: string, name: string) => {
    const literal = constants.get(name);
    if (literal === undefined) return key;
    inlined += 1;
    return `${before}${literal}:`;
  });
  return { source: rewritten, inlined };
}

/**
 * esbuild aliases (import specifier -> path from the project root) sending each client's
 * imports to its copy's ES module entry.
 */
export function schemaInlinedClientAliases(): Record<string, string> {
  return Object.fromEntries(
    SCHEMA_INLINED_CLIENTS.map((client) => [
      client,
      `./${SCHEMA_INLINED_DIR}/${client}/dist-es/index.js`,
    ]),
  );
}

/** What a copy was made from: the client's version and the rewrite's. */
function stampOf(projectDir: string, client: string): string {
  const manifest = JSON.parse(
    readFileSync(path.join(projectDir, 'node_modules', client, 'package.json'), 'utf8'),
  ) as { version: string };
  return `${client}@${manifest.version} rewrite ${REWRITE_VERSION}\n`;
}

const STAMP_FILE = '.groundwork-stamp';

/** Rewritten keys per schema module, of the copies a call made. */
export type InliningReport = Record<string, number>;

/** Makes one client's copy in `target`: package.json and dist-es, schema modules rewritten. */
function writeCopy(projectDir: string, client: string, target: string): InliningReport {
  const source = path.join(projectDir, 'node_modules', client);
  mkdirSync(target, { recursive: true });
  cpSync(path.join(source, 'package.json'), path.join(target, 'package.json'));
  cpSync(path.join(source, 'dist-es'), path.join(target, 'dist-es'), { recursive: true });
  const report: InliningReport = {};
  const schemas = path.join(target, 'dist-es', 'schemas');
  for (const file of existsSync(schemas) ? readdirSync(schemas) : []) {
    if (!file.endsWith('.js')) continue;
    const module = path.join(schemas, file);
    const { source: rewritten, inlined } = inlineSchemaKeys(readFileSync(module, 'utf8'));
    writeFileSync(module, rewritten);
    report[path.posix.join(client, 'dist-es', 'schemas', file)] = inlined;
  }
  return report;
}

/**
 * Makes the rewritten copies under `projectDir` that are missing or stale (another client
 * version, another rewrite), and returns what each made copy rewrote. Safe to call from
 * concurrent processes: a copy is made in a private folder and renamed into place.
 */
export function ensureSchemaInlinedClients(projectDir: string): InliningReport {
  const report: InliningReport = {};
  for (const client of SCHEMA_INLINED_CLIENTS) {
    const target = path.join(projectDir, SCHEMA_INLINED_DIR, client);
    const stamp = stampOf(projectDir, client);
    const stampFile = path.join(target, STAMP_FILE);
    const fresh = () => existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp;
    if (fresh()) continue;
    const staging = `${target}.${process.pid}.${Date.now()}`;
    const made = writeCopy(projectDir, client, staging);
    writeFileSync(path.join(staging, STAMP_FILE), stamp);
    if (fresh()) {
      // Another process made the same copy meanwhile (and may be bundling from it): keep it.
      rmSync(staging, { recursive: true, force: true });
      continue;
    }
    rmSync(target, { recursive: true, force: true });
    try {
      renameSync(staging, target);
    } catch (error) {
      // Another process put its copy in place between our rm and rename: keep that one.
      rmSync(staging, { recursive: true, force: true });
      if (!fresh()) throw error;
      continue;
    }
    Object.assign(report, made);
  }
  return report;
}
