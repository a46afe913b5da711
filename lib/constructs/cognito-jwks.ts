/**
 * CognitoJwks: fetches a user pool's public signing keys (its JWKS document) at deploy time, for
 * functions that verify tokens themselves but run in isolated subnets with no route to
 * Cognito's public `/.well-known/jwks.json`. A small custom resource outside the VPC does the
 * HTTPS GET; its only permission is writing its own log group. Cognito does not rotate a user
 * pool's signing keys; should it, the verifier's `jwksUri` fallback fails closed (503) until the
 * next deploy refreshes the keys.
 */
import { CustomResource, Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as cr from 'aws-cdk-lib/custom-resources';
import { Construct } from 'constructs';
import { acknowledgeProviderFramework } from './database-migration';
import { RUNTIME } from './groundwork-function';
import { acknowledge } from '../nag';

/** The onEvent handler: GET the JWKS (retrying briefly), return it as the `Jwks` attribute. */
const FETCH_JWKS = `
exports.handler = async (event) => {
  if (event.RequestType === 'Delete') return { PhysicalResourceId: event.PhysicalResourceId };
  const url = event.ResourceProperties.JwksUri;
  for (let attempt = 1; ; attempt++) {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
      if (!res.ok) throw new Error('HTTP ' + res.status + ' from ' + url);
      const jwks = await res.json();
      if (!Array.isArray(jwks.keys) || jwks.keys.length === 0) throw new Error('no keys at ' + url);
      return { PhysicalResourceId: url, Data: { Jwks: JSON.stringify({ keys: jwks.keys }) } };
    } catch (err) {
      if (attempt >= 5) throw err;
      await new Promise((resolve) => setTimeout(resolve, attempt * 2000));
    }
  }
};
`;

export interface CognitoJwksProps {
  /** The user pool's issuer, `https://cognito-idp.<region>.amazonaws.com/<pool id>`. */
  readonly issuer: string;
  /** @default logs.RetentionDays.ONE_MONTH */
  readonly logRetention?: logs.RetentionDays;
}

export class CognitoJwks extends Construct {
  /** The JWKS document as JSON text (about 1 KB for Cognito's two RSA keys). */
  readonly jwks: string;

  constructor(scope: Construct, id: string, props: CognitoJwksProps) {
    super(scope, id);
    const retention = props.logRetention ?? logs.RetentionDays.ONE_MONTH;
    const logGroup = new logs.LogGroup(this, 'Logs', {
      retention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: 'Fetches the Cognito user pool JWKS at deploy time',
    });
    logGroup.grantWrite(role);
    const fetcher = new lambda.Function(this, 'Fetch', {
      runtime: RUNTIME,
      architecture: lambda.Architecture.ARM_64,
      handler: 'index.handler',
      code: lambda.Code.fromInline(FETCH_JWKS),
      timeout: Duration.minutes(1),
      role,
      logGroup,
    });
    const provider = new cr.Provider(this, 'Provider', {
      onEventHandler: fetcher,
      logGroup: new logs.LogGroup(this, 'ProviderLogs', {
        retention,
        removalPolicy: RemovalPolicy.DESTROY,
      }),
    });
    acknowledgeProviderFramework(provider, fetcher);
    acknowledge(
      fetcher,
      'AwsSolutions-L1',
      'Same pinned Node.js runtime as every Groundwork function (lib/bundling.ts NODE_MAJOR).',
    );
    const resource = new CustomResource(this, 'Keys', {
      serviceToken: provider.serviceToken,
      resourceType: 'Custom::CognitoJwks',
      properties: { JwksUri: `${props.issuer}/.well-known/jwks.json` },
    });
    this.jwks = resource.getAttString('Jwks');
  }
}
