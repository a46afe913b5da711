/**
 * cdk-nag acknowledgements that need more than a fixed rule id. cdk-nag 3 matches a finding id
 * exactly (no prefix matching): an IAM5 finding names the wildcard resource as cdk-nag
 * flattens it (`arn:<AWS::Partition>:...`, `<LogicalId.Arn>`), so the id is computed here with
 * cdk-nag's own flattening, from a value that resolves within the scope's stack.
 */
import { Stack, Validations } from 'aws-cdk-lib';
import type { Construct, IConstruct } from 'constructs';
// Not in cdk-nag's index; the same function its IAM5 rule uses to name a finding.
import { flattenCfnReference } from 'cdk-nag/lib/utils/flatten-cfn-reference';

/** Acknowledges `AwsSolutions-IAM5[Resource::<resource>]` on `scope` with a written reason. */
export function acknowledgeWildcardResource(
  scope: IConstruct,
  resource: string,
  reason: string,
): void {
  const flat = flattenCfnReference(Stack.of(scope).resolve(resource));
  acknowledge(scope, `AwsSolutions-IAM5[Resource::${flat}]`, reason);
}

/** `Validations.of(scope).acknowledge` that refuses an empty or token-only reason. */
export function acknowledge(scope: IConstruct, id: string, reason: string): void {
  if (reason.trim().length < 20)
    throw new Error(
      `cdk-nag acknowledgement of ${id} at ${scope.node.path} needs a written reason`,
    );
  Validations.of(scope).acknowledge({ id, reason });
}

/** The managed policy finding of a function role that uses AWSLambdaBasicExecutionRole. */
export const BASIC_EXECUTION_ROLE_FINDING =
  'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]';

/**
 * Acknowledges the findings of the singleton functions aws-cdk-lib adds to a stack on our
 * behalf (log retention for Aurora's exported log, S3 bucket notifications), whose roles this
 * project does not write. Call after everything is built.
 */
export function acknowledgeCdkSingletons(stack: Stack): void {
  for (const child of stack.node.children as Construct[]) {
    if (child.node.id.startsWith('LogRetention')) {
      acknowledge(
        child,
        BASIC_EXECUTION_ROLE_FINDING,
        "aws-cdk-lib's log-retention function (it sets the retention of Aurora's exported log group) uses the basic execution policy.",
      );
      acknowledge(
        child,
        'AwsSolutions-IAM5[Resource::*]',
        "aws-cdk-lib's log-retention function must set retention on log groups created later by RDS, named only at runtime.",
      );
    } else if (child.node.id.startsWith('AWS679f53fac002430cb0da5b7982bd2287')) {
      acknowledge(
        child,
        BASIC_EXECUTION_ROLE_FINDING,
        "aws-cdk-lib's AwsCustomResource function (it looks up the S3 and DynamoDB prefix list ids at deploy time) uses the basic execution policy.",
      );
    } else if (child.node.id.startsWith('BucketNotificationsHandler')) {
      acknowledge(
        child,
        BASIC_EXECUTION_ROLE_FINDING,
        "aws-cdk-lib's bucket-notifications function (it configures S3 event notifications at deploy time) uses the basic execution policy.",
      );
    }
  }
}
