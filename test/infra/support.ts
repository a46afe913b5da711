/**
 * Builds the Groundwork app the way bin/groundwork.ts does, from cdk.json's context plus
 * overrides, into a temporary cloud assembly, once per test file.
 */
import { readFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { buildGroundwork, type GroundworkStacks } from '../../lib/app';
import { parseConfig, REPO_ROOT, type GroundworkConfig } from '../../lib/config';

/** cdk.json's context (feature flags and configuration defaults). */
export function cdkJsonContext(): Record<string, unknown> {
  const cdkJson = JSON.parse(readFileSync(path.join(REPO_ROOT, 'cdk.json'), 'utf8')) as {
    context: Record<string, unknown>;
  };
  return cdkJson.context;
}

export interface SynthesizedApp extends GroundworkStacks {
  readonly app: App;
  readonly config: GroundworkConfig;
  readonly outdir: string;
  readonly data: GroundworkStacks['data'];
  readonly dataTemplate: Template;
  readonly apiTemplate: Template;
}

/**
 * Synthesizes the app with cdk.json's context, `overrides` applied to the configuration.
 * `bundle: false` skips esbuild (for variants whose code assets do not matter).
 */
export function synthGroundwork(
  overrides: Record<string, unknown> = {},
  options: { bundle?: boolean } = {},
): SynthesizedApp {
  const context = cdkJsonContext();
  const outdir = mkdtempSync(path.join(os.tmpdir(), 'groundwork-cdk-'));
  const app = new App({
    outdir,
    context: { ...context, ...(options.bundle === false ? { 'aws:cdk:bundling-stacks': [] } : {}) },
  });
  const configKeys = Object.keys(context).filter((k) => !k.startsWith('@'));
  const config = parseConfig({
    ...Object.fromEntries(configKeys.map((k) => [k, context[k]])),
    ...overrides,
  });
  const stacks = buildGroundwork(app, config);
  return {
    ...stacks,
    app,
    config,
    outdir,
    dataTemplate: Template.fromStack(stacks.data),
    apiTemplate: Template.fromStack(stacks.api),
  };
}

/** Every resource of a type in a template, by logical id. */
export function resourcesOfType(
  template: Template,
  type: string,
): Record<string, { Properties?: Record<string, unknown>; [k: string]: unknown }> {
  return template.findResources(type);
}

/** cdk-nag's AwsSolutions findings in an app, one line each (`severity rule: paths`). */
export function nagFindings(app: IConstruct): string[] {
  return new AwsSolutionsChecks()
    .validateScope(app)
    .violations.map(
      (v) =>
        `${v.severity} ${v.ruleName}: ${v.violatingResources.map((r) => r.constructPath).join(', ')}`,
    );
}

/** A REST API method of a template, with the route key its resources spell. */
export interface RestRoute {
  /** `POST /api/rag/answer` */
  readonly key: string;
  readonly id: string;
  readonly properties: Record<string, unknown>;
}

/** Every method of the template's REST API, keyed by method and path (resources walked to the root). */
export function restRoutes(template: Template): RestRoute[] {
  const resources = resourcesOfType(template, 'AWS::ApiGateway::Resource');
  const pathOf = (ref: unknown): string => {
    const id = (ref as { Ref?: string } | undefined)?.Ref;
    const resource = id ? resources[id] : undefined;
    if (!resource) return ''; // the root resource (Fn::GetAtt RootResourceId)
    const props = resource.Properties ?? {};
    return `${pathOf(props.ParentId)}/${String(props.PathPart)}`;
  };
  return Object.entries(resourcesOfType(template, 'AWS::ApiGateway::Method')).map(
    ([id, method]) => {
      const properties = method.Properties ?? {};
      return {
        key: `${String(properties.HttpMethod)} ${pathOf(properties.ResourceId) || '/'}`,
        id,
        properties,
      };
    },
  );
}

/**
 * The logical id of the data stack's resource that a value in the API stack's template names
 * across the stacks (`Fn::GetStackOutput` or `Fn::ImportValue` of the data stack's output, itself
 * a `Ref` or `Fn::GetAtt`), or that a value of the data stack names directly.
 */
export function dataResourceOf(built: SynthesizedApp, value: unknown): string | undefined {
  const direct = (v: unknown): string | undefined => {
    const ref = (v as { Ref?: unknown } | undefined)?.Ref;
    if (typeof ref === 'string') return ref;
    const getAtt = (v as { 'Fn::GetAtt'?: unknown } | undefined)?.['Fn::GetAtt'];
    return Array.isArray(getAtt) && typeof getAtt[0] === 'string' ? getAtt[0] : undefined;
  };
  const outputs = (built.dataTemplate.toJSON().Outputs ?? {}) as Record<
    string,
    { Value?: unknown; Export?: { Name?: unknown } }
  >;
  const stackOutput = (value as { 'Fn::GetStackOutput'?: { OutputName?: string } })?.[
    'Fn::GetStackOutput'
  ];
  if (stackOutput?.OutputName) return direct(outputs[stackOutput.OutputName]?.Value);
  const imported = (value as { 'Fn::ImportValue'?: unknown })?.['Fn::ImportValue'];
  if (imported !== undefined) {
    const output = Object.values(outputs).find(
      (o) => JSON.stringify(o.Export?.Name) === JSON.stringify(imported),
    );
    return direct(output?.Value);
  }
  return direct(value);
}
