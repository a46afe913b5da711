/**
 * DataStack: everything stateful, deployed first and changed rarely: the isolated network,
 * Aurora (with its proxy and secret), the limits table, the documents bucket with its ingest
 * queue and dead-letter queue, and the Cognito user pool. ApiStack holds the code that uses them.
 */
import { Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import type { GroundworkConfig } from './config';
import { DocumentSource } from './constructs/document-source';
import { IsolatedNetwork } from './constructs/isolated-network';
import { ServerlessDatabase } from './constructs/serverless-database';
import { UserDirectory } from './constructs/user-directory';
import { acknowledgeCdkSingletons } from './nag';

/** The DynamoDB TTL attribute of the limits table (LIMITS_TTL_ATTRIBUTE in the limit store). */
const LIMITS_TTL_ATTRIBUTE = 'expires_at';
/** The limits table's index of a tenant's users by month (TENANT_USAGE_INDEX in the limit store). */
const LIMITS_TENANT_USAGE_INDEX = 'tenant-usage';

export interface DataStackProps extends StackProps {
  readonly config: GroundworkConfig;
}

export class DataStack extends Stack {
  readonly network: IsolatedNetwork;
  readonly database: ServerlessDatabase;
  readonly limitsTable: dynamodb.Table;
  readonly documents: DocumentSource;
  readonly users: UserDirectory;

  constructor(scope: Construct, id: string, props: DataStackProps) {
    super(scope, id, props);
    const { config } = props;
    const logRetention = config.logRetentionDays as logs.RetentionDays;

    this.network = new IsolatedNetwork(this, 'Network', {
      flowLogRetention: logRetention,
      optionalEndpoints: config.optionalVpcEndpoints,
    });
    this.database = new ServerlessDatabase(this, 'Database', {
      vpc: this.network.vpc,
      vpcCidr: this.network.cidr,
      capacity: {
        min: config.auroraMinCapacity,
        max: config.auroraMaxCapacity,
        autoPause: Duration.minutes(config.auroraAutoPauseMinutes),
      },
      deletionProtection: config.deletionProtection,
      proxy: config.rdsProxy,
      readers: config.readReplicas,
      logRetention,
      ...(config.auroraEngineVersion ? { engineVersion: config.auroraEngineVersion } : {}),
      // Rotation functions and the proxy reach only the interface endpoints (Secrets Manager).
      restrictEgress: (group) => this.network.restrictToEndpoints(group, { gateways: false }),
    });

    // Rate windows, monthly quotas and daily spend (lambdas/adapters/dynamodb/limit-store.ts).
    this.limitsTable = new dynamodb.Table(this, 'Limits', {
      partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
      sortKey: { name: 'sk', type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      timeToLiveAttribute: LIMITS_TTL_ATTRIBUTE,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      encryption: dynamodb.TableEncryption.AWS_MANAGED,
      deletionProtection: config.deletionProtection,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    // A tenant's users with counters in a month, for the admin statistics.
    this.limitsTable.addGlobalSecondaryIndex({
      indexName: LIMITS_TENANT_USAGE_INDEX,
      partitionKey: { name: 'tenant_month', type: dynamodb.AttributeType.STRING },
      projectionType: dynamodb.ProjectionType.INCLUDE,
      nonKeyAttributes: ['pk', 'plan', 'answers', 'searches'],
    });

    this.documents = new DocumentSource(this, 'Documents', {
      ...(config.documentsBucketName ? { bucketName: config.documentsBucketName } : {}),
      uploadOrigins: config.corsOrigins,
    });
    for (const target of config.modelServerEgress) {
      const [cidr, port] = target.split(':') as [string, string];
      this.network.allowModelServer(cidr, Number(port));
    }
    // What the functions do through the gateway endpoints (lib/grants.ts), and nothing more.
    this.network.allowS3(
      ['s3:GetObject', 's3:PutObject', 's3:DeleteObject'],
      [this.documents.bucket.arnForObjects('*')],
    );
    this.network.allowS3(['s3:ListBucket'], [this.documents.bucket.bucketArn]);
    this.network.allowDynamoDb(
      ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:UpdateItem', 'dynamodb:Query'],
      [this.limitsTable.tableArn, `${this.limitsTable.tableArn}/index/*`],
    );
    this.users = new UserDirectory(this, 'Users', {
      ...(config.userPoolId ? { existingUserPoolId: config.userPoolId } : {}),
      retain: config.deletionProtection,
      ...(config.hostedLoginDomainPrefix
        ? {
            hostedLogin: {
              domainPrefix: config.hostedLoginDomainPrefix,
              callbackUrls: config.hostedLoginCallbackUrls,
            },
          }
        : {}),
    });
    acknowledgeCdkSingletons(this);
  }
}
