/**
 * Probe scripts bundled as the functions are (the deployment's esbuild options, aliases and
 * externals, `awsSdk: bundled`), to run in a fresh Node.js process: what a bundle does, not
 * what the sources do under jest.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildSync } from 'esbuild';
import { bundleAliases, bundleExternals, ESBUILD_OPTIONS } from '../../lib/bundling';
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
