/**
 * GroundworkFunction: a NodejsFunction with the house defaults fixed once: ARM64, Node.js 22,
 * esbuild (minified, source maps, the options in lib/bundling.ts, bundled locally with no
 * Docker; heavy modules loaded on first use shipped beside the bundle; the AWS SDK bundled or
 * left to the runtime), JSON logs into its own log group with retention, X-Ray tracing, the Powertools
 * environment, isolated subnets, and an execution role that can write only its own log group.
 * Access to anything else is granted by the helpers in lib/grants.ts, which also set the
 * environment variables the handler reads.
 */
import path from 'node:path';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import type * as ec2 from 'aws-cdk-lib/aws-ec2';
import { SubnetType } from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import {
  bundleAliasArgs,
  bundleExternals,
  DEFAULT_AWS_SDK,
  ESBUILD_OPTIONS,
  NODE_MAJOR,
  sideBundleBuilds,
  sideLoadedCopies,
  sideLoadedModule,
} from '../bundling';
import type { AwsSdkSource, SideBundleBuild } from '../bundling';
import { REPO_ROOT } from '../config';
import { acknowledge } from '../nag';

/** Where a function runs: the VPC's isolated subnets, with these security groups. */
export interface FunctionNetwork {
  readonly vpc: ec2.IVpc;
  readonly securityGroups: ec2.ISecurityGroup[];
}

/** Memory, time and concurrency of a function. */
interface FunctionSizing {
  /** @default 512 */
  readonly memorySize?: number;
  /** @default Duration.seconds(30) */
  readonly timeout?: Duration;
  /** Reserved concurrency (also the most it runs at once). @default - unreserved */
  readonly reservedConcurrency?: number;
}

/** Files that ship next to the bundle. */
interface FunctionAssets {
  /**
   * Keys of SIDE_LOADED_MODULES: left out of the bundle, shipped under `node_modules/` beside it
   * (copied or bundled on their own, as lib/bundling.ts says). @default none
   */
  readonly sideLoadedModules?: readonly string[];
  /** Repository folders copied into the bundle folder under the same name. @default none */
  readonly directories?: readonly string[];
}

export interface GroundworkFunctionProps {
  /** Entry file relative to the repository root; it exports `handler`. */
  readonly entry: string;
  /** Powertools service name: the `service` key of logs and the `service` metrics dimension. */
  readonly serviceName: string;
  /**
   * Where its custom metrics go (POWERTOOLS_METRICS_NAMESPACE): its stage's namespace, the one
   * that stage's dashboard and alarms read (lib/metrics.ts metricsNamespace).
   */
  readonly metricsNamespace: string;
  /** VPC and security groups; the function always runs in isolated subnets. */
  readonly network: FunctionNetwork;
  /** @default 512 MB, 30 seconds, unreserved concurrency */
  readonly sizing?: FunctionSizing;
  /** Environment beyond the Powertools defaults (grant helpers add their own). @default none */
  readonly environment?: Readonly<Record<string, string>>;
  /** @default logs.RetentionDays.ONE_MONTH */
  readonly logRetention?: logs.RetentionDays;
  /** @default none */
  readonly assets?: FunctionAssets;
  /** Where the AWS SDK comes from (see AwsSdkSource in lib/bundling.ts). @default 'bundled' */
  readonly awsSdk?: AwsSdkSource;
}

/** The Lambda runtime matching the bundles' esbuild target. */
const RUNTIME = new lambda.Runtime(`nodejs${NODE_MAJOR}.x`, lambda.RuntimeFamily.NODEJS, {
  supportsInlineCode: true,
});

/** Quotes a string for bash (the bundling hooks run under `bash -c`). */
function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** A bundling hook command copying [source, destination] pairs with Node.js (no `cp -r` portability issues). */
function copyCommand(pairs: readonly (readonly [string, string])[]): string {
  const script =
    'const fs=require("fs"),p=require("path");' +
    `for(const[s,d]of ${JSON.stringify(pairs)}){fs.mkdirSync(p.dirname(d),{recursive:true});fs.cpSync(s,d,{recursive:true});}`;
  return `node -e ${shellQuote(script)}`;
}

/** A bundling hook command running esbuild builds with the project's own esbuild. */
function esbuildCommand(projectDir: string, builds: readonly SideBundleBuild[]): string {
  const esbuild = path.join(projectDir, 'node_modules', 'esbuild');
  const script = `const e=require(${JSON.stringify(esbuild)});for(const b of ${JSON.stringify(builds)})e.buildSync(b);`;
  return `node -e ${shellQuote(script)}`;
}

/** A Lambda function with the project's defaults; see the module comment. */
export class GroundworkFunction extends Construct implements iam.IGrantable {
  /** The underlying function. */
  readonly function: nodejs.NodejsFunction;
  /** Its execution role (only its own log group, X-Ray and VPC networking until granted more). */
  readonly role: iam.Role;
  readonly logGroup: logs.LogGroup;
  readonly grantPrincipal: iam.IPrincipal;
  readonly serviceName: string;

