/**
 * ServerlessDatabase: Aurora PostgreSQL Serverless v2 with pgvector 0.8 (PostgreSQL 17),
 * encrypted storage, credentials in Secrets Manager rotated every 30 days by a rotation
 * function in the VPC, and (by default) RDS Proxy in front of it so that Lambda concurrency
 * does not become database connections. A minimum capacity of 0 ACUs lets the instance pause
 * when nothing is connected.
 *
 * Two logins, each with its own secret and single-user rotation: the owner (`groundwork_admin`),
 * which only the migration function reads, and the application (`groundwork_app`), which the
 * request-serving functions read. The migration function creates the application's role with
 * DML grants only (lambdas/adapters/postgres/app-role.ts), so a handler can change rows but
 * never the schema. Not alternating users: that strategy swaps the secret's username, and RDS
 * Proxy, which reads only the current version of a secret, then has no credentials for the
 * user a warm function still logs in as (aws/aws-cdk#25568).
 *
 * Clients join `clientSecurityGroup`, the only group the proxy (or cluster) accepts on 5432;
 * `grantDatabase` in lib/grants.ts adds it to a function with a secret and the endpoint.
 *
 * With `readers`, Serverless v2 reader instances serve the reads that can lag behind the writer
 * (search and answer retrieval): through a read-only endpoint of the proxy, which spreads
 * connections over the readers, or the cluster's reader endpoint without the proxy
 * (docs/decisions/0147-reads-on-aurora-readers.md).
 */
