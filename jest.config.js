// Projects: fast unit tests beside the code; integration tests that use the real embedded
// database, the real PostgreSQL + pgvector server and local AWS emulators; end-to-end browser
// tests of the playground; and the CDK app's infrastructure tests.
/** @type {import('jest').Config} */
const swc = [
  '@swc/jest',
  {
    jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
    module: { type: 'commonjs' },
  },
];
const common = {
  testEnvironment: 'node',
  // @middy/* and the OpenAPI validator ship only ES modules: transform them to CommonJS like our
  // own sources.
  transform: { '^.+\\.(t|j|mj)s$': swc },
  transformIgnorePatterns: ['/node_modules/(?!(@middy|@seriousme)/)'],
  moduleFileExtensions: ['ts', 'js', 'mjs', 'cjs', 'json'],
};
module.exports = {
  projects: [
    {
      ...common,
      displayName: 'unit',
      testMatch: [
        '<rootDir>/lambdas/**/*.test.ts',
        '<rootDir>/local/**/*.test.ts',
        '<rootDir>/lib/**/*.test.ts',
        '<rootDir>/test/unit/**/*.test.ts',
      ],
    },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      globalSetup: '<rootDir>/test/integration/global-setup.ts',
    },
    {
      ...common,
      // Each seed's HTTP contract, called over HTTP as its examples do, against the local server.
      displayName: 'contract',
      testMatch: ['<rootDir>/test/contract/**/*.test.ts'],
      globalSetup: '<rootDir>/test/integration/global-setup.ts',
    },
    {
      ...common,
      // The web playground driven in headless Chromium (Debian's package, through
      // playwright-core) against the real local server.
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/e2e/**/*.test.ts'],
    },
    {
      ...common,
      // CDK synth with the real bundling (local esbuild), Template assertions, cdk-nag, and the
      // check that every dashboard metric is emitted by a handler.
      displayName: 'infra',
      testMatch: ['<rootDir>/test/infra/**/*.test.ts'],
    },
  ],
  // A synth bundles seven functions with esbuild.
  testTimeout: 180000,
  // Two suites at a time: each PostgreSQL suite has its own schema and each stack its own data
  // directory and ports, so they do not meet. Jest's default (the CPUs less one) runs them one at a
  // time on a 2-CPU machine: the whole run took 884 to 990 s so, 555 s two at a time.
  maxWorkers: 2,
};
