/**
 * DocumentSource: the documents bucket (private, TLS only, encrypted, versioned, access-logged)
 * whose ObjectCreated and ObjectRemoved events go to the ingest queue; a message that fails
 * `maxReceiveCount` times moves to the dead-letter queue, kept 14 days for inspection and
 * redrive. Object keys name the tenant: `tenants/<tenantId>/...` (see README).
 */
import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as s3n from 'aws-cdk-lib/aws-s3-notifications';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { acknowledge } from '../nag';

/**
 * The documents bucket's name, `groundwork-<stage>-docs-<account>-<region>`: computable in any
 * stack of the same environment, so functions are granted access to it without a cross-stack
 * reference (and their grants have stable cdk-nag finding ids).
 */
export function documentsBucketName(scope: Construct, stage: string): string {
  const stack = Stack.of(scope);
  return `groundwork-${stage}-docs-${stack.account}-${stack.region}`;
}

export interface DocumentSourceProps {
  /** The documents bucket's name (see documentsBucketName). */
  readonly bucketName: string;
  /**
   * How long a received message stays hidden: at least six times the ingest function's timeout
   * (AWS's guidance for SQS event sources). @default Duration.minutes(30)
   */
  readonly visibilityTimeout?: Duration;
  /** Receives before a message moves to the dead-letter queue. @default 5 */
  readonly maxReceiveCount?: number;
  /** Days a replaced or deleted document version is kept. @default 30 */
  readonly noncurrentVersionDays?: number;
  /**
   * Browser origins that may PUT to the presigned upload URLs of POST /documents (the
   * playground, your web app). @default [] (no browser uploads; server-side PUTs still work)
   */
  readonly uploadOrigins?: readonly string[];
}

export class DocumentSource extends Construct {
  readonly bucket: s3.Bucket;
  readonly queue: sqs.Queue;
  readonly deadLetterQueue: sqs.Queue;
  /** Server access logs of the documents bucket. */
  readonly accessLogs: s3.Bucket;

  constructor(scope: Construct, id: string, props: DocumentSourceProps) {
    super(scope, id);
    this.accessLogs = new s3.Bucket(this, 'AccessLogs', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      lifecycleRules: [{ expiration: Duration.days(90) }],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    acknowledge(
      this.accessLogs,
      'AwsSolutions-S1',
      'This is the access-log bucket of the documents bucket; logging it into itself would loop.',
    );

    this.bucket = new s3.Bucket(this, 'Documents', {
      bucketName: props.bucketName,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      versioned: true,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      serverAccessLogsBucket: this.accessLogs,
      serverAccessLogsPrefix: 'documents/',
      ...((props.uploadOrigins ?? []).length > 0
        ? {
            cors: [
              {
                allowedOrigins: [...(props.uploadOrigins ?? [])],
                allowedMethods: [s3.HttpMethods.PUT],
                allowedHeaders: ['content-type'],
                maxAge: 3600,
              },
            ],
          }
        : {}),
      lifecycleRules: [
        { noncurrentVersionExpiration: Duration.days(props.noncurrentVersionDays ?? 30) },
        { abortIncompleteMultipartUploadAfter: Duration.days(7) },
      ],
      removalPolicy: RemovalPolicy.RETAIN,
    });

    this.deadLetterQueue = new sqs.Queue(this, 'DeadLetters', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    this.queue = new sqs.Queue(this, 'Ingest', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout: props.visibilityTimeout ?? Duration.minutes(30),
      retentionPeriod: Duration.days(4),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: props.maxReceiveCount ?? 5 },
    });

    const destination = new s3n.SqsDestination(this.queue);
    this.bucket.addEventNotification(s3.EventType.OBJECT_CREATED, destination);
    this.bucket.addEventNotification(s3.EventType.OBJECT_REMOVED, destination);
  }
}
