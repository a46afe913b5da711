/**
 * How every Lambda is built, in one place: the CDK construct (GroundworkFunction) maps these
 * options onto NodejsFunction's bundling and its bundling hooks, and bench/cold-start.ts passes
 * the same ones to esbuild, so the benchmark measures what is deployed. No CDK import here, so
 * that the bench can read it cheaply.
 */
import path from 'node:path';

/**
 * The most a function's bundle may weigh (minified, without its source map and side-loaded
 * modules): a generous ceiling against an accidental dependency (test/infra/bundling.test.ts),
 * not a budget to optimise to; the cold-start benchmark reports each bundle's size and init.
 */
export const BUNDLE_SIZE_CEILING_BYTES = 1024 * 1024;

/** Node.js major version of the Lambda runtime and of esbuild's target. */
export const NODE_MAJOR = 22;

/** esbuild options shared by the deployment and the cold-start benchmark. */
export const ESBUILD_OPTIONS = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: `node${NODE_MAJOR}`,
  minify: true,
  // Class and function names are not kept: keeping them costs about 35 KB of every bundle
  // (a `__name` call per named function). Our errors name themselves (lambdas/core/errors.ts);
  // the SDK's exceptions carry their names as strings; side bundles (third-party parsers) do
  // keep theirs.
  keepNames: false,
  // Maps ship with the bundle (file and line only, no sources: a smaller asset).
  sourcemap: true,
  sourcesContent: false,
  // ES module builds first, for tree shaking (zod and most of our dependencies ship both).
  mainFields: ['module', 'main'],
} as const;

/**
 * Where a function's AWS SDK for JavaScript v3 comes from:
 * - `bundled`: inside the bundle, at the versions package-lock.json pins (the ones the tests
 *   ran), tree-shaken and minified, its Node.js credential and token chains replaced by the
 *   environment lookups Lambda needs (LAMBDA_SDK_ALIASES): the fastest init measured
 *   (bench/cold-start.ts), but about 200 to 400 KB of every bundle;
 * - `runtime`: left out, so the function loads the copy the Node.js Lambda runtime provides:
 *   bundles of about 170 to 320 KB, but a slower init (the runtime's clients are whole and
 *   unminified) and an SDK version that AWS chooses and updates.
 * docs/deploy.md ("The AWS SDK: bundled or the runtime's") gives the figures and the risks.
 */
export type AwsSdkSource = 'bundled' | 'runtime';

/** The deployment's default (the `awsSdk` configuration key). */
export const DEFAULT_AWS_SDK: AwsSdkSource = 'bundled';

/**
 * The packages left out with `awsSdk: runtime`: the SDK and the Smithy packages it is built on,
 * together, so that a client and its Smithy core always come from the same installation.
 */
export const AWS_SDK_MODULES = ['@aws-sdk/*', '@smithy/*'] as const;

/**
 * SDK packages that a `bundled` build replaces with a module of ours (esbuild `alias`: import
 * specifier -> path from the repository root, where both the deployment's esbuild and the bench
 * run), because a Lambda function only ever takes their first branch:
 * - `@aws-sdk/credential-provider-node`, the default credential chain (environment, SSO, ini
 *   files, credential_process, web identity, container and instance metadata, with the SSO, STS
 *   and sign-in clients): every client's runtime configuration imports it, about 100 KB of each
 *   bundle. Lambda passes the execution role's credentials in the environment, the chain's first
 *   link, which is all the replacement does;
 * - `@aws-sdk/token-providers`, the Bedrock client's bearer-token lookup: the environment, then
 *   the SSO token cache (with the SSO OIDC client, about 20 KB). The replacement keeps the
 *   environment lookup only;
 * - `@aws-sdk/endpoint-cache`, the DynamoDB client's cache of discovered endpoints, built at
 *   client construction on mnemonist's LRU cache (with obliterator, about 7 KB). The
 *   replacement is the same class on a Map; the functions never turn endpoint discovery on.
 * A bundle run outside Lambda therefore needs credentials in AWS_ACCESS_KEY_ID and
 * AWS_SECRET_ACCESS_KEY: profiles, SSO and instance roles are not looked for. Tests and local/
 * are not bundled and keep the SDK's own chains. With `awsSdk: runtime` the clients are not
 * bundled, so there is nothing to replace. GroundworkFunction passes them to NodejsFunction as
 * `esbuildArgs` (bundleAliasArgs), the cold-start bench to esbuild directly.
 */
