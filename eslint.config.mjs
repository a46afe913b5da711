// ESLint flat config: typescript-eslint's type-aware rules, with no-floating-promises on.
import tseslint from 'typescript-eslint';

const CLASSIC_ZOD_MESSAGE =
  "Bundle size: zod's classic API is not tree-shakable and costs about 97 KB in every Lambda " +
  "bundle; use zod/mini (about 25 KB) through `import { z } from '../core/zod'`.";
/** Classic zod, kept out of lambdas/ (local/, lib/, bin/ and scripts/ are not bundled). */
const CLASSIC_ZOD = ['zod', 'zod/v4', 'zod/v3'].map((name) => ({
  name,
  message: CLASSIC_ZOD_MESSAGE,
}));
/** zod/mini installs no locale: lambdas/core/zod.ts re-exports it with the English messages. */
const ZOD_MINI_UNCONFIGURED = ['zod/mini', 'zod/v4/mini', 'zod/v4-mini'].map((name) => ({
  name,
  message:
    "Import { z } from lambdas/core/zod, which installs zod/mini's English error messages " +
    '(zod/mini has none of its own: every message would read "Invalid input").',
}));
/**
 * lambdas/core/zod re-exports zod/mini's `z` too: that is one object holding every export, so a
 * named `{ z }` import keeps all of zod/mini (every locale included, about 420 KB) in the bundle.
 */
const NAMED_Z_IMPORT = {
  selector: 'ImportDeclaration[source.value=/zod$/] > ImportSpecifier[imported.name="z"]',
  message:
    "Bundle size: import zod as a namespace, `import * as z from '../core/zod'`, which esbuild " +
    "tree-shakes; the named `z` is zod/mini's whole namespace object (about 420 KB per bundle).",
};

/**
 * The core is pure (STYLE.md): it reaches databases, AWS, files, HTTP and the handlers only
 * through its ports (lambdas/core/ports.ts), which composition roots wire to adapters.
 */
const CORE_MESSAGE =
  'lambdas/core is pure: depend on a port (lambdas/core/ports.ts) and wire the adapter in a ' +
  'composition root; tests that need an adapter belong in test/.';
const CORE_FORBIDDEN_PACKAGES = [
  'pg',
  'pg-*',
  '@aws-sdk/*',
  '@smithy/*',
  '@electric-sql/*',
  '@aws-lambda-powertools/*',
  '@middy/*',
  'aws-lambda',
  'fs',
  'fs/*',
  'node:fs',
  'node:fs/*',
  'node:child_process',
  'node:net',
  'node:http',
  'node:https',
];
/** Core's imports: `outside` is the relative prefix that leaves lambdas/core from its files. */
const coreImports = (outside) => [
  'error',
  {
    paths: [...CLASSIC_ZOD, ...ZOD_MINI_UNCONFIGURED],
    patterns: [{ group: [...CORE_FORBIDDEN_PACKAGES, outside], message: CORE_MESSAGE }],
  },
];

export default tseslint.config(
  {
    ignores: [
      'node_modules',
      'dist',
      'cdk.out',
      '.groundwork',
      'coverage',
      'test-artifacts',
      'scratch',
      '**/*.cjs',
      '**/*.js',
      '**/*.mjs',
    ],
  },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
    },
  },
  {
    // Everything under lambdas/ is bundled into a Lambda function.
    files: ['lambdas/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { paths: [...CLASSIC_ZOD, ...ZOD_MINI_UNCONFIGURED] }],
      'no-restricted-syntax': ['error', NAMED_Z_IMPORT],
    },
  },
  {
    // `groundwork`, the benchmarks and the scripts run the sources through tsx's CommonJS hook
    // (`node -r tsx/cjs`), under which import() of a relative TypeScript path does not resolve.
    files: ['local/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: 'ImportExpression[source.value=/^\\./]',
          message:
            'Import relative modules statically here: under tsx/cjs a dynamic import() of a .ts path fails at run time (tests, compiled by swc, do not see it).',
        },
      ],
    },
  },
  {
    files: ['lambdas/core/*.ts'],
    rules: { 'no-restricted-imports': coreImports('../*') },
  },
  {
    files: ['lambdas/core/*/**/*.ts'],
    rules: { 'no-restricted-imports': coreImports('../../*') },
  },
  {
    files: ['lambdas/core/zod.ts'],
    rules: { 'no-restricted-imports': ['error', { paths: CLASSIC_ZOD }] },
  },
);
