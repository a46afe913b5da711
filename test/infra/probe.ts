/**
 * The functions, and probe scripts, bundled as deployed (the deployment's esbuild options,
 * aliases and externals): what a bundle holds and does, not what the sources do under jest.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildSync } from 'esbuild';
import {
  bundleAliases,
  bundleExternals,
  ESBUILD_OPTIONS,
  LAMBDA_ENTRIES,
  SIDE_LOADED_BY,
  type AwsSdkSource,
  type LambdaName,
} from '../../lib/bundling';
import { REPO_ROOT } from '../../lib/config';

export interface Probe {
  /** The bundled script (`node <file> ...`). */
  readonly file: string;
  /** Its folder, a fresh temporary one. */
  readonly dir: string;
  /** The files esbuild put in it, relative to the repository root. */
  readonly inputs: string[];
}

/** Bundles `contents` (CommonJS, resolved from the repository root) into a fresh folder. */
export function bundleProbe(name: string, contents: string): Probe {
  const dir = mkdtempSync(path.join(os.tmpdir(), `groundwork-${name}-`));
  const file = path.join(dir, 'probe.js');
  const result = buildSync({
    ...ESBUILD_OPTIONS,
    mainFields: [...ESBUILD_OPTIONS.mainFields],
    sourcemap: false,
    stdin: { contents, resolveDir: REPO_ROOT },
    outfile: file,
    alias: bundleAliases('bundled'),
    external: bundleExternals([], 'bundled'),
    absWorkingDir: REPO_ROOT,
    metafile: true,
    logLevel: 'error',
  });
  return { file, dir, inputs: Object.keys(result.metafile.inputs) };
}

/** A function's bundle, in memory and without its source map, and the files esbuild put in it. */
export interface FunctionBundle {
  readonly text: string;
  readonly bytes: number;
  readonly inputs: string[];
}

const bundles = new Map<string, FunctionBundle>();

/**
 * One function bundled as deployed, once per test file and SDK source; `aliases` replaces the
 * deployment's (not cached), to compare a bundle without one of them.
 */
export function bundleFunction(
  name: LambdaName,
  awsSdk: AwsSdkSource,
  aliases?: Record<string, string>,
): FunctionBundle {
  const key = `${name}:${awsSdk}`;
  const cached = aliases ? undefined : bundles.get(key);
  if (cached) return cached;
  const result = buildSync({
    ...ESBUILD_OPTIONS,
    mainFields: [...ESBUILD_OPTIONS.mainFields],
    sourcemap: false,
    entryPoints: [path.join(REPO_ROOT, LAMBDA_ENTRIES[name])],
    external: bundleExternals(SIDE_LOADED_BY[name] ?? [], awsSdk),
    alias: aliases ?? bundleAliases(awsSdk),
    absWorkingDir: REPO_ROOT,
    metafile: true,
    write: false,
    logLevel: 'error',
  });
  const output = result.outputFiles[0];
  const bundle = {
    text: output?.text ?? '',
    bytes: output?.contents.length ?? 0,
    inputs: Object.keys(result.metafile.inputs),
  };
  if (!aliases) bundles.set(key, bundle);
  return bundle;
}