const LAMBDA_SDK_ALIASES: Readonly<Record<string, string>> = {
  '@aws-sdk/credential-provider-node': './lambdas/adapters/aws/lambda-credentials.ts',
  '@aws-sdk/token-providers': './lambdas/adapters/aws/lambda-token-providers.ts',
  '@aws-sdk/endpoint-cache': './lambdas/adapters/aws/lambda-endpoint-cache.ts',
};

/**
 * esbuild's `alias` for a function's bundle (relative paths: build with the repository root as
 * working directory): LAMBDA_SDK_ALIASES when the SDK is bundled, nothing otherwise.
 */
export function bundleAliases(awsSdk: AwsSdkSource): Record<string, string> {
  return awsSdk === 'bundled' ? { ...LAMBDA_SDK_ALIASES } : {};
}

/** The same aliases as NodejsFunction's `bundling.esbuildArgs` (`--alias:from=to`). */
export function bundleAliasArgs(awsSdk: AwsSdkSource): { '--alias'?: string[] } {
  const pairs = Object.entries(bundleAliases(awsSdk)).map(([from, to]) => `${from}=${to}`);
  return pairs.length > 0 ? { '--alias': pairs } : {};
}

/**
 * How a side-loaded module ships beside a bundle, under `node_modules/<name>/`:
 * - `copy`: these files of the installed package, as published (a self-contained build);
 * - `bundle`: each of these import specifiers bundled by esbuild (the options above, without
 *   source maps) into one minified file, at `node_modules/<specifier>.js`, or
 *   `node_modules/<name>/index.js` for the package itself.
 */
export type SideLoadedModule =
  { readonly copy: readonly string[] } | { readonly bundle: readonly string[] };

/**
 * Dependencies left out of a function's bundle and shipped next to it instead, because they
 * are large and loaded on first use only, so that a cold start neither reads nor parses them:
 * - `unpdf` (PDF.js, about 1.4 MB): imported by the PDF parser the first time a PDF arrives;
 * - `mammoth` (with JSZip and xmldom, about 370 KB) and `node-html-parser` (about 120 KB):
 *   imported by the Word and HTML parsers on the first such document;
 * - `gpt-tokenizer` (the cl100k ranks, about 1 MB): required by the token counter on its first
 *   count (lambdas/adapters/tokenizer), i.e. on the first document or the first answer;
 * - `iconv-lite` (legacy code pages, about 480 KB): required by the text parser on the first
 *   text that is not UTF-8.
 * test/infra/stacks.test.ts loads each one from a synthesized bundle folder alone.
 */
const SIDE_LOADED_MODULES: Readonly<Record<string, SideLoadedModule>> = {
  unpdf: {
    copy: ['package.json', 'LICENSE', 'dist/index.cjs', 'dist/index.mjs', 'dist/pdfjs.mjs'],
  },
  mammoth: { bundle: ['mammoth'] },
  'node-html-parser': { bundle: ['node-html-parser'] },
  'gpt-tokenizer': { bundle: ['gpt-tokenizer/encoding/cl100k_base'] },
  'iconv-lite': { bundle: ['iconv-lite'] },
};

/** The Lambda entry points, relative to the repository root, by function. */
export const LAMBDA_ENTRIES = {
  ingest: 'lambdas/ingest/index.ts',
  search: 'lambdas/rag-search/index.ts',
  answer: 'lambdas/rag-answer/index.ts',
  answerStream: 'lambdas/rag-answer/stream.ts',
  usage: 'lambdas/usage/index.ts',
  documents: 'lambdas/documents/index.ts',
  admin: 'lambdas/admin/index.ts',
  migrate: 'lambdas/migrate/index.ts',
} as const;
export type LambdaName = keyof typeof LAMBDA_ENTRIES;

