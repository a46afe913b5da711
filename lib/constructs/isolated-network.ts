/**
 * IsolatedNetwork: a VPC with isolated subnets only (no internet gateway, no NAT gateway), and
 * VPC endpoints for the AWS services: S3 and DynamoDB through gateway endpoints (free), Secrets
 * Manager and Bedrock runtime through interface endpoints (hourly, per AZ), and, unless turned
 * off, SQS and CloudWatch Logs/monitoring too. The code calls none of the last three today
 * (Lambda polls the queue and delivers logs and EMF metrics itself); they are there for code
 * that will, at about USD 7.30 per endpoint per AZ per month (off by default).
 *
 * Egress is closed twice. Every endpoint has a policy: the interface endpoints allow only
 * principals of this account acting on resources of this account (Bedrock's foundation models
 * have no account, so there the principal alone), and the gateway endpoints allow only the
 * actions and resources added with `allowS3` / `allowDynamoDb` (the documents bucket, the limits
 * table), so a compromised function cannot reach another account's bucket or table through them.
 * And the functions' security group reaches only the interface endpoints' security group and the
 * S3 and DynamoDB managed prefix lists, on 443 (`restrictToEndpoints` does the same for any other
 * group); the prefix lists' ids are looked up at deploy time (DescribeManagedPrefixLists).
 */
import { Stack, RemovalPolicy } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as cr from 'aws-cdk-lib/custom-resources';
import { Construct } from 'constructs';
import { acknowledgeWildcardResource } from '../nag';

export interface IsolatedNetworkProps {
  /** The VPC's address range. @default '10.80.0.0/16' */
  readonly cidr?: string;
  /** Availability zones (two or more keep Aurora and the endpoints available). @default 2 */
  readonly maxAzs?: number;
  /** Retention of the VPC flow log (rejected traffic). @default logs.RetentionDays.ONE_MONTH */
  readonly flowLogRetention?: logs.RetentionDays;
  /** Also create OPTIONAL_INTERFACE_ENDPOINTS (SQS, CloudWatch Logs and monitoring). @default true */
  readonly optionalEndpoints?: boolean;
}

/** The interface endpoints the functions need, by name. */
const REQUIRED_INTERFACE_ENDPOINTS = {
  SecretsManager: ec2.InterfaceVpcEndpointAwsService.SECRETS_MANAGER,
  BedrockRuntime: ec2.InterfaceVpcEndpointAwsService.BEDROCK_RUNTIME,
} as const;

/** Interface endpoints for services the code does not call today (see the module comment). */
const OPTIONAL_INTERFACE_ENDPOINTS = {
  Sqs: ec2.InterfaceVpcEndpointAwsService.SQS,
  CloudWatchLogs: ec2.InterfaceVpcEndpointAwsService.CLOUDWATCH_LOGS,
  CloudWatchMonitoring: ec2.InterfaceVpcEndpointAwsService.CLOUDWATCH_MONITORING,
} as const;

export class IsolatedNetwork extends Construct {
  readonly vpc: ec2.Vpc;
  /** The VPC's CIDR as a literal (rules built from it stay checkable at synth time). */
  readonly cidr: string;
  /** For every function: HTTPS out to the endpoints only, nothing in. */
  readonly functionSecurityGroup: ec2.SecurityGroup;
  /** The interface endpoints' group: HTTPS in from the VPC. */
  readonly endpointSecurityGroup: ec2.SecurityGroup;
  readonly s3Endpoint: ec2.GatewayVpcEndpoint;
  readonly dynamoDbEndpoint: ec2.GatewayVpcEndpoint;
  /** The interface endpoints, by name (REQUIRED_INTERFACE_ENDPOINTS and the optional ones). */
  readonly interfaceEndpoints: Readonly<Record<string, ec2.InterfaceVpcEndpoint>>;
  /** The region's S3 and DynamoDB managed prefix lists (their ids resolve at deploy time). */
  readonly prefixLists: { readonly s3: ec2.IPeer; readonly dynamoDb: ec2.IPeer };

