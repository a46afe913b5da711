/**
 * Cold start of each Lambda entry, bundled as deployed versus unbundled, in one run:
 *  1. bundles every entry of lib/bundling.ts with esbuild and the deployment's options
 *     (minified, tree-shaken, the same externals and SDK aliases, the same side-loaded modules
 *     beside it),
 *     twice: with the AWS SDK inside (`awsSdk: bundled`, the default) and without it
 *     (`awsSdk: runtime`, where the Lambda runtime's copy is loaded); prints each bundle's size
 *     and, for a default bundle over the 1 MB ceiling, the packages that dominate it;
 *  2. compiles the same entries with the TypeScript compiler to plain CommonJS (unbundled: one
 *     file per module, dependencies loaded from node_modules);
 *  3. runs each build `--runs` times (default 30), interleaved, each in a fresh Node.js process
 *     with dummy configuration, and takes the median time to load the entry: import plus its
 *     module-scope initialisation (config parsing, client construction). A guard in each
 *     process fails the run if initialisation opens a socket or resolves a host name. The
 *     `runtime` bundles and the unbundled build load the SDK from the repository's
 *     node_modules, standing in for the runtime's copy;
 *  4. times the first load of each side-loaded module from a bundle folder, also in fresh
 *     processes: the cost a function pays on the first request that needs it, not at init.
 *
 *   npm run bench -- cold-start          (BENCH_COLD_START_RUNS=30, BENCH_COLD_START_SOURCE_MAPS=1)
 *   node -r tsx/cjs bench/cold-start.ts [--runs 30] [--source-maps]
 *
 * `--source-maps` also times the default bundles with NODE_OPTIONS=--enable-source-maps, to show
 * what that flag costs (the functions do not set it; see lib/bundling.ts).
 */
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { build, type Metafile } from 'esbuild';
import ts from 'typescript';
import {
  AWS_SDK_MODULES,
  BUNDLE_SIZE_CEILING_BYTES,
  bundleAliases,
  bundleExternals,
  DEFAULT_AWS_SDK,
  ESBUILD_OPTIONS,
  LAMBDA_ENTRIES,
  SIDE_LOADED_BY,
  sideBundleBuilds,
  sideLoadedCopies,
  SOURCE_MAPS_NODE_OPTIONS,
  type AwsSdkSource,
  type LambdaName,
} from '../lib/bundling';
import { REPO_ROOT } from '../lib/config';

const INIT_TARGET_RATIO = 0.5;
/** Under node_modules so that the unbundled build resolves its dependencies as in the repo. */
const WORK_DIR = path.join(REPO_ROOT, 'node_modules', '.cache', 'groundwork-cold-start');

/** Options of {@link benchColdStart}. */
export interface ColdStartOptions {
  /** Fresh processes per build. */
  readonly runs: number;
  /** Also time the bundles with --enable-source-maps. */
  readonly sourceMaps: boolean;
}

/** Reads `--runs N` and `--source-maps`. */
export function parseColdStartArgs(argv: readonly string[]): ColdStartOptions {
  const runsAt = argv.indexOf('--runs');
  const runs = runsAt >= 0 ? Number(argv[runsAt + 1]) : 30;
  if (!Number.isInteger(runs) || runs < 1) throw new Error('--runs takes a whole number >= 1');
  return { runs, sourceMaps: argv.includes('--source-maps') };
}

/** Configuration that lets every entry's cold-start parsing succeed, pointing at nothing real. */
function dummyEnvironment(): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'AKIDBENCHMARK',
    AWS_SECRET_ACCESS_KEY: 'benchmark',
    DB_SECRET_ARN: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:groundwork-db-AbCdEf',
    // The migration function's: the application login's secret, beside the owner's.
    APP_DB_SECRET_ARN: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:groundwork-app-AbCdEf',
    DB_HOST: 'groundwork.proxy-example.us-east-1.rds.amazonaws.com',
    LIMITS_TABLE: 'groundwork-limits',
    DOCUMENTS_BUCKET: 'groundwork-documents-bench',
    LIMITS_CONFIG: '{}',
    EMBEDDING_MODEL_ID: 'amazon.titan-embed-text-v2:0',
    EMBEDDING_DIMENSION: '512',
    GENERATION_MODEL_ID: 'amazon.nova-lite-v1:0',
    // Every API function's (lambdas/http/api-env.ts): accepted app clients, CORS origins.
    TOKEN_AUDIENCES: '["benchmark-client"]',
    CORS_ORIGINS: '["*"]',
    POWERTOOLS_METRICS_NAMESPACE: 'Groundwork',
    POWERTOOLS_LOG_LEVEL: 'WARN',
    // Set by the Lambda runtime: with it the functions create the X-Ray tracer at init, as deployed.
    AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
    // The SDK warns about Node.js 20 on stderr at load; the Lambda runtime is Node.js 22.
    AWS_SDK_JS_SUPPRESS_MAINTENANCE_MODE_MESSAGE: '1',
  };
}

