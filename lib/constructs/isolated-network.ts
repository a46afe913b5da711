/**
 * IsolatedNetwork: a VPC with isolated subnets only (no internet gateway, no NAT gateway), and
 * VPC endpoints for the AWS services: S3 and DynamoDB through gateway endpoints (free), Secrets
 * Manager and Bedrock runtime through interface endpoints (hourly, per AZ), and, unless turned
 * off, SQS and CloudWatch Logs/monitoring too. The code calls none of the last three today
 * (Lambda polls the queue and delivers logs and EMF metrics itself); they are there for code
 * that will, at about USD 7.30 per endpoint per AZ per month. Also the functions' security
 * group: HTTPS out only, which, with no route to the internet, reaches the endpoints alone.
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';

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
export const REQUIRED_INTERFACE_ENDPOINTS = {
  SecretsManager: ec2.InterfaceVpcEndpointAwsService.SECRETS_MANAGER,
  BedrockRuntime: ec2.InterfaceVpcEndpointAwsService.BEDROCK_RUNTIME,
} as const;

/** Interface endpoints for services the code does not call today (see the module comment). */
export const OPTIONAL_INTERFACE_ENDPOINTS = {
  Sqs: ec2.InterfaceVpcEndpointAwsService.SQS,
  CloudWatchLogs: ec2.InterfaceVpcEndpointAwsService.CLOUDWATCH_LOGS,
  CloudWatchMonitoring: ec2.InterfaceVpcEndpointAwsService.CLOUDWATCH_MONITORING,
} as const;

export class IsolatedNetwork extends Construct {
  readonly vpc: ec2.Vpc;
  /** The VPC's CIDR as a literal (rules built from it stay checkable at synth time). */
  readonly cidr: string;
  /** For every function: HTTPS out (to the endpoints), nothing in. */
  readonly functionSecurityGroup: ec2.SecurityGroup;

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
    this.vpc.addGatewayEndpoint('S3', {
      service: ec2.GatewayVpcEndpointAwsService.S3,
      subnets: [isolated],
    });
    this.vpc.addGatewayEndpoint('DynamoDb', {
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
    for (const [name, service] of Object.entries(services)) {
      this.vpc.addInterfaceEndpoint(name, {
        service,
        subnets: isolated,
        privateDnsEnabled: true,
        securityGroups: [endpoints],
        open: false,
      });
    }

    this.functionSecurityGroup = new ec2.SecurityGroup(this, 'Functions', {
      vpc: this.vpc,
      description: 'Groundwork functions: HTTPS to the VPC endpoints only',
      allowAllOutbound: false,
    });
    this.functionSecurityGroup.addEgressRule(
      ec2.Peer.anyIpv4(),
      ec2.Port.tcp(443),
      'HTTPS to AWS services; isolated subnets route only to the VPC endpoints',
    );
  }
}
