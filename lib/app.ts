/**
 * Builds the Groundwork app from a validated configuration: the two stacks, tags, and the
 * cdk-nag AwsSolutions checks. cdk-nag 3 runs as a CDK policy-validation plugin (its v2 Aspect is
 * gone): an unacknowledged error-level finding fails the synth, and every acknowledgement
 * (`Validations.of(x).acknowledge`) carries its reason.
 */
import { Tags, Validations, type App } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { ApiStack } from './api-stack';
import type { GroundworkConfig } from './config';
import { DataStack } from './data-stack';

export interface GroundworkStacks {
  readonly data: DataStack;
  readonly api: ApiStack;
}

/** Adds the stacks to `app`; `nag: false` skips the cdk-nag checks (never in bin/). */
export function buildGroundwork(
  app: App,
  config: GroundworkConfig,
  options: { nag?: boolean } = {},
): GroundworkStacks {
  if (options.nag ?? true) Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  const env =
    config.account && config.region
      ? { account: config.account, region: config.region }
      : undefined;
  const prefix = `Groundwork-${config.stage}`;
  const data = new DataStack(app, `${prefix}-Data`, {
    config,
    description:
      'Groundwork stateful resources: network, Aurora, DynamoDB, documents bucket and queues, Cognito',
    terminationProtection: config.deletionProtection,
    ...(env ? { env } : {}),
  });
  const api = new ApiStack(app, `${prefix}-Api`, {
    config,
    data,
    description: 'Groundwork stateless resources: functions, REST API, dashboard and alarms',
    ...(env ? { env } : {}),
  });
  Tags.of(app).add('project', 'groundwork');
  Tags.of(app).add('stage', config.stage);
  return { data, api };
}