/** The script each fresh process runs: guard the network, load the entry, report the time. */
const HARNESS = `
const net = require('node:net');
const dns = require('node:dns');
const attempts = [];
const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function (...args) {
  attempts.push('connect ' + JSON.stringify(args[0] && (args[0].host || args[0].path || args[0])));
  return connect.apply(this, args);
};
const lookup = dns.lookup;
dns.lookup = function (host, ...rest) {
  attempts.push('lookup ' + host);
  return lookup.call(this, host, ...rest);
};
// The Node.js Lambda runtime's global for response streaming.
globalThis.awslambda = { streamifyResponse: (fn) => fn, HttpResponseStream: { from: (stream) => stream } };
const started = performance.now();
const mod = require(process.argv[2]);
const initMs = performance.now() - started;
if (typeof mod.handler !== 'function') throw new Error('no handler exported by ' + process.argv[2]);
setImmediate(() => {
  process.stdout.write(JSON.stringify({ initMs, network: attempts }));
  process.exit(0);
});
`;

/**
 * How the functions load each side-loaded module on first use; a probe script saved in a bundle
 * folder runs it, so that it resolves exactly as the bundle's own `require` and `import` do.
 */
const SIDE_LOAD_PROBES: Readonly<Record<string, string>> = {
  'gpt-tokenizer': `require('gpt-tokenizer/encoding/cl100k_base').countTokens('hello world')`,
  'iconv-lite': `require('iconv-lite').decode(Buffer.from([0x63, 0x61, 0x66, 0xe9]), 'windows-1252')`,
  mammoth: `await import('mammoth')`,
  'node-html-parser': `await import('node-html-parser')`,
  unpdf: `await (await import('unpdf')).getResolvedPDFJS()`,
};

function probeScript(module: string): string {
  const load = SIDE_LOAD_PROBES[module];
  if (!load) throw new Error(`bench/cold-start.ts has no probe for side-loaded module ${module}`);
  return `(async () => {
  const started = performance.now();
  ${load};
  const initMs = performance.now() - started;
  process.stdout.write(JSON.stringify({ initMs, network: [] }));
  process.exit(0);
})();
`;
}

interface Bundle {
  readonly name: LambdaName;
  readonly awsSdk: AwsSdkSource;
  readonly dir: string;
  readonly file: string;
  readonly bytes: number;
  readonly metafile: Metafile;
  /** Side-loaded modules beside the bundle, with their size on disk. */
  readonly sideLoaded: readonly { readonly module: string; readonly bytes: number }[];
}

/** Total size of the files under a folder. */
function folderBytes(dir: string): number {
  let total = 0;
  const walk = (d: string) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, entry.name);
      if (entry.isDirectory()) walk(p);
      else total += statSync(p).size;
    }
  };
  walk(dir);
  return total;
}

