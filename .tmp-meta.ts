import path from 'node:path';
import { buildSync } from 'esbuild';
import { bundleAliases, bundleExternals, ESBUILD_OPTIONS, LAMBDA_ENTRIES, SIDE_LOADED_BY, type LambdaName } from './lib/bundling';
const name = (process.argv[2] ?? 'ingest') as LambdaName;
const r = buildSync({ ...ESBUILD_OPTIONS, mainFields: [...ESBUILD_OPTIONS.mainFields], sourcemap: false,
  entryPoints: [path.resolve(LAMBDA_ENTRIES[name])], external: bundleExternals(SIDE_LOADED_BY[name] ?? [], 'bundled'),
  alias: bundleAliases('bundled'), absWorkingDir: process.cwd(), metafile: true, write: false, logLevel: 'error' });
const out = Object.values(r.metafile.outputs)[0]!;
const byPkg: Record<string, number> = {};
for (const [f, v] of Object.entries(out.inputs)) { const m = f.match(/node_modules\/((@[^/]+\/)?[^/]+)/); const k = m ? m[1]! : f.split('/').slice(0,2).join('/'); byPkg[k] = (byPkg[k] ?? 0) + v.bytesInOutput; }
console.log(Object.entries(byPkg).sort((a,b)=>b[1]-a[1]).slice(0,25).map(([k,v])=>`${v}\t${k}`).join('\n'));
