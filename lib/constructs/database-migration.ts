/**
 * DatabaseMigration: a CloudFormation custom resource (CDK Provider framework) whose handler,
 * lambdas/migrate/index.ts, applies migrations/ with the project's runner, then installs the
 * search routines generated from the code (lambdas/adapters/postgres/routines.ts). Its properties
 * carry a hash of the SQL files, one of the routines, the embedding model, the filter indexes and
 * the database endpoint, so a deploy that changes any of them runs it again (the runner skips what is applied;
 * a changed applied file fails the deploy). The SQL files are copied into the function's bundle.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { CustomResource, Duration, RemovalPolicy } from 'aws-cdk-lib';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as cr from 'aws-cdk-lib/custom-resources';
import { Construct } from 'constructs';
import type { FilterIndexValue } from '../../lambdas/adapters/postgres/filter-indexes';
import { searchRoutines } from '../../lambdas/adapters/postgres/search-routines';
import { LAMBDA_ENTRIES, type AwsSdkSource } from '../bundling';
import { MIGRATIONS_DIR, REPO_ROOT } from '../config';
import { grantDatabase } from '../grants';
import { SERVICES } from '../metrics';
import { acknowledge, acknowledgeWildcardResource, BASIC_EXECUTION_ROLE_FINDING } from '../nag';
import { GroundworkFunction, type FunctionNetwork } from './groundwork-function';
import type { ServerlessDatabase } from './serverless-database';
import { embeddingEnvironment, recordedEmbeddingModel, type ModelsConfig } from '../models';

/** SHA-256 over the names and contents of the `.sql` files, in order. */
export function migrationsHash(dir: string = MIGRATIONS_DIR): string {
  const hash = createHash('sha256');
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort()) {
    hash
      .update(file)
      .update('\0')
      .update(readFileSync(path.join(dir, file)))
      .update('\0');
  }
  return hash.digest('hex');
}

/**
 * SHA-256 over the definitions of the search routines: they change with the search statement's
 * code, not with migrations/, and a deploy that changes them must install them.
 */
export function routinesHash(): string {
  const hash = createHash('sha256');
  for (const definition of searchRoutines()
    .map((r) => r.definition)
    .sort())
    hash.update(definition).update('\0');
  return hash.digest('hex');
}

export interface DatabaseMigrationProps {
  readonly network: FunctionNetwork;
  /** The stage's custom metrics namespace (lib/metrics.ts metricsNamespace). */
  readonly metricsNamespace: string;
  readonly database: ServerlessDatabase;
  /** The configured models: the embedding model is recorded on a new database and checked on an existing one. */
  readonly models: ModelsConfig;
  /**
   * Metadata values with a filter index of their own (cdk.json's `filterIndexes`), made the
   * database's declarations on every run. @default none
   */
  readonly filterIndexes?: readonly FilterIndexValue[];
  /** Whether the exact-scan index exists (cdk.json's `exactScanIndex`). @default false */
  readonly exactScanIndex?: boolean;
  /** @default logs.RetentionDays.ONE_MONTH */
  readonly logRetention?: logs.RetentionDays;
  /** Where the migration function's AWS SDK comes from. @default 'bundled' */
  readonly awsSdk?: AwsSdkSource;
}

export class DatabaseMigration extends Construct {
  readonly function: GroundworkFunction;
  readonly resource: CustomResource;

  constructor(scope: Construct, id: string, props: DatabaseMigrationProps) {
    super(scope, id);
    const retention = props.logRetention ?? logs.RetentionDays.ONE_MONTH;
    this.function = new GroundworkFunction(this, 'Migrate', {
      entry: LAMBDA_ENTRIES.migrate,
      serviceName: SERVICES.migrate,
      metricsNamespace: props.metricsNamespace,
      network: props.network,
      // It waits for a database that does not accept connections yet (a new cluster, an
      // instance resuming from 0 ACUs) for all but the last 90 seconds of this timeout.
      sizing: { timeout: Duration.minutes(10), memorySize: 256 },
      environment: {
        ...embeddingEnvironment(props.models),
        FILTER_INDEXES: JSON.stringify(props.filterIndexes ?? []),
        EXACT_SCAN_INDEX: props.exactScanIndex ? 'on' : 'off',
      },
      logRetention: retention,
      assets: { directories: [path.relative(REPO_ROOT, MIGRATIONS_DIR)] },
      ...(props.awsSdk ? { awsSdk: props.awsSdk } : {}),
    });
    grantDatabase(this.function, props.database, { as: 'owner' });

    const provider = new cr.Provider(this, 'Provider', {
      onEventHandler: this.function.function,
      logGroup: new logs.LogGroup(this, 'ProviderLogs', {
        retention,
        removalPolicy: RemovalPolicy.DESTROY,
      }),
    });
    acknowledgeProviderFramework(provider, this.function.function);

    this.resource = new CustomResource(this, 'Schema', {
      serviceToken: provider.serviceToken,
      resourceType: 'Custom::GroundworkSchema',
      properties: {
        MigrationsHash: migrationsHash(),
        RoutinesHash: routinesHash(),
        // A replaced database (new endpoint) is migrated too.
        Database: props.database.endpoint,
        EmbeddingModel: recordedEmbeddingModel(props.models),
        // A changed list runs it again.
        FilterIndexes: JSON.stringify(props.filterIndexes ?? []),
        ExactScanIndex: props.exactScanIndex ? 'on' : 'off',
      },
    });
  }
}

/** The findings of the CDK Provider framework's own function, which this project does not write. */
function acknowledgeProviderFramework(provider: cr.Provider, onEvent: lambda.IFunction): void {
  acknowledge(
    provider,
    BASIC_EXECUTION_ROLE_FINDING,
    'The CDK Provider framework function uses the basic execution managed policy; it only writes its own logs.',
  );
  acknowledge(
    provider,
    'AwsSolutions-L1',
    'The CDK Provider framework function runtime is chosen by aws-cdk-lib and moves with it.',
  );
  acknowledgeWildcardResource(
    provider,
    `${onEvent.functionArn}:*`,
    'The CDK Provider framework invokes its onEvent function, any version of it; the function itself is fixed.',
  );
}