/** Bundles one entry into its own folder as GroundworkFunction does, side-loaded modules included. */
async function bundleOne(
  name: LambdaName,
  awsSdk: AwsSdkSource,
  substitutions = true,
): Promise<Bundle> {
  const outdir = path.join(
    WORK_DIR,
    `bundled-sdk-${awsSdk}${substitutions ? '' : '-as-published'}`,
    name,
  );
  const sideLoaded = SIDE_LOADED_BY[name] ?? [];
  const result = await build({
    ...ESBUILD_OPTIONS,
    mainFields: [...ESBUILD_OPTIONS.mainFields],
    entryPoints: [path.join(REPO_ROOT, LAMBDA_ENTRIES[name])],
    outfile: path.join(outdir, 'index.js'),
    external: bundleExternals(sideLoaded, awsSdk),
    alias: substitutions ? bundleAliases(awsSdk) : {},
    absWorkingDir: REPO_ROOT,
    metafile: true,
    logLevel: 'error',
  });
  // What the construct's bundling hook does (lib/constructs/groundwork-function.ts).
  for (const [from, to] of sideLoadedCopies(sideLoaded, REPO_ROOT, outdir)) {
    mkdirSync(path.dirname(to), { recursive: true });
    cpSync(from, to);
  }
  for (const options of sideBundleBuilds(sideLoaded, REPO_ROOT, outdir)) await build(options);
  const file = path.join(outdir, 'index.js');
  return {
    name,
    awsSdk,
    dir: outdir,
    file,
    bytes: statSync(file).size,
    metafile: result.metafile,
    sideLoaded: sideLoaded.map((module) => ({
      module,
      bytes: folderBytes(path.join(outdir, 'node_modules', module)),
    })),
  };
}

/** Compiles the entries and everything they import to CommonJS, one file per module. */
function compileUnbundled(): Record<LambdaName, string> {
  const outDir = path.join(WORK_DIR, 'unbundled');
  const entries = Object.values(LAMBDA_ENTRIES).map((e) => path.join(REPO_ROOT, e));
  const program = ts.createProgram(entries, {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.Node10,
    esModuleInterop: true,
    resolveJsonModule: true,
    skipLibCheck: true,
    isolatedModules: true,
    outDir,
    rootDir: REPO_ROOT,
    types: ['node'],
  });
  const emitted = program.emit();
  if (emitted.emitSkipped) throw new Error('TypeScript emitted nothing for the unbundled build');
  return Object.fromEntries(
    Object.entries(LAMBDA_ENTRIES).map(([name, entry]) => [
      name,
      path.join(outDir, entry.replace(/\.ts$/, '.js')),
    ]),
  ) as Record<LambdaName, string>;
}

/** Which packages make up a bundle, largest first (bytes in the minified output). */
function dominantPackages(metafile: Metafile, top = 6): [string, number][] {
  const byPackage = new Map<string, number>();
  for (const output of Object.values(metafile.outputs)) {
    for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
      const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input);
      const key = match?.[1] ?? '(project source)';
      byPackage.set(key, (byPackage.get(key) ?? 0) + bytesInOutput);
    }
  }
  return [...byPackage.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
}

interface Sample {
  readonly initMs: number;
  readonly network: string[];
}

