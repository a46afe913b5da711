/**
 * The bundling choices of lib/bundling.ts that the stack tests do not see: the AWS SDK left to
 * the Lambda runtime (`awsSdk: runtime`), through GroundworkFunction and through esbuild alone.
 */
import { readFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { Template } from 'aws-cdk-lib/assertions';
import { buildSync } from 'esbuild';
import {
  AWS_SDK_MODULES,
  bundleExternals,
  ESBUILD_OPTIONS,
  LAMBDA_ENTRIES,
  SIDE_LOADED_BY,
  sideBundleBuilds,
} from '../../lib/bundling';
import { REPO_ROOT } from '../../lib/config';
import { GroundworkFunction } from '../../lib/constructs/groundwork-function';

/** Not preceded by "[": the SDK's error messages quote `[require("@aws-sdk/...")]`. */
const SDK_REFERENCE = /(?<!\[)(require|import)\("(@(aws-sdk|smithy)\/[^"]+)"\)/g;

/** The SDK modules a bundle loads, as `require` or `import` calls. */
function sdkReferences(bundle: string): string[] {
  return [...bundle.matchAll(SDK_REFERENCE)].map((m) => `${m[1]} ${m[2]}`);
}

describe('awsSdk: runtime', () => {
  it('leaves the SDK and the Smithy packages out of the bundle, and nothing else', () => {
    expect(bundleExternals(['unpdf'], 'runtime')).toEqual([...AWS_SDK_MODULES, 'unpdf']);
    expect(bundleExternals(['unpdf'], 'bundled')).toEqual(['unpdf']);
  });

  it('loads every SDK client with require(), which finds the runtime copy through NODE_PATH', () => {
    // Lambda puts its SDK on NODE_PATH (/var/runtime/node_modules): require() searches it, a
    // dynamic import() does not. So every SDK reference of a bundle must be a require().
    for (const name of Object.keys(LAMBDA_ENTRIES) as (keyof typeof LAMBDA_ENTRIES)[]) {
      const result = buildSync({
        ...ESBUILD_OPTIONS,
        mainFields: [...ESBUILD_OPTIONS.mainFields],
        sourcemap: false,
        entryPoints: [path.join(REPO_ROOT, LAMBDA_ENTRIES[name])],
        external: bundleExternals(SIDE_LOADED_BY[name] ?? [], 'runtime'),
        write: false,
        logLevel: 'error',
      });
      const references = sdkReferences(result.outputFiles[0]?.text ?? '');
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
