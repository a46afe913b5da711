/**
 * The CDK app. Configuration comes from cdk.json's context (override with `-c key=value`) and
 * `GROUNDWORK_<KEY>` environment variables, validated by lib/config.ts before anything is built;
 * cdk-nag's AwsSolutions checks run on every synth.
 *
 *   npx cdk synth                          # offline, no AWS account needed
 *   npx cdk deploy --all -c stage=prod     # see docs/deploy.md
 */
import { App } from 'aws-cdk-lib';
import { buildGroundwork } from '../lib/app';
import { loadConfig } from '../lib/config';

const app = new App();
const config = loadConfig((key) => app.node.tryGetContext(key));
buildGroundwork(app, config);
app.synth();
