/**
 * The bundling choices of lib/bundling.ts that the stack tests do not see: the SDK's credential
 * and token chains replaced in the bundled builds (`awsSdk: bundled`), and the AWS SDK left to
 * the Lambda runtime (`awsSdk: runtime`), through GroundworkFunction and through esbuild alone.
 */
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { App, Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { Template } from 'aws-cdk-lib/assertions';
import {
  AWS_SDK_MODULES,
  BUNDLE_SIZE_CEILING_BYTES,
  bundleAliasArgs,
  bundleAliases,
  bundleExternals,
  LAMBDA_ENTRIES,
  NEVER_LOADED_MODULES,
  sideBundleBuilds,
} from '../../lib/bundling';
import { REPO_ROOT } from '../../lib/config';
import { GroundworkFunction } from '../../lib/constructs/groundwork-function';
import { bundleFunction, bundleProbe } from './probe';
import { TEST_DATABASE_URL } from '../support/databases';

/** Not preceded by "[": the SDK's error messages quote `[require("@aws-sdk/...")]`. */
const SDK_REFERENCE = /(?<!\[)(require|import)\("(@(aws-sdk|smithy)\/[^"]+)"\)/g;

/** The SDK modules a bundle loads, as `require` or `import` calls. */
function sdkReferences(bundle: string): string[] {
  return [...bundle.matchAll(SDK_REFERENCE)].map((m) => `${m[1]} ${m[2]}`);
}

/**
 * The SDK packages that only a credential or token chain outside Lambda needs, and the ones the
 * bundles replace (LAMBDA_SDK_ALIASES) with what only they bring (mnemonist, obliterator).
 */
const NOT_IN_LAMBDA =
  /node_modules\/(@aws-sdk\/(credential-provider-(node|sso|ini|process|web-identity|login|http)|nested-clients|token-providers|endpoint-cache)|@smithy\/credential-provider-imds|mnemonist|obliterator)\//;

describe('awsSdk: bundled', () => {
  it('leaves out the SSO, ini, process, web-identity and metadata providers and their clients', () => {
    for (const name of Object.keys(LAMBDA_ENTRIES) as (keyof typeof LAMBDA_ENTRIES)[]) {
      const { inputs } = bundleFunction(name, 'bundled');
      expect({ name, unwanted: inputs.filter((i) => NOT_IN_LAMBDA.test(i)) }).toEqual({
        name,
        unwanted: [],
      });
      // Every function has an SDK client, so each carries the environment-only provider.
      expect(inputs).toContain('lambdas/adapters/aws/lambda-credentials.ts');
      if (inputs.some((i) => i.includes('@aws-sdk/client-dynamodb/')))
        expect(inputs).toContain('lambdas/adapters/aws/lambda-endpoint-cache.ts');
    }
  });

  it('gives a bundled client the environment credentials, and Bedrock a token from there', () => {
    // Prints what a DynamoDB client's credential provider and the Bedrock client's bearer-token
    // lookup (as its runtime configuration wires it) return, or the error they throw.
    const { file: outfile } = bundleProbe(
      'credentials',
      `
          const { DynamoDBClient } = require('@aws-sdk/client-dynamodb');
          const { BedrockRuntimeClient } = require('@aws-sdk/client-bedrock-runtime');
          const settle = (p) => p.then((value) => ({ value }), (e) => ({ error: e.message }));
          const bearer = new BedrockRuntimeClient({ region: 'us-east-1' }).config.httpAuthSchemes
            .find((s) => s.schemeId === 'smithy.api#httpBearerAuth');
          Promise.all([
            settle(new DynamoDBClient({ region: 'us-east-1' }).config.credentials()),
            settle(bearer.identityProvider({ getIdentityProvider: () => undefined })({})),
          ]).then(([credentials, token]) => console.log(JSON.stringify({ credentials, token })));`,
    );
    /** Runs the probe in a fresh process with only this environment. */
    const probe = (env: Record<string, string>) => {
      const run = spawnSync(process.execPath, [outfile], {
        env: { PATH: process.env.PATH ?? '', HOME: os.tmpdir(), ...env },
        encoding: 'utf8',
      });
      return JSON.parse(run.stdout) as {
        credentials: { value?: Record<string, unknown>; error?: string };
        token: { value?: Record<string, unknown>; error?: string };
      };
    };

    const lambda = probe({
      AWS_ACCESS_KEY_ID: 'ASIABUNDLE',
      AWS_SECRET_ACCESS_KEY: 'secret',
      AWS_SESSION_TOKEN: 'session',
      AWS_BEARER_TOKEN_BEDROCK: 'bedrock-api-key',
    });
    expect(lambda.credentials.value).toMatchObject({
      accessKeyId: 'ASIABUNDLE',
      secretAccessKey: 'secret',
      sessionToken: 'session',
    });
    expect(lambda.token.value).toMatchObject({ token: 'bedrock-api-key' });

    const elsewhere = probe({ AWS_PROFILE: 'developer', AWS_ACCESS_KEY_ID: 'AKIDONLY' });
    expect(elsewhere.credentials.error).toMatch(/^No AWS credentials in the environment/);
    expect(elsewhere.token.error).toMatch(/not from an SSO cache/);
    expect(readFileSync(outfile, 'utf8')).not.toMatch(/defaultProvider::fromSSO|fromIni/);
  });

  it('keeps every function under the size ceiling (1 MB)', () => {
    // A ceiling against an accidental dependency, not a budget: sizes do not vary with the
    // machine, and `npm run bench -- cold-start` reports each bundle's size and init time and
    // lists what dominates a bundle over the ceiling.
    const sizes = Object.fromEntries(
      (Object.keys(LAMBDA_ENTRIES) as (keyof typeof LAMBDA_ENTRIES)[]).map((name) => [
        name,
        bundleFunction(name, 'bundled').bytes,
      ]),
    );
    const over = Object.entries(sizes).filter(([, bytes]) => bytes > BUNDLE_SIZE_CEILING_BYTES);
    expect({ over, sizes }).toEqual({ over: [], sizes });
  });

  it('passes the same aliases to NodejsFunction as esbuild arguments', () => {
    expect(bundleAliasArgs('bundled')).toEqual({
      '--alias': Object.entries(bundleAliases('bundled')).map(([from, to]) => `${from}=${to}`),
    });
    expect(bundleAliasArgs('runtime')).toEqual({});
  });
});

describe('modules no function loads', () => {
  it('are in no bundle', () => {
    const withPg: string[] = [];
    for (const name of Object.keys(LAMBDA_ENTRIES) as (keyof typeof LAMBDA_ENTRIES)[]) {
      const { inputs } = bundleFunction(name, 'bundled');
      const never = inputs.filter((i) => /node_modules\/(pg\/lib\/native|pgpass|split2)\//.test(i));
      expect({ name, never }).toEqual({ name, never: [] });
      if (inputs.includes('node_modules/pg/lib/client.js')) withPg.push(name);
    }
    // The functions with a database: all but usage (DynamoDB only).
    expect(withPg).toEqual(Object.keys(LAMBDA_ENTRIES).filter((n) => n !== 'usage'));
  });

  it('leave a bundled pg pool logging in with a password and querying, pg.native null', async () => {
    // As the adapters connect (lambdas/adapters/aws/database-from-secret.ts): fields, not a URL.
    const { file: outfile } = bundleProbe(
      'pg',
      `
          const pg = require('pg');
          const pool = new pg.Pool(JSON.parse(process.argv[2]));
          pool.query('SELECT current_user AS who').then(async ({ rows }) => {
            console.log(JSON.stringify({ who: rows[0].who, native: pg.native }));
            await pool.end();
          }, (e) => { console.error(e); process.exit(1); });`,
    );
    const url = new URL(TEST_DATABASE_URL);
    const config = {
      host: url.hostname,
      port: Number(url.port || 5432),
      user: decodeURIComponent(url.username),
      password: decodeURIComponent(url.password),
      database: url.pathname.slice(1),
    };
    const run = await promisify(execFile)(process.execPath, [outfile, JSON.stringify(config)], {
      env: { PATH: process.env.PATH ?? '', HOME: os.tmpdir() },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(JSON.parse(run.stdout)).toEqual({ who: config.user, native: null });
  });
});

describe('awsSdk: runtime', () => {
  it('leaves the SDK and the Smithy packages out of the bundle, and nothing else', () => {
    expect(bundleExternals(['unpdf'], 'runtime')).toEqual([
      ...NEVER_LOADED_MODULES,
      ...AWS_SDK_MODULES,
      'unpdf',
    ]);
    expect(bundleExternals(['unpdf'], 'bundled')).toEqual([...NEVER_LOADED_MODULES, 'unpdf']);
  });

  it('loads every SDK client with require(), which finds the runtime copy through NODE_PATH', () => {
    // Lambda puts its SDK on NODE_PATH (/var/runtime/node_modules): require() searches it, a
    // dynamic import() does not. So every SDK reference of a bundle must be a require().
    for (const name of Object.keys(LAMBDA_ENTRIES) as (keyof typeof LAMBDA_ENTRIES)[]) {
      const references = sdkReferences(bundleFunction(name, 'runtime').text);
      expect(references.length).toBeGreaterThan(0);
      expect(references.filter((r) => !r.startsWith('require '))).toEqual([]);
    }
  });

  it('is what GroundworkFunction builds when asked, the side-loaded modules still beside it', () => {
    const outdir = mkdtempSync(path.join(os.tmpdir(), 'groundwork-bundling-'));
    const app = new App({ outdir });
    const stack = new Stack(app, 'Bundling');
    const vpc = new ec2.Vpc(stack, 'Vpc', {
      subnetConfiguration: [{ name: 'isolated', subnetType: ec2.SubnetType.PRIVATE_ISOLATED }],
    });
    new GroundworkFunction(stack, 'Answer', {
      entry: LAMBDA_ENTRIES.answer,
      serviceName: 'rag-answer',
      metricsNamespace: 'Groundwork/bundling',
      network: { vpc, securityGroups: [] },
      assets: { sideLoadedModules: ['gpt-tokenizer'] },
      awsSdk: 'runtime',
    });
    const fn = Object.values(Template.fromStack(stack).findResources('AWS::Lambda::Function'))[0];
    const key = (fn?.Properties?.Code as { S3Key: string }).S3Key.replace(/\.zip$/, '');
    const dir = path.join(outdir, `asset.${key}`);
    expect(sdkReferences(readFileSync(path.join(dir, 'index.js'), 'utf8'))).toEqual(
      expect.arrayContaining(['require @aws-sdk/client-dynamodb']),
    );
    const [tokenizer] = sideBundleBuilds(['gpt-tokenizer'], REPO_ROOT, dir);
    expect(readFileSync(tokenizer?.outfile ?? '', 'utf8').length).toBeGreaterThan(500_000);
  });
});
