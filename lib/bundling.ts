/**
 * How every Lambda is built, in one place: the CDK construct (GroundworkFunction) maps these
 * options onto NodejsFunction's bundling, and bench/cold-start.ts passes the same ones to
 * esbuild, so the benchmark measures what is deployed. No CDK import here, so that the bench
 * can read it cheaply.
 */

/** Node.js major version of the Lambda runtime and of esbuild's target. */
export const NODE_MAJOR = 22;

/** esbuild options shared by the deployment and the cold-start benchmark. */
export const ESBUILD_OPTIONS = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: `node${NODE_MAJOR}`,
  minify: true,
  // Error and class names survive minification (logs, `err.name` checks).
  keepNames: true,
  // Maps ship with the bundle (file and line only, no sources: a smaller asset).
  sourcemap: true,
  sourcesContent: false,
  // ES module builds first, for tree shaking (the AWS SDK v3 and zod ship both).
  mainFields: ['module', 'main'],
} as const;

/**
 * Stack traces map back to TypeScript with this flag, but Node.js then reads and parses the
 * source map while loading the bundle: it costs cold-start time (see bench/cold-start.ts), so
 * functions do not set it by default. Set it on a function (NODE_OPTIONS) while debugging.
 */
export const SOURCE_MAPS_NODE_OPTIONS = '--enable-source-maps';

/**
 * Dependencies left out of a function's bundle and copied next to it instead (under
 * `node_modules/`), because they are large, self-contained and loaded on first use only, so
 * that a cold start neither parses nor runs them:
 * - `unpdf` (PDF.js, about 1.4 MB): imported by the PDF parser the first time a PDF arrives;
 * - `gpt-tokenizer` (the cl100k ranks, about 1 MB): the answer router imports it on the first
 *   POST /answer only, so the thread routes start without it.
 * Each entry lists the files its entry point needs (checked by test/infra/stacks.test.ts).
 */
export const SIDE_LOADED_MODULES: Readonly<Record<string, readonly string[]>> = {
  unpdf: ['package.json', 'LICENSE', 'dist/index.cjs', 'dist/index.mjs', 'dist/pdfjs.mjs'],
  'gpt-tokenizer': [
    'package.json',
    'LICENSE',
    ...[
      'encoding/cl100k_base',
      'bpeRanks/cl100k_base',
      'BytePairEncodingCore',
      'GptEncoding',
      'constants',
      'functionCalling',
      'mapping',
      'modelParams',
      'modelsChatEnabled.gen',
      'modelsMap',
      'specialTokens',
      'utfUtil',
      'util',
      '_virtual/_rolldown/runtime',
      'encodingParams/cl100k_base',
      'encodingParams/constants',
      'encodingParams/o200k_base',
      'encodingParams/o200k_harmony',
      'encodingParams/p50k_base',
      'encodingParams/p50k_edit',
      'encodingParams/r50k_base',
    ].map((file) => `cjs/${file}.js`),
  ],
};

/** The Lambda entry points, relative to the repository root, by function. */
export const LAMBDA_ENTRIES = {
  ingest: 'lambdas/ingest/index.ts',
  search: 'lambdas/rag-search/index.ts',
  answer: 'lambdas/rag-answer/index.ts',
  answerStream: 'lambdas/rag-answer/stream.ts',
  usage: 'lambdas/usage/index.ts',
  documents: 'lambdas/documents/index.ts',
  migrate: 'lambdas/migrate/index.ts',
} as const;
export type LambdaName = keyof typeof LAMBDA_ENTRIES;

/** Which functions side-load which modules (see SIDE_LOADED_MODULES). */
export const SIDE_LOADED_BY: Readonly<Partial<Record<LambdaName, readonly string[]>>> = {
  ingest: ['unpdf'],
  answer: ['gpt-tokenizer'],
};
