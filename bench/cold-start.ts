/**
 * Cold start of each Lambda entry, bundled as deployed versus unbundled, in one run:
 *  1. bundles every entry of lib/bundling.ts with esbuild and the deployment's options
 *     (minified, tree-shaken, the same externals), and prints the bundle size and, for a bundle
 *     over the 500 KB target, the dependencies that dominate it (esbuild metafile);
 *  2. compiles the same entries with the TypeScript compiler to plain CommonJS (unbundled: one
 *     file per module, dependencies loaded from node_modules);
 *  3. runs each build `--runs` times (default 30), interleaved, each in a fresh Node.js process
 *     with dummy configuration, and takes the median time to load the entry: import plus its
 *     module-scope initialisation (config parsing, client construction). A guard in each
 *     process fails the run if initialisation opens a socket or resolves a host name.
 *
 *   node -r tsx/cjs bench/cold-start.ts [--runs 30] [--source-maps]
 *
 * `--source-maps` also times the bundles with NODE_OPTIONS=--enable-source-maps, to show what
 * that flag costs (the functions do not set it; see lib/bundling.ts).
 */
import { spawnSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { cpSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { build, type Metafile } from 'esbuild';
import ts from 'typescript';
import {
  ESBUILD_OPTIONS,
  LAMBDA_ENTRIES,
  SIDE_LOADED_BY,
  SIDE_LOADED_MODULES,
  SOURCE_MAPS_NODE_OPTIONS,
  type LambdaName,
} from '../lib/bundling';
import { REPO_ROOT } from '../lib/config';

const SIZE_TARGET_BYTES = 500 * 1024;
const INIT_TARGET_RATIO = 0.5;
/** Under node_modules so that the unbundled build resolves its dependencies as in the repo. */
const WORK_DIR = path.join(REPO_ROOT, 'node_modules', '.cache', 'groundwork-cold-start');

interface Options {
  readonly runs: number;
  readonly sourceMaps: boolean;
}

function parseArgs(argv: readonly string[]): Options {
  const runsAt = argv.indexOf('--runs');
  const runs = runsAt >= 0 ? Number(argv[runsAt + 1]) : 30;
  if (!Number.isInteger(runs) || runs < 1) throw new Error('--runs takes a whole number >= 1');
  return { runs, sourceMaps: argv.includes('--source-maps') };
}

/** Configuration that lets every entry's cold-start parsing succeed, pointing at nothing real. */
function dummyEnvironment(): Record<string, string> {
  const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = { ...publicKey.export({ format: 'jwk' }), kid: 'bench', alg: 'RS256', use: 'sig' };
  return {
    PATH: process.env.PATH ?? '',
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'AKIDBENCHMARK',
    AWS_SECRET_ACCESS_KEY: 'benchmark',
    DB_SECRET_ARN: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:groundwork-db-AbCdEf',
    DB_HOST: 'groundwork.proxy-example.us-east-1.rds.amazonaws.com',
    LIMITS_TABLE: 'groundwork-limits',
    LIMITS_CONFIG: '{}',
    EMBEDDING_MODEL_ID: 'amazon.titan-embed-text-v2:0',
    EMBEDDING_DIMENSION: '512',
    GENERATION_MODEL_ID: 'amazon.nova-lite-v1:0',
    COGNITO_USER_POOL_ID: 'us-east-1_AbCdEf123',
    COGNITO_CLIENT_IDS: 'benchmarkclient',
    COGNITO_JWKS: JSON.stringify({ keys: [jwk] }),
    POWERTOOLS_METRICS_NAMESPACE: 'Groundwork',
    POWERTOOLS_LOG_LEVEL: 'WARN',
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
  process.stdout.write(JSON.stringify({ initMs, sinceProcessStartMs: performance.now(), network: attempts }));
  process.exit(0);
});
`;

interface Bundle {
  readonly name: LambdaName;
  readonly file: string;
  readonly bytes: number;
  readonly metafile: Metafile;
}

async function bundleAll(): Promise<Bundle[]> {
  const bundles: Bundle[] = [];
  for (const [name, entry] of Object.entries(LAMBDA_ENTRIES) as [LambdaName, string][]) {
    const outdir = path.join(WORK_DIR, 'bundled', name);
    const sideLoaded = SIDE_LOADED_BY[name] ?? [];
    const result = await build({
      ...ESBUILD_OPTIONS,
      mainFields: [...ESBUILD_OPTIONS.mainFields],
      entryPoints: [path.join(REPO_ROOT, entry)],
      outfile: path.join(outdir, 'index.js'),
      external: [...sideLoaded],
      metafile: true,
      logLevel: 'error',
    });
    for (const module of sideLoaded) {
      for (const file of SIDE_LOADED_MODULES[module] ?? []) {
        const target = path.join(outdir, 'node_modules', module, file);
        mkdirSync(path.dirname(target), { recursive: true });
        cpSync(path.join(REPO_ROOT, 'node_modules', module, file), target);
      }
    }
    const file = path.join(outdir, 'index.js');
    bundles.push({ name, file, bytes: statSync(file).size, metafile: result.metafile });
  }
  return bundles;
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
  readonly sinceProcessStartMs: number;
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

async function main(): Promise<void> {
  const options = parseArgs(process.argv.slice(2));
  rmSync(WORK_DIR, { recursive: true, force: true });
  mkdirSync(WORK_DIR, { recursive: true });
  const harness = path.join(WORK_DIR, 'harness.cjs');
  writeFileSync(harness, HARNESS);
  const env = dummyEnvironment();

  process.stdout.write('Bundling with esbuild (lib/bundling.ts options)... ');
  const bundles = await bundleAll();
  process.stdout.write('done.\nCompiling unbundled CommonJS with tsc... ');
  const unbundled = compileUnbundled();
  process.stdout.write(
    `done.\nTiming ${options.runs} cold loads of each build (fresh processes, interleaved)...\n`,
  );

  const samples = new Map<string, Sample[]>();
  const record = (key: string, sample: Sample) => {
    if (sample.network.length > 0)
      throw new Error(`${key}: initialisation touched the network: ${sample.network.join(', ')}`);
    samples.set(key, [...(samples.get(key) ?? []), sample]);
  };
  for (let run = 0; run < options.runs; run++) {
    for (const bundle of bundles) {
      record(`${bundle.name}/bundled`, runOnce(harness, bundle.file, env));
      record(`${bundle.name}/unbundled`, runOnce(harness, unbundled[bundle.name], env));
      if (options.sourceMaps)
        record(
          `${bundle.name}/bundled+maps`,
          runOnce(harness, bundle.file, env, SOURCE_MAPS_NODE_OPTIONS),
        );
    }
    process.stdout.write(`\r  run ${run + 1}/${options.runs}`);
  }
  process.stdout.write('\n\n');

  const initOf = (key: string) => median((samples.get(key) ?? []).map((s) => s.initMs));
  const processOf = (key: string) =>
    median((samples.get(key) ?? []).map((s) => s.sinceProcessStartMs));
  const header = [
    pad('function', 13),
    lpad('bundle', 9),
    lpad('≤500 KB', 8),
    lpad('init bundled', 14),
    lpad('init unbundled', 16),
    lpad('ratio', 7),
    lpad('≤0.5', 6),
    lpad('process bundled', 17),
    lpad('process unbundled', 19),
    ...(options.sourceMaps ? [lpad('init +source maps', 19)] : []),
  ].join(' ');
  console.log(
    `Median of ${options.runs} runs, Node.js ${process.version}; init = require() of the entry (import + module-scope setup)`,
  );
  console.log(header);
  console.log('-'.repeat(header.length));
  for (const bundle of bundles) {
    const bundled = initOf(`${bundle.name}/bundled`);
    const plain = initOf(`${bundle.name}/unbundled`);
    const ratio = bundled / plain;
    console.log(
      [
        pad(bundle.name, 13),
        lpad(kb(bundle.bytes), 9),
        lpad(bundle.bytes <= SIZE_TARGET_BYTES ? 'yes' : 'NO', 8),
        lpad(`${bundled.toFixed(0)} ms`, 14),
        lpad(`${plain.toFixed(0)} ms`, 16),
        lpad(ratio.toFixed(2), 7),
        lpad(ratio <= INIT_TARGET_RATIO ? 'yes' : 'NO', 6),
        lpad(`${processOf(`${bundle.name}/bundled`).toFixed(0)} ms`, 17),
        lpad(`${processOf(`${bundle.name}/unbundled`).toFixed(0)} ms`, 19),
        ...(options.sourceMaps
          ? [lpad(`${initOf(`${bundle.name}/bundled+maps`).toFixed(0)} ms`, 19)]
          : []),
      ].join(' '),
    );
  }

  const heavy = bundles.filter((b) => b.bytes > SIZE_TARGET_BYTES);
  if (heavy.length > 0) {
    console.log('\nBundles over 500 KB, by package (minified bytes in the bundle):');
    for (const bundle of heavy) {
      console.log(
        `  ${bundle.name}: ${dominantPackages(bundle.metafile)
          .map(([p, b]) => `${p} ${kb(b)}`)
          .join(', ')}`,
      );
    }
  }
  const sideLoaded = Object.entries(SIDE_LOADED_BY).filter(
    ([, modules]) => (modules ?? []).length > 0,
  );
  for (const [name, modules] of sideLoaded) {
    console.log(
      `\n${name}: ${(modules ?? []).join(', ')} beside the bundle, not in it (loaded on first use).`,
    );
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