function runOnce(
  harness: string,
  file: string,
  env: Record<string, string>,
  nodeOptions = '',
): Sample {
  const result = spawnSync(process.execPath, [harness, file], {
    env: { ...env, NODE_OPTIONS: nodeOptions },
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (result.status !== 0) {
    throw new Error(
      `loading ${file} failed (exit ${result.status}):\n${result.stderr.slice(-2000)}`,
    );
  }
  return JSON.parse(result.stdout) as Sample;
}

const median = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
};
const kb = (bytes: number) => `${(bytes / 1024).toFixed(0)} KB`;
const pad = (s: string, n: number) => s.padEnd(n);
const lpad = (s: string, n: number) => s.padStart(n);

const SDK_SOURCES: readonly AwsSdkSource[] = [
  DEFAULT_AWS_SDK,
  DEFAULT_AWS_SDK === 'bundled' ? 'runtime' : 'bundled',
];

/** Runs the benchmark and prints its tables (see the module comment). */
export async function benchColdStart(options: ColdStartOptions): Promise<void> {
  rmSync(WORK_DIR, { recursive: true, force: true });
  mkdirSync(WORK_DIR, { recursive: true });
  const harness = path.join(WORK_DIR, 'harness.cjs');
  writeFileSync(harness, HARNESS);
  const env = dummyEnvironment();
  const names = Object.keys(LAMBDA_ENTRIES) as LambdaName[];

  process.stdout.write('Bundling with esbuild (lib/bundling.ts options)... ');
  const bundles = new Map<string, Bundle>();
  for (const awsSdk of SDK_SOURCES) {
    for (const name of names) bundles.set(`${name}/${awsSdk}`, await bundleOne(name, awsSdk));
  }
  // The SDK bundled as published (no module of ours substituted): what the substitutions of
  // lib/bundling.ts save is measured, not assumed.
  const asPublished = new Map<LambdaName, Bundle>();
  if (DEFAULT_AWS_SDK === 'bundled') {
    for (const name of names) asPublished.set(name, await bundleOne(name, 'bundled', false));
  }
  const bundleOf = (name: LambdaName, awsSdk: AwsSdkSource): Bundle => {
    const bundle = bundles.get(`${name}/${awsSdk}`);
    if (!bundle) throw new Error(`no bundle ${name}/${awsSdk}`);
    return bundle;
  };
  process.stdout.write('done.\nCompiling unbundled CommonJS with tsc... ');
  const unbundled = compileUnbundled();

  /** Each side-loaded module once, with a default bundle folder that ships it. */
  const sideModules = new Map<string, { bundle: Bundle; probe: string; users: LambdaName[] }>();
  for (const name of names) {
    const bundle = bundleOf(name, DEFAULT_AWS_SDK);
    for (const { module } of bundle.sideLoaded) {
      const known = sideModules.get(module);
      if (known) {
        known.users.push(name);
        continue;
      }
      const probe = path.join(bundle.dir, `probe-${module}.cjs`);
      writeFileSync(probe, probeScript(module));
      sideModules.set(module, { bundle, probe, users: [name] });
    }
  }
  process.stdout.write(
    `done.\nTiming ${options.runs} cold loads of each build (fresh processes, interleaved)...\n`,
  );

  const samples = new Map<string, Sample[]>();
  const record = (key: string, sample: Sample) => {
    if (sample.network.length > 0)
      throw new Error(`${key}: initialisation touched the network: ${sample.network.join(', ')}`);
    samples.set(key, [...(samples.get(key) ?? []), sample]);
  };
  // The machine is shared: the load average during the timing says how far to trust it.
  const loads = [os.loadavg()[0] ?? 0];
  const startedAt = new Date();
  for (let run = 0; run < options.runs; run++) {
    for (const name of names) {
      for (const awsSdk of SDK_SOURCES) {
        record(`${name}/${awsSdk}`, runOnce(harness, bundleOf(name, awsSdk).file, env));
      }
      record(`${name}/unbundled`, runOnce(harness, unbundled[name], env));
      const published = asPublished.get(name);
      if (published) record(`${name}/as-published`, runOnce(harness, published.file, env));
      if (options.sourceMaps)
        record(
          `${name}/maps`,
          runOnce(harness, bundleOf(name, DEFAULT_AWS_SDK).file, env, SOURCE_MAPS_NODE_OPTIONS),
        );
    }
    for (const [module, { bundle, probe }] of sideModules) {
      record(`side/${module}`, runOnce(probe, bundle.dir, env));
    }
    loads.push(os.loadavg()[0] ?? 0);
    process.stdout.write(`\r  run ${run + 1}/${options.runs}`);
  }
  process.stdout.write('\n\n');

  const initOf = (key: string) => median((samples.get(key) ?? []).map((s) => s.initMs));
  const yes = (ok: boolean) => (ok ? 'yes' : 'NO');
  const variantHeader = (awsSdk: AwsSdkSource) =>
    `awsSdk: ${awsSdk}${awsSdk === DEFAULT_AWS_SDK ? ' (default)' : ''}`;
  const cell = (widths: readonly number[], values: readonly string[]) =>
    values.map((v, i) => lpad(v, widths[i] ?? 0)).join(' ');
  const widths = [9, 7, 9, 6, 5];
  const groupWidth = widths.reduce((a, b) => a + b + 1, -1);
  console.log(
    `Median of ${options.runs} runs, Node.js ${process.version}, started ${startedAt.toISOString()}, load average (1 min) ${Math.min(...loads).toFixed(1)} to ${Math.max(...loads).toFixed(1)} (${os.cpus().length} CPUs);`,
  );
  console.log('init = require() of the entry (import + module-scope setup);');
  console.log(
    `ratio = init bundled / init unbundled; ceiling: bundle <= 1 MB; target: ratio <= ${INIT_TARGET_RATIO}.`,
  );
  const header1 = [
    pad('', 13),
    ...SDK_SOURCES.map((v) => pad(variantHeader(v), groupWidth)),
    lpad('unbundled', 10),
    ...(options.sourceMaps ? [lpad('default', 14)] : []),
  ].join(' | ');
  const header2 = [
    pad('function', 13),
    ...SDK_SOURCES.map(() => cell(widths, ['bundle', '<=1MB', 'init', 'ratio', '<=.5'])),
    lpad('init', 10),
    ...(options.sourceMaps ? [lpad('+source maps', 14)] : []),
  ].join(' | ');
  console.log(header1);
  console.log(header2);
  console.log('-'.repeat(header2.length));
  for (const name of names) {
    const plain = initOf(`${name}/unbundled`);
    console.log(
      [
        pad(name, 13),
        ...SDK_SOURCES.map((awsSdk) => {
          const bundle = bundleOf(name, awsSdk);
          const init = initOf(`${name}/${awsSdk}`);
          return cell(widths, [
            kb(bundle.bytes),
            yes(bundle.bytes <= BUNDLE_SIZE_CEILING_BYTES),
            `${init.toFixed(0)} ms`,
            (init / plain).toFixed(2),
            yes(init / plain <= INIT_TARGET_RATIO),
          ]);
        }),
        lpad(`${plain.toFixed(0)} ms`, 10),
        ...(options.sourceMaps ? [lpad(`${initOf(`${name}/maps`).toFixed(0)} ms`, 14)] : []),
      ].join(' | '),
    );
  }

  if (asPublished.size > 0) {
    console.log(
      `\nThe SDK substitutions (lib/bundling.ts bundleAliases), ${variantHeader('bundled')}: with them | SDK as published | saved`,
    );
    for (const name of names) {
      const published = asPublished.get(name);
      if (!published) continue;
      const withThem = initOf(`${name}/bundled`);
      const without = initOf(`${name}/as-published`);
      console.log(
        `  ${pad(name, 13)} ${lpad(kb(bundleOf(name, 'bundled').bytes), 7)} ${lpad(`${withThem.toFixed(0)} ms`, 7)} | ${lpad(kb(published.bytes), 7)} ${lpad(`${without.toFixed(0)} ms`, 7)} | ${lpad(`${(without - withThem).toFixed(0)} ms`, 6)}`,
      );
    }
  }

  const heavy = names
    .map((name) => bundleOf(name, DEFAULT_AWS_SDK))
    .filter((b) => b.bytes > BUNDLE_SIZE_CEILING_BYTES);
  if (heavy.length > 0) {
    console.log(`\n${variantHeader(DEFAULT_AWS_SDK)} bundles over 1 MB, by package (minified):`);
    for (const bundle of heavy) {
      console.log(
        `  ${bundle.name}: ${dominantPackages(bundle.metafile)
          .map(([p, b]) => `${p} ${kb(b)}`)
          .join(', ')}`,
      );
    }
  }
  if (sideModules.size > 0) {
    console.log(
      '\nBeside the bundles, loaded on the first request that needs them (not at init): size, first load (median)',
    );
    for (const [module, { bundle, users }] of sideModules) {
      const bytes = bundle.sideLoaded.find((s) => s.module === module)?.bytes ?? 0;
      console.log(
        `  ${pad(module, 17)} ${lpad(kb(bytes), 8)} ${lpad(`${initOf(`side/${module}`).toFixed(0)} ms`, 8)}   ${users.join(', ')}`,
      );
    }
  }
  console.log(
    `\nWith awsSdk: runtime, ${AWS_SDK_MODULES.join(' and ')} stay out of the bundles; here they load from node_modules (@aws-sdk/client-dynamodb ${sdkVersion()}), as in the unbundled build.`,
  );
}

/** The installed version of one AWS SDK client, for the record. */
function sdkVersion(): string {
  const manifest = path.join(
    REPO_ROOT,
    'node_modules',
    '@aws-sdk',
    'client-dynamodb',
    'package.json',
  );
  return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
}

if (require.main === module) {
  benchColdStart(parseColdStartArgs(process.argv.slice(2))).catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