  constructor(scope: Construct, id: string, props: GroundworkFunctionProps) {
    super(scope, id);
    this.serviceName = props.serviceName;
    this.logGroup = new logs.LogGroup(this, 'Logs', {
      retention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `Execution role of the ${props.serviceName} function`,
    });
    this.logGroup.grantWrite(this.role);
    // What Lambda needs to attach the function to the VPC (the managed policy's EC2 part).
    this.role.addToPolicy(
      new iam.PolicyStatement({
        actions: [
          'ec2:CreateNetworkInterface',
          'ec2:DescribeNetworkInterfaces',
          'ec2:DescribeSubnets',
          'ec2:DeleteNetworkInterface',
          'ec2:AssignPrivateIpAddresses',
          'ec2:UnassignPrivateIpAddresses',
        ],
        resources: ['*'],
      }),
    );
    this.grantPrincipal = this.role;

    const sideLoaded = props.assets?.sideLoadedModules ?? [];
    const directories = props.assets?.directories ?? [];
    // Fails the synth for an unknown name.
    sideLoaded.forEach(sideLoadedModule);
    /** The hook commands shipping the directories and side-loaded modules into the bundle folder. */
    const afterBundling = (inputDir: string, outputDir: string): string[] => {
      const copies = [
        ...directories.map((dir): [string, string] => [
          path.join(inputDir, dir),
          path.join(outputDir, dir),
        ]),
        ...sideLoadedCopies(sideLoaded, inputDir, outputDir),
      ];
      const builds = sideBundleBuilds(sideLoaded, inputDir, outputDir);
      return [
        ...(copies.length > 0 ? [copyCommand(copies)] : []),
        ...(builds.length > 0 ? [esbuildCommand(inputDir, builds)] : []),
      ];
    };
    const hooks: nodejs.ICommandHooks | undefined =
      sideLoaded.length + directories.length > 0
        ? { beforeBundling: () => [], beforeInstall: () => [], afterBundling }
        : undefined;

    this.function = new nodejs.NodejsFunction(this, 'Function', {
      entry: path.join(REPO_ROOT, props.entry),
      handler: 'handler',
      projectRoot: REPO_ROOT,
      depsLockFilePath: path.join(REPO_ROOT, 'package-lock.json'),
      runtime: RUNTIME,
      architecture: lambda.Architecture.ARM_64,
      memorySize: props.sizing?.memorySize ?? 512,
      timeout: props.sizing?.timeout ?? Duration.seconds(30),
      ...(props.sizing?.reservedConcurrency !== undefined
        ? { reservedConcurrentExecutions: props.sizing.reservedConcurrency }
        : {}),
      role: this.role,
      logGroup: this.logGroup,
      loggingFormat: lambda.LoggingFormat.JSON,
      applicationLogLevelV2: lambda.ApplicationLogLevel.INFO,
      systemLogLevelV2: lambda.SystemLogLevel.WARN,
      tracing: lambda.Tracing.ACTIVE,
      vpc: props.network.vpc,
      vpcSubnets: { subnetType: SubnetType.PRIVATE_ISOLATED },
      securityGroups: props.network.securityGroups,
      environment: {
        POWERTOOLS_SERVICE_NAME: props.serviceName,
        POWERTOOLS_LOG_LEVEL: 'INFO',
        POWERTOOLS_METRICS_NAMESPACE: props.metricsNamespace,
        ...props.environment,
      },
      bundling: {
        minify: ESBUILD_OPTIONS.minify,
        sourceMap: ESBUILD_OPTIONS.sourcemap,
        sourcesContent: ESBUILD_OPTIONS.sourcesContent,
        keepNames: ESBUILD_OPTIONS.keepNames,
        target: ESBUILD_OPTIONS.target,
        format: nodejs.OutputFormat.CJS,
        mainFields: [...ESBUILD_OPTIONS.mainFields],
        // The side-loaded modules, and the AWS SDK when the runtime's copy is used.
        externalModules: bundleExternals(sideLoaded, props.awsSdk ?? DEFAULT_AWS_SDK),
        // With the SDK bundled: its credential chain and Bedrock token lookup, environment only.
        esbuildArgs: bundleAliasArgs(props.awsSdk ?? DEFAULT_AWS_SDK),
        forceDockerBundling: false,
        ...(hooks ? { commandHooks: hooks } : {}),
      },
    });

    acknowledge(
      this.role,
      'AwsSolutions-IAM5[Resource::*]',
      'Only actions without resource-level permissions use "*": the EC2 network-interface actions Lambda needs to ' +
        'attach the function to the VPC, and X-Ray PutTraceSegments/PutTelemetryRecords for active tracing.',
    );
    acknowledge(
      this.function,
      'AwsSolutions-L1',
      `Pinned to nodejs${NODE_MAJOR}.x, the runtime the code, the tests and the bundles (esbuild target) are built for; move with them.`,
    );
  }

  /** Adds an environment variable (grant helpers call this beside the grant). */
  addEnvironment(key: string, value: string): this {
    this.function.addEnvironment(key, value);
    return this;
  }
}
