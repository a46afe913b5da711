/**
 * UserDirectory: the Cognito user pool (created, or an existing one imported by id), its plan
 * groups and the app client the API accepts tokens from.
 *
 * The tenant is the custom attribute `tenant_id`: set by an administrator when the user is
 * created (AdminCreateUser), immutable afterwards, readable in the ID token as
 * `custom:tenant_id`, and absent from the app client's writable attributes, so a user can never
 * move themself to another tenant. Plans are groups (`free`, `basic`, `pro`, `growth`, `admin`),
 * read from the token's `cognito:groups`. No self sign-up: users are created by an operator.
 */
import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as cognito from 'aws-cdk-lib/aws-cognito';
import { Construct } from 'constructs';
import { acknowledge } from '../nag';

/** The plan groups, most privileged first (Cognito puts the lowest precedence first in the token). */
const PLAN_GROUPS = ['admin', 'growth', 'pro', 'basic', 'free'] as const;
/** The custom attribute holding the tenant (the token claim is `custom:tenant_id`). */
const TENANT_ATTRIBUTE = 'tenant_id';

export interface UserDirectoryProps {
  /**
   * Use this user pool instead of creating one. It must already have the immutable custom
   * attribute `tenant_id`; the plan groups and an app client are added to it.
   * @default - a new user pool
   */
  readonly existingUserPoolId?: string;
  /** Keep the new user pool when the stack is deleted. @default true */
  readonly retain?: boolean;
  /**
   * Cognito's hosted sign-in for browser apps (the web playground): a domain, and the
   * authorization-code flow with PKCE on the app client, redirecting only to these URLs.
   * @default - no hosted sign-in (SRP and admin sign-in only)
   */
  readonly hostedLogin?: {
    readonly domainPrefix: string;
    readonly callbackUrls: readonly string[];
  };
}

export class UserDirectory extends Construct {
  readonly userPool: cognito.IUserPool;
  /** The client API tokens are issued to (its id is the tokens' audience). */
  readonly client: cognito.UserPoolClient;
  /** The token issuer, `https://cognito-idp.<region>.amazonaws.com/<pool id>`. */
  readonly issuer: string;
  /** The hosted sign-in domain, when `hostedLogin` is set. */
  readonly hostedLoginDomain?: cognito.UserPoolDomain;

  constructor(scope: Construct, id: string, props: UserDirectoryProps = {}) {
    super(scope, id);
    if (props.existingUserPoolId) {
      this.userPool = cognito.UserPool.fromUserPoolId(this, 'UserPool', props.existingUserPoolId);
    } else {
      const pool = new cognito.UserPool(this, 'UserPool', {
        selfSignUpEnabled: false,
        signInAliases: { email: true },
        standardAttributes: { email: { required: true, mutable: true } },
        customAttributes: {
          [TENANT_ATTRIBUTE]: new cognito.StringAttribute({
            minLen: 1,
            maxLen: 64,
            mutable: false,
          }),
        },
        passwordPolicy: {
          minLength: 12,
          requireLowercase: true,
          requireUppercase: true,
          requireDigits: true,
          requireSymbols: true,
          tempPasswordValidity: Duration.days(3),
        },
        mfa: cognito.Mfa.OPTIONAL,
        mfaSecondFactor: { otp: true, sms: false },
        accountRecovery: cognito.AccountRecovery.EMAIL_ONLY,
        deletionProtection: props.retain ?? true,
        removalPolicy: (props.retain ?? true) ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
      });
      acknowledge(
        pool,
        'AwsSolutions-COG2',
        'MFA is optional (TOTP) rather than required: API users include service accounts; require it per deployment if needed.',
      );
      acknowledge(
        pool,
        'AwsSolutions-COG3',
        'Threat protection needs the Cognito Plus feature plan (a per-user monthly charge); enable it per deployment.',
      );
      acknowledge(
        pool,
        'AwsSolutions-COG8',
        'The Plus feature plan is a per-user monthly charge; the Essentials plan covers token issuance for this API.',
      );
      this.userPool = pool;
    }

    PLAN_GROUPS.forEach((group, precedence) => {
      new cognito.CfnUserPoolGroup(this, `Group-${group}`, {
        userPoolId: this.userPool.userPoolId,
        groupName: group,
        precedence,
        description: group === 'admin' ? 'Administrators (unlimited plan)' : `The ${group} plan`,
      });
    });

    this.client = this.userPool.addClient('ApiClient', {
      generateSecret: false,
      // SRP for applications; ADMIN_USER_PASSWORD_AUTH for operators with IAM credentials (docs/deploy.md).
      authFlows: { userSrp: true, adminUserPassword: true },
      ...(props.hostedLogin
        ? {
            oAuth: {
              // The code flow only (public client, so PKCE): no implicit grant, no client secret.
              flows: { authorizationCodeGrant: true },
              scopes: [
                cognito.OAuthScope.OPENID,
                cognito.OAuthScope.EMAIL,
                cognito.OAuthScope.PROFILE,
              ],
              callbackUrls: [...props.hostedLogin.callbackUrls],
              logoutUrls: [...props.hostedLogin.callbackUrls],
            },
            supportedIdentityProviders: [cognito.UserPoolClientIdentityProvider.COGNITO],
          }
        : { disableOAuth: true }),
      preventUserExistenceErrors: true,
      enableTokenRevocation: true,
      idTokenValidity: Duration.hours(1),
      accessTokenValidity: Duration.hours(1),
      refreshTokenValidity: Duration.days(30),
      readAttributes: new cognito.ClientAttributes()
        .withStandardAttributes({ email: true, emailVerified: true })
        .withCustomAttributes(TENANT_ATTRIBUTE),
      // The tenant is not writable by the client: only an administrator sets it, once.
      writeAttributes: new cognito.ClientAttributes().withStandardAttributes({ email: true }),
    });
    if (props.hostedLogin) {
      this.hostedLoginDomain = this.userPool.addDomain('HostedLogin', {
        cognitoDomain: { domainPrefix: props.hostedLogin.domainPrefix },
      });
    }
    this.issuer = `https://cognito-idp.${Stack.of(this).region}.amazonaws.com/${this.userPool.userPoolId}`;
  }
}