/** Which functions side-load which modules (see SIDE_LOADED_MODULES). */
export const SIDE_LOADED_BY: Readonly<Partial<Record<LambdaName, readonly string[]>>> = {
  ingest: ['unpdf', 'mammoth', 'node-html-parser', 'gpt-tokenizer', 'iconv-lite'],
  answer: ['gpt-tokenizer'],
  answerStream: ['gpt-tokenizer'],
};

/**
 * Modules no function ever loads, left out of every bundle (esbuild `external`: were one
 * required after all, the require would fail with MODULE_NOT_FOUND rather than run code nobody
 * tested in a Lambda):
 * - pg's native client, `pg/lib/native` (about 8 KB): loaded only with NODE_PG_FORCE_NATIVE set
 *   or through `pg.native`, which the adapters never use; the `pg-native` addon it wraps is not
 *   installed either, so `pg.native` is null, with or without it;
 * - `pgpass` (with split2, about 4 KB): pg looks in ~/.pgpass only for a connection given no
 *   password; the functions always pass the database secret's (and pg 9 drops the lookup).
 * A path starts at the repository root, where esbuild runs.
 */
export const NEVER_LOADED_MODULES = ['./node_modules/pg/lib/native', 'pgpass'] as const;

/**
 * esbuild's `external` for a function's bundle: the modules no function loads, its side-loaded
 * modules, and the SDK if the runtime's.
 */
export function bundleExternals(sideLoaded: readonly string[], awsSdk: AwsSdkSource): string[] {
  return [...NEVER_LOADED_MODULES, ...(awsSdk === 'runtime' ? AWS_SDK_MODULES : []), ...sideLoaded];
}

/** The side-loaded module of that name; throws for a name SIDE_LOADED_MODULES lacks. */
export function sideLoadedModule(name: string): SideLoadedModule {
  const module = SIDE_LOADED_MODULES[name];
  if (!module) throw new Error(`no side-loaded module "${name}" in lib/bundling.ts`);
  return module;
}

/** The [from, to] file copies that ship the `copy` modules, from a project to a bundle folder. */
export function sideLoadedCopies(
  names: readonly string[],
  projectDir: string,
  outputDir: string,
): [string, string][] {
  return names.flatMap((name) => {
    const module = sideLoadedModule(name);
    return 'copy' in module
      ? module.copy.map((file): [string, string] => [
          path.join(projectDir, 'node_modules', name, file),
          path.join(outputDir, 'node_modules', name, file),
        ])
      : [];
  });
}

/** One esbuild build of a side bundle (plain JSON: the construct's hook passes it to esbuild). */
export interface SideBundleBuild {
  readonly entryPoints: [string];
  readonly outfile: string;
  readonly absWorkingDir: string;
  readonly bundle: true;
  readonly platform: 'node';
  readonly format: 'cjs';
  readonly target: string;
  readonly minify: true;
  readonly keepNames: true;
  readonly sourcemap: false;
  readonly mainFields: string[];
  readonly logLevel: 'warning';
}

/** The esbuild builds that make the `bundle` modules' files in a bundle folder. */
export function sideBundleBuilds(
  names: readonly string[],
  projectDir: string,
  outputDir: string,
): SideBundleBuild[] {
  return names.flatMap((name) => {
    const module = sideLoadedModule(name);
    if (!('bundle' in module)) return [];
    return module.bundle.map((specifier): SideBundleBuild => ({
      ...ESBUILD_OPTIONS,
      // Third-party code whose maps would only add weight, and whose class names may matter.
      sourcemap: false,
      keepNames: true,
      mainFields: [...ESBUILD_OPTIONS.mainFields],
      entryPoints: [specifier],
      outfile: path.join(
        outputDir,
        'node_modules',
        specifier === name ? path.join(name, 'index.js') : `${specifier}.js`,
      ),
      absWorkingDir: projectDir,
      logLevel: 'warning',
    }));
  });
}

/**
 * Stack traces map back to TypeScript with this flag, but Node.js then reads and parses the
 * source map while loading the bundle: it costs cold-start time (see bench/cold-start.ts), so
 * functions do not set it by default. Set it on a function (NODE_OPTIONS) while debugging.
 */
export const SOURCE_MAPS_NODE_OPTIONS = '--enable-source-maps';