import { Annotations, Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as rds from 'aws-cdk-lib/aws-rds';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { acknowledge } from '../nag';

/**
 * The engine: Aurora PostgreSQL 17 (pgvector 0.8 with HNSW and iterative index scans, and 0-ACU
 * auto-pause), at the newest minor this aws-cdk-lib knows (test/infra/stacks.test.ts fails when
 * a newer one appears): a pinned older minor stops deploying when AWS retires it. The writer
 * takes AWS's minor upgrades in its maintenance window; `auroraEngineVersion` overrides this
 * (never lower than the running version: Aurora does not downgrade).
 */
const AURORA_POSTGRES_VERSION = rds.AuroraPostgresEngineVersion.VER_17_9;
/** The database the migrations and the functions use. */
const DATABASE_NAME = 'groundwork';
/** The application's login (DML only), created by the migration function on its first run. */
const APP_DATABASE_USER = 'groundwork_app';

/**
 * Characters the application's passwords never contain, when the secret is generated and at every
 * rotation (rds.DatabaseSecret's own default, given to both so that they cannot drift apart).
 */
const DATABASE_PASSWORD_EXCLUDED = ' %+~`#$&*()|[]{}:;<>?!\'/@"\\';

/** PostgreSQL's port, on the proxy and the cluster. */
const PORT = 5432;

/** Aurora Serverless v2 capacity. */
interface DatabaseCapacity {
  /** ACUs; 0 pauses the instance after `autoPause` without connections. @default 0 */
  readonly min?: number;
  /** @default 4 */
  readonly max?: number;
  /** Idle time before a 0-ACU instance pauses (5 minutes to 1 day). @default Duration.minutes(10) */
  readonly autoPause?: Duration;
}

export interface ServerlessDatabaseProps {
  readonly vpc: ec2.IVpc;
  /** The VPC's CIDR as a literal (security-group rules stay checkable at synth time). */
  readonly vpcCidr: string;
  /** @default { min: 0, max: 4, autoPause: 10 minutes } */
  readonly capacity?: DatabaseCapacity;
  /** Refuse to delete the cluster (turn off before `cdk destroy`). @default true */
  readonly deletionProtection?: boolean;
  /** Put RDS Proxy between clients and the cluster. @default true */
  readonly proxy?: boolean;
  /**
   * Serverless v2 reader instances (0 to 15), each scaling with its own read load between the
   * cluster's minimum and maximum capacity (promotion tier 2, so that with a 0-ACU minimum each
   * pauses on its own). @default 0
   */
  readonly readers?: number;
  /** Retention of the exported PostgreSQL log. @default logs.RetentionDays.ONE_MONTH */
  readonly logRetention?: logs.RetentionDays;
  /** The engine version, `17.<minor>`. @default AURORA_POSTGRES_VERSION */
  readonly engineVersion?: string;
  /**
   * Opens HTTPS egress of the rotation functions' and the proxy's groups (created without
   * outbound rules) to the AWS services they call (Secrets Manager). @default - HTTPS to the VPC's range
   */
  readonly restrictEgress?: (group: ec2.SecurityGroup) => void;
}

export class ServerlessDatabase extends Construct {
  readonly cluster: rds.DatabaseCluster;
  readonly proxy: rds.DatabaseProxy | undefined;
  /** The owner's credentials (username, password, host, port, dbname), rotated every 30 days. */
  readonly secret: secretsmanager.ISecret;
  /** The application's credentials (DML only), its password rotated every 30 days. */
  readonly appSecret: secretsmanager.ISecret;
  /** The application secret's rotation. */
  readonly appSecretRotation: secretsmanager.SecretRotation;
  /** Where clients connect: the proxy endpoint, or the cluster's writer endpoint without one. */
  readonly endpoint: string;
  readonly databaseName = DATABASE_NAME;
  /** Members may connect on 5432; nothing else may. */
  readonly clientSecurityGroup: ec2.SecurityGroup;
  /**
   * Members may connect to the cluster itself on 5432, around the proxy: the migration function,
   * which must not wait for the proxy's target to become available on a first deploy.
   */
  readonly ownerSecurityGroup: ec2.SecurityGroup;
  /** The cluster's writer endpoint (where owner connections go). */
  readonly clusterEndpoint: string;
  /**
   * Where reads that may lag the writer connect: the proxy's read-only endpoint, or the cluster's
   * reader endpoint without the proxy; undefined without readers.
   */
  readonly readEndpoint: string | undefined;

  constructor(scope: Construct, id: string, props: ServerlessDatabaseProps) {
    super(scope, id);
    const { vpc } = props;
    const subnets = { subnetType: ec2.SubnetType.PRIVATE_ISOLATED };
    const min = props.capacity?.min ?? 0;
    const deletionProtection = props.deletionProtection ?? true;
    const readers = props.readers ?? 0;
    if (!Number.isInteger(readers) || readers < 0 || readers > 15)
      throw new Error(`readers must be an integer from 0 to 15, not ${readers}`);

    const clusterSecurityGroup = new ec2.SecurityGroup(this, 'ClusterSecurityGroup', {
      vpc,
      description: 'Groundwork Aurora cluster',
      allowAllOutbound: false,
    });
    this.clientSecurityGroup = new ec2.SecurityGroup(this, 'ClientSecurityGroup', {
      vpc,
      description: 'Groundwork database clients: PostgreSQL to the database only',
      allowAllOutbound: false,
    });
    this.ownerSecurityGroup = new ec2.SecurityGroup(this, 'OwnerSecurityGroup', {
      vpc,
      description: 'Groundwork schema migration: PostgreSQL to the cluster directly',
      allowAllOutbound: false,
    });
    clusterSecurityGroup.connections.allowFrom(
      this.ownerSecurityGroup,
      ec2.Port.tcp(PORT),
      'Schema migration to the cluster',
    );

    this.cluster = new rds.DatabaseCluster(this, 'Cluster', {
      engine: rds.DatabaseClusterEngine.auroraPostgres({
        version: props.engineVersion
          ? rds.AuroraPostgresEngineVersion.of(props.engineVersion, '17')
          : AURORA_POSTGRES_VERSION,
      }),
      credentials: rds.Credentials.fromGeneratedSecret('groundwork_admin'),
      defaultDatabaseName: DATABASE_NAME,
      port: PORT,
      writer: rds.ClusterInstance.serverlessV2('Writer', {
        autoMinorVersionUpgrade: true,
        publiclyAccessible: false,
      }),
      readers: Array.from({ length: readers }, (_, i) =>
        rds.ClusterInstance.serverlessV2(`Reader${i + 1}`, {
          autoMinorVersionUpgrade: true,
          publiclyAccessible: false,
          // Tier 2: scales with its own reads, and pauses on its own, not with the writer.
          scaleWithWriter: false,
        }),
      ),
      serverlessV2MinCapacity: min,
      serverlessV2MaxCapacity: props.capacity?.max ?? 4,
      ...(min === 0
        ? { serverlessV2AutoPauseDuration: props.capacity?.autoPause ?? Duration.minutes(10) }
        : {}),
      vpc,
      vpcSubnets: subnets,
      securityGroups: [clusterSecurityGroup],
      storageEncrypted: true,
      iamAuthentication: true,
      deletionProtection,
      removalPolicy: RemovalPolicy.SNAPSHOT,
      backup: { retention: Duration.days(7) },
      copyTagsToSnapshot: true,
      cloudwatchLogsExports: ['postgresql'],
      cloudwatchLogsRetention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
    });
    this.clusterEndpoint = this.cluster.clusterEndpoint.hostname;
    if (readers > 0) {
      Annotations.of(this.cluster).acknowledgeWarning(
        '@aws-cdk/aws-rds:noFailoverServerlessReaders',
        'The readers serve reads and scale with them (tier 2), so they pause on their own; a reader ' +
          'promoted by a failover starts at its own capacity and scales up (docs/decisions/0147).',
      );
    }
    // The construct always generates a secret from `credentials`.
    this.secret = this.cluster.secret as secretsmanager.ISecret;
    const restrictEgress =
      props.restrictEgress ??
      ((group: ec2.SecurityGroup) =>
        group.addEgressRule(ec2.Peer.ipv4(props.vpcCidr), ec2.Port.tcp(443), 'HTTPS in the VPC'));
    // The rotation functions reach the cluster (added by the rotation) and Secrets Manager only.
    const rotationSecurityGroup = new ec2.SecurityGroup(this, 'RotationSecurityGroup', {
      vpc,
      description:
        'Groundwork secret rotation: PostgreSQL to the cluster, HTTPS to Secrets Manager',
      allowAllOutbound: false,
    });
    restrictEgress(rotationSecurityGroup);
    this.cluster.addRotationSingleUser({
      automaticallyAfter: Duration.days(30),
      securityGroup: rotationSecurityGroup,
    });
    this.appSecret = new rds.DatabaseSecret(this, 'AppSecret', {
      username: APP_DATABASE_USER,
      dbname: DATABASE_NAME,
      excludeCharacters: DATABASE_PASSWORD_EXCLUDED,
    }).attach(this.cluster);
    // The login changes its own password (PostgreSQL lets a role do that); the username stays,
    // so RDS Proxy keeps matching it. A function refused after a rotation reads the secret again.
    this.appSecretRotation = new secretsmanager.SecretRotation(this, 'AppUserRotation', {
      application: secretsmanager.SecretRotationApplication.POSTGRES_ROTATION_SINGLE_USER,
      secret: this.appSecret,
      target: this.cluster,
      vpc,
      vpcSubnets: subnets,
      automaticallyAfter: Duration.days(30),
      excludeCharacters: DATABASE_PASSWORD_EXCLUDED,
      securityGroup: rotationSecurityGroup,
      // Rotation logs in as the login, so it must come after the migration function created it
      // (on the API stack's first deploy), not at once.
      rotateImmediatelyOnUpdate: false,
    });

    if (props.proxy ?? true) {
      const proxySecurityGroup = new ec2.SecurityGroup(this, 'ProxySecurityGroup', {
        vpc,
        description: 'Groundwork RDS Proxy',
        allowAllOutbound: false,
      });
      this.proxy = this.cluster.addProxy('Proxy', {
        secrets: [this.secret, this.appSecret],
        vpc,
        vpcSubnets: subnets,
        securityGroups: [proxySecurityGroup],
        requireTLS: true,
        // Idle server connections are closed, so that a 0-ACU instance can pause.
        ...(min === 0 ? { maxIdleConnectionsPercent: 0 } : {}),
        borrowTimeout: Duration.seconds(60),
      });
      // In case the proxy reads its secret through the VPC's Secrets Manager endpoint.
      restrictEgress(proxySecurityGroup);
      proxySecurityGroup.connections.allowFrom(
        this.clientSecurityGroup,
        ec2.Port.tcp(PORT),
        'Database clients to the proxy',
      );
      clusterSecurityGroup.connections.allowFrom(
        proxySecurityGroup,
        ec2.Port.tcp(PORT),
        'Proxy to the cluster',
      );
      this.endpoint = this.proxy.endpoint;
      // Same subnets and security group as the proxy's default endpoint, so the same rules hold.
      this.readEndpoint =
        readers > 0
          ? this.proxy.addEndpoint('ReadOnly', {
              vpc,
              vpcSubnets: subnets,
              securityGroups: [proxySecurityGroup],
              targetRole: rds.ProxyEndpointTargetRole.READ_ONLY,
            }).endpoint
          : undefined;
    } else {
      this.proxy = undefined;
      clusterSecurityGroup.connections.allowFrom(
        this.clientSecurityGroup,
        ec2.Port.tcp(PORT),
        'Database clients to the cluster',
      );
      this.endpoint = this.cluster.clusterEndpoint.hostname;
      this.readEndpoint = readers > 0 ? this.cluster.clusterReadEndpoint.hostname : undefined;
    }

    if (!deletionProtection) {
      acknowledge(
        this.cluster,
        'AwsSolutions-RDS10',
        'Deletion protection is off by configuration (deletionProtection=false) for a disposable stage.',
      );
    }
    acknowledge(
      this.cluster,
      'AwsSolutions-RDS11',
      'PostgreSQL keeps its default port: the cluster has no route from outside the isolated VPC and accepts only ' +
        'the proxy and database-client security groups; RDS Proxy listens on 5432 regardless.',
    );
  }
}