  constructor(scope: Construct, id: string, props: IsolatedNetworkProps = {}) {
    super(scope, id);
    this.cidr = props.cidr ?? '10.80.0.0/16';
    this.vpc = new ec2.Vpc(this, 'Vpc', {
      ipAddresses: ec2.IpAddresses.cidr(this.cidr),
      maxAzs: props.maxAzs ?? 2,
      natGateways: 0,
      subnetConfiguration: [
        { name: 'isolated', subnetType: ec2.SubnetType.PRIVATE_ISOLATED, cidrMask: 22 },
      ],
      restrictDefaultSecurityGroup: true,
    });
    // Rejected traffic only: what a security review needs, at a fraction of an ALL log's cost.
    this.vpc.addFlowLog('RejectedTraffic', {
      trafficType: ec2.FlowLogTrafficType.REJECT,
      destination: ec2.FlowLogDestination.toCloudWatchLogs(
        new logs.LogGroup(this, 'FlowLogs', {
          retention: props.flowLogRetention ?? logs.RetentionDays.ONE_MONTH,
          removalPolicy: RemovalPolicy.DESTROY,
        }),
      ),
    });

    const isolated = { subnetType: ec2.SubnetType.PRIVATE_ISOLATED };
    // Gateway endpoints start with no statement: only what allowS3 / allowDynamoDb add passes.
    this.s3Endpoint = this.vpc.addGatewayEndpoint('S3', {
      service: ec2.GatewayVpcEndpointAwsService.S3,
      subnets: [isolated],
    });
    this.dynamoDbEndpoint = this.vpc.addGatewayEndpoint('DynamoDb', {
      service: ec2.GatewayVpcEndpointAwsService.DYNAMODB,
      subnets: [isolated],
    });
    const endpoints = new ec2.SecurityGroup(this, 'Endpoints', {
      vpc: this.vpc,
      description: 'Groundwork VPC interface endpoints: HTTPS from inside the VPC',
      allowAllOutbound: false,
    });
    endpoints.addIngressRule(ec2.Peer.ipv4(this.cidr), ec2.Port.tcp(443), 'HTTPS from the VPC');
    const services = {
      ...REQUIRED_INTERFACE_ENDPOINTS,
      ...((props.optionalEndpoints ?? true) ? OPTIONAL_INTERFACE_ENDPOINTS : {}),
    };
    this.endpointSecurityGroup = endpoints;
    const account = Stack.of(this).account;
    const interfaceEndpoints: Record<string, ec2.InterfaceVpcEndpoint> = {};
    for (const [name, service] of Object.entries(services)) {
      const endpoint = this.vpc.addInterfaceEndpoint(name, {
        service,
        subnets: isolated,
        privateDnsEnabled: true,
        securityGroups: [endpoints],
        open: false,
      });
      endpoint.addToPolicy(
        new iam.PolicyStatement({
          principals: [new iam.AnyPrincipal()],
          actions: ['*'],
          resources: ['*'],
          conditions: {
            StringEquals: {
              'aws:PrincipalAccount': account,
              // Foundation models belong to no account; everything else must be ours.
              ...(name === 'BedrockRuntime' ? {} : { 'aws:ResourceAccount': account }),
            },
          },
        }),
      );
      interfaceEndpoints[name] = endpoint;
    }
    this.interfaceEndpoints = interfaceEndpoints;

    this.prefixLists = {
      s3: this.lookUpPrefixList('S3PrefixList', 's3'),
      dynamoDb: this.lookUpPrefixList('DynamoDbPrefixList', 'dynamodb'),
    };
    this.functionSecurityGroup = new ec2.SecurityGroup(this, 'Functions', {
      vpc: this.vpc,
      description: 'Groundwork functions: HTTPS to the VPC endpoints only',
      allowAllOutbound: false,
    });
    this.restrictToEndpoints(this.functionSecurityGroup);
  }

  /**
   * Lets a security group (created with `allowAllOutbound: false`) reach the AWS services on 443:
   * the interface endpoints' group and the S3 and DynamoDB prefix lists, nothing else.
   */
  restrictToEndpoints(group: ec2.SecurityGroup, options: { gateways?: boolean } = {}): void {
    group.addEgressRule(
      this.endpointSecurityGroup,
      ec2.Port.tcp(443),
      'HTTPS to the interface endpoints',
    );
    if (options.gateways ?? true) {
      group.addEgressRule(this.prefixLists.s3, ec2.Port.tcp(443), 'HTTPS to S3 (gateway endpoint)');
      group.addEgressRule(
        this.prefixLists.dynamoDb,
        ec2.Port.tcp(443),
        'HTTPS to DynamoDB (gateway endpoint)',
      );
    }
  }

  /**
   * Lets the functions reach a model server outside AWS's endpoints (an OpenAI-compatible
   * embeddings or rerank server in the VPC or a peered network) on one port of one CIDR range.
   */
  allowModelServer(cidr: string, port: number): void {
    this.functionSecurityGroup.addEgressRule(
      ec2.Peer.ipv4(cidr),
      ec2.Port.tcp(port),
      `Model server at ${cidr} (modelServerEgress)`,
    );
  }

  /** Lets `actions` on `resources` of S3 through the S3 gateway endpoint, for this account's principals. */
  allowS3(actions: string[], resources: string[]): void {
    this.s3Endpoint.addToPolicy(this.gatewayStatement(actions, resources));
  }

  /** Lets `actions` on `resources` of DynamoDB through its gateway endpoint, for this account's principals. */
  allowDynamoDb(actions: string[], resources: string[]): void {
    this.dynamoDbEndpoint.addToPolicy(this.gatewayStatement(actions, resources));
  }

  private gatewayStatement(actions: string[], resources: string[]): iam.PolicyStatement {
    return new iam.PolicyStatement({
      principals: [new iam.AnyPrincipal()],
      actions,
      resources,
      conditions: { StringEquals: { 'aws:PrincipalAccount': Stack.of(this).account } },
    });
  }

  /** The id of the region's `com.amazonaws.<region>.<service>` prefix list, read at deploy time. */
  private lookUpPrefixList(id: string, service: string): ec2.IPeer {
    const region = Stack.of(this).region;
    const call: cr.AwsSdkCall = {
      service: 'EC2',
      action: 'describeManagedPrefixLists',
      parameters: {
        Filters: [{ Name: 'prefix-list-name', Values: [`com.amazonaws.${region}.${service}`] }],
      },
      physicalResourceId: cr.PhysicalResourceId.of(`${service}-prefix-list`),
      outputPaths: ['PrefixLists.0.PrefixListId'],
    };
    const lookup = new cr.AwsCustomResource(this, id, {
      onCreate: call,
      onUpdate: call,
      policy: cr.AwsCustomResourcePolicy.fromSdkCalls({
        resources: cr.AwsCustomResourcePolicy.ANY_RESOURCE,
      }),
      installLatestAwsSdk: false,
    });
    acknowledgeWildcardResource(
      lookup,
      '*',
      'ec2:DescribeManagedPrefixLists has no resource-level permissions; the call only reads the AWS prefix list ids.',
    );
    return ec2.Peer.prefixList(lookup.getResponseField('PrefixLists.0.PrefixListId'));
  }
}
