/**
 * ApiFirewall: a regional WAF web ACL on the API Gateway REST API's stage (WAF attaches to REST API
 * stages and CloudFront, not to HTTP APIs), so it covers every route: three AWS managed rule groups (the core rule set,
 * known bad inputs, Amazon's IP reputation list) and a rate-based rule that blocks an IP making
 * more than `ratePer5Minutes` requests in 5 minutes. Blocked requests get the API's error model
 * through the WAF_FILTERED gateway response (error-model-responses.ts). Sampled requests and
 * per-rule CloudWatch metrics (namespace AWS/WAFV2) are on.
 *
 * Cost: USD 5 a month for the web ACL, USD 1 a month per rule or managed rule group (4), and
 * USD 0.60 per million requests inspected.
 */
import * as wafv2 from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';

export interface ApiFirewallProps {
  /** The stage's ARN, `arn:aws:apigateway:<region>::/restapis/<id>/stages/<stage>`. */
  readonly stageArn: string;
  /** Requests one IP may make in a 5-minute window before it is blocked. @default 1000 */
  readonly ratePer5Minutes?: number;
  /** The metric name prefix of the web ACL and its rules. @default 'groundwork' */
  readonly metricPrefix?: string;
}

/** The managed rule groups, in evaluation order. */
const MANAGED_RULE_GROUPS = [
  'AWSManagedRulesAmazonIpReputationList',
  'AWSManagedRulesCommonRuleSet',
  'AWSManagedRulesKnownBadInputsRuleSet',
] as const;

export class ApiFirewall extends Construct {
  readonly webAcl: wafv2.CfnWebACL;

  constructor(scope: Construct, id: string, props: ApiFirewallProps) {
    super(scope, id);
    const prefix = props.metricPrefix ?? 'groundwork';
    const visibility = (name: string): wafv2.CfnWebACL.VisibilityConfigProperty => ({
      cloudWatchMetricsEnabled: true,
      sampledRequestsEnabled: true,
      metricName: `${prefix}-${name}`,
    });
    const rules: wafv2.CfnWebACL.RuleProperty[] = [
      {
        name: 'RatePerIp',
        priority: 0,
        action: { block: {} },
        statement: {
          rateBasedStatement: {
            limit: props.ratePer5Minutes ?? 1000,
            aggregateKeyType: 'IP',
            evaluationWindowSec: 300,
          },
        },
        visibilityConfig: visibility('rate-per-ip'),
      },
      ...MANAGED_RULE_GROUPS.map((name, i): wafv2.CfnWebACL.RuleProperty => ({
        name,
        priority: i + 1,
        overrideAction: { none: {} },
        statement: {
          managedRuleGroupStatement: {
            vendorName: 'AWS',
            name,
            // Request bodies are JSON the handlers validate; a long question is not an attack.
            ...(name === 'AWSManagedRulesCommonRuleSet'
              ? {
                  ruleActionOverrides: [
                    { name: 'SizeRestrictions_BODY', actionToUse: { count: {} } },
                  ],
                }
              : {}),
          },
        },
        visibilityConfig: visibility(name),
      })),
    ];
    this.webAcl = new wafv2.CfnWebACL(this, 'WebAcl', {
      scope: 'REGIONAL',
      defaultAction: { allow: {} },
      description: 'Groundwork API: AWS managed rules and a per-IP rate limit',
      visibilityConfig: visibility('api'),
      rules,
    });
    new wafv2.CfnWebACLAssociation(this, 'Association', {
      resourceArn: props.stageArn,
      webAclArn: this.webAcl.attrArn,
    });
  }
}
