/**
 * GroundworkRestApi: the one API Gateway REST API in front of every route of the route table
 * (lambdas/http/api-routes.ts), with
 * - a Cognito user pool authorizer on every route not added as public: it checks the ID token's
 *   signature and expiry and passes its claims in `requestContext.authorizer.claims`; it accepts
 *   the tokens of every app client of the pool, so each function is given the accepted clients
 *   (`TOKEN_AUDIENCES`) and the request lifecycle checks the token's client for every route
 *   (lambdas/http/identity.ts);
 * - gateway responses in the API's error model for every rejection API Gateway makes itself (the
 *   authorizer's 401, an unknown route, throttling, a WAF block; error-model-responses.ts);
 * - Lambda proxy integrations (payload format 1.0, read by lambdas/http/api-event.ts); a streamed
 *   route's integration streams (`responseTransferMode: STREAM`: the function is invoked with
 *   InvokeWithResponseStream and what it writes reaches the client as it is written);
 * - the binary media types of lambdas/http/api-event.ts, so a multipart upload arrives intact;
 * - CORS from lambdas/http/cors.ts: API Gateway answers the preflight, the functions add the
 *   response headers (`CORS_ORIGINS`), the gateway responses carry them too;
 * - stage throttling, JSON access logs, X-Ray tracing and an optional WAF web ACL on the stage
 *   (api-firewall.ts), which then covers every route.
 *
 * Access logs of a REST API need the region's API Gateway CloudWatch Logs role
 * (AWS::ApiGateway::Account): created here unless `cloudWatchRole` is false, for an account that
 * manages it elsewhere. The role and the account setting are retained when the stack is deleted
 * (another API of the account may depend on them).
 */
import { Duration, Fn, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import type * as cognito from 'aws-cdk-lib/aws-cognito';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { BINARY_MEDIA_TYPES } from '../../lambdas/http/api-event';
import {
  CORS_ALLOW_HEADERS,
  CORS_ALLOW_METHODS,
  CORS_EXPOSE_HEADERS,
  CORS_MAX_AGE_SECONDS,
  DEFAULT_CORS_ORIGINS,
} from '../../lambdas/http/cors';
import { acknowledge } from '../nag';
import { ApiFirewall } from './api-firewall';
import { addErrorModelResponses } from './error-model-responses';
import type { GroundworkFunction } from './groundwork-function';

/** Steady-state and burst request limits of the stage. */
interface StageThrottle {
  readonly rateLimit: number;
  readonly burstLimit: number;
}

export interface GroundworkRestApiProps {
  /**
   * The API's name, unique among the stages of an account and region: it is the `ApiName`
   * dimension of the API's AWS/ApiGateway metrics, which the stage's alarms and dashboard read.
   */
  readonly name: string;
  /** The pool whose ID tokens are accepted. */
  readonly userPool: cognito.IUserPool;
  /** The app clients whose tokens the functions accept (`aud` / `client_id`), as `TOKEN_AUDIENCES`. */
  readonly clients: readonly cognito.IUserPoolClient[];
  /** Browser origins allowed by CORS. @default DEFAULT_CORS_ORIGINS (any) */
  readonly corsOrigins?: readonly string[];
  /** @default { rateLimit: 50, burstLimit: 100 } */
  readonly throttle?: StageThrottle;
  /** Retention of the access log. @default logs.RetentionDays.ONE_MONTH */
  readonly logRetention?: logs.RetentionDays;
  /**
   * Create the region's API Gateway CloudWatch Logs role that access logs need; false when the
   * account already has one. @default true
   */
  readonly cloudWatchRole?: boolean;
  /** A WAF web ACL on the stage, with this per-IP limit per 5 minutes; unset: no WAF. @default - none */
  readonly firewall?: { readonly ratePer5Minutes: number };
}

/**
 * How long API Gateway waits for a buffered route's function: the REST API's default and, without
 * a quota increase, its maximum. A function behind such a route must answer within it.
 */
export const BUFFERED_INTEGRATION_TIMEOUT = Duration.seconds(29);

export interface RouteOptions {
  /** No authorizer (the handler must not need an identity, e.g. GET /api/health). @default false */
  readonly public?: boolean;
  /**
   * Stream the function's response (a response-streaming function), with this integration
   * timeout (up to 15 minutes; the function's own should not be longer).
   * @default - buffered, within BUFFERED_INTEGRATION_TIMEOUT
   */
  readonly stream?: { readonly timeout: Duration };
}

/**
 * The access log line: one JSON object per request, with why API Gateway refused it (the
 * authorizer's error, the WAF's response code) or what the integration reported.
 */
const ACCESS_LOG_FORMAT = JSON.stringify({
  requestId: '$context.requestId',
  ip: '$context.identity.sourceIp',
  requestTime: '$context.requestTime',
  method: '$context.httpMethod',
  resource: '$context.resourcePath',
  status: '$context.status',
  protocol: '$context.protocol',
  responseLength: '$context.responseLength',
  latencyMs: '$context.responseLatency',
  integrationLatencyMs: '$context.integration.latency',
  integrationError: '$context.integrationErrorMessage',
  authorizerError: '$context.authorizer.error',
  wafResponseCode: '$context.wafResponseCode',
  userId: '$context.authorizer.claims.sub',
});

/** The stage: the API's URL is `https://<id>.execute-api.<region>.amazonaws.com/v1`. */
const STAGE_NAME = 'v1';

export class GroundworkRestApi extends Construct {
  readonly api: apigateway.RestApi;
  readonly accessLog: logs.LogGroup;
  readonly authorizer: apigateway.CognitoUserPoolsAuthorizer;
  readonly firewall: ApiFirewall | undefined;
  /** Every method added, by route key (`POST /api/rag/answer`). */
  readonly methods = new Map<string, apigateway.Method>();
  private readonly integrations = new Map<string, apigateway.LambdaIntegration>();
  private readonly configured = new Set<GroundworkFunction>();
  private readonly audiences: string;
  private readonly origins: readonly string[];

  constructor(scope: Construct, id: string, props: GroundworkRestApiProps) {
    super(scope, id);
    this.origins = props.corsOrigins ?? DEFAULT_CORS_ORIGINS;
    const throttle = props.throttle ?? { rateLimit: 50, burstLimit: 100 };
    this.accessLog = new logs.LogGroup(this, 'AccessLog', {
      retention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.api = new apigateway.RestApi(this, 'Api', {
      restApiName: props.name,
      description: 'Groundwork: search and answers over your documents',
      endpointTypes: [apigateway.EndpointType.REGIONAL],
      binaryMediaTypes: [...BINARY_MEDIA_TYPES],
      ...((props.cloudWatchRole ?? true)
        ? { cloudWatchRole: true, cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN }
        : { cloudWatchRole: false }),
      deployOptions: {
        stageName: STAGE_NAME,
        throttlingRateLimit: throttle.rateLimit,
        throttlingBurstLimit: throttle.burstLimit,
        tracingEnabled: true,
        metricsEnabled: true,
        accessLogDestination: new apigateway.LogGroupLogDestination(this.accessLog),
        accessLogFormat: apigateway.AccessLogFormat.custom(ACCESS_LOG_FORMAT),
      },
      ...(this.origins.length > 0
        ? {
            defaultCorsPreflightOptions: {
              allowOrigins: [...this.origins],
              allowMethods: [...CORS_ALLOW_METHODS],
              allowHeaders: [...CORS_ALLOW_HEADERS],
              exposeHeaders: [...CORS_EXPOSE_HEADERS],
              maxAge: Duration.seconds(CORS_MAX_AGE_SECONDS),
            },
          }
        : {}),
    });
    // The URL is the stack's `ApiUrl` output (lib/api-stack.ts), without a second, slashed copy.
    this.api.node.tryRemoveChild('Endpoint');
    addErrorModelResponses(this.api, this.origins);
    this.audiences = Stack.of(this).toJsonString(props.clients.map((c) => c.userPoolClientId));
    this.authorizer = new apigateway.CognitoUserPoolsAuthorizer(this, 'Cognito', {
      cognitoUserPools: [props.userPool],
      identitySource: apigateway.IdentitySource.header('Authorization'),
    });

    acknowledge(
      this.api,
      'AwsSolutions-APIG2',
      'Each handler validates its request with the zod schema of the route table and answers 4xx naming the field; a second, JSON-Schema copy in API Gateway would drift.',
    );
    if (props.firewall) {
      this.firewall = new ApiFirewall(this, 'Firewall', {
        stageArn: this.api.deploymentStage.stageArn,
        ratePer5Minutes: props.firewall.ratePer5Minutes,
      });
    } else {
      this.firewall = undefined;
      acknowledge(
        this.api.deploymentStage,
        'AwsSolutions-APIG3',
        'The WAF is off by configuration (waf=false in cdk.json): stage throttling, the Cognito authorizer and per-user rate limits and quotas apply.',
      );
    }
    acknowledge(
      this.api.deploymentStage,
      'AwsSolutions-APIG6',
      'Execution logs (one log group per stage, kept forever by default) are off: the stage writes JSON access logs and the functions log every request with Powertools.',
    );
    const role = this.api.node.tryFindChild('CloudWatchRole');
    if (role) {
      acknowledge(
        role,
        'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
        "API Gateway's account-wide logging role uses the AWS managed policy made for it; API Gateway writes only log groups it creates or is given.",
      );
    }
  }

  /**
   * The stage's base URL without a trailing slash, `https://<id>.execute-api.<region>.amazonaws.com/v1`,
   * so that `$URL/api/...` is a route's URL.
   */
  get url(): string {
    const stack = Stack.of(this);
    return Fn.join('', [
      'https://',
      this.api.restApiId,
      '.execute-api.',
      stack.region,
      '.',
      stack.urlSuffix,
      '/',
      this.api.deploymentStage.stageName,
    ]);
  }

  /**
   * Routes `method path` (API Gateway path syntax) to a function, which is given the accepted
   * app clients and CORS origins the request lifecycle reads. Every route requires a valid ID
   * token unless `public` is set.
   */
  addRoute(
    method: string,
    path: string,
    fn: GroundworkFunction,
    options: RouteOptions = {},
  ): apigateway.Method {
    if (!this.configured.has(fn)) {
      fn.addEnvironment('TOKEN_AUDIENCES', this.audiences);
      fn.addEnvironment('CORS_ORIGINS', JSON.stringify(this.origins));
      this.configured.add(fn);
    }
    const kind = options.stream ? `stream:${options.stream.timeout.toSeconds()}` : 'buffered';
    const key = `${fn.node.addr}:${kind}`;
    let integration = this.integrations.get(key);
    if (!integration) {
      integration = new apigateway.LambdaIntegration(fn.function, {
        proxy: true,
        // One invoke permission per function for the whole API, not two per method: a function
        // serving 15 routes would otherwise near Lambda's 20 KB resource-policy limit.
        scopePermissionToMethod: false,
        ...(options.stream
          ? {
              responseTransferMode: apigateway.ResponseTransferMode.STREAM,
              timeout: options.stream.timeout,
            }
          : { timeout: BUFFERED_INTEGRATION_TIMEOUT }),
      });
      this.integrations.set(key, integration);
    }
    const created = this.api.root.resourceForPath(path).addMethod(
      method,
      integration,
      options.public
        ? { authorizationType: apigateway.AuthorizationType.NONE }
        : {
            authorizer: this.authorizer,
            authorizationType: apigateway.AuthorizationType.COGNITO,
          },
    );
    if (options.public) {
      acknowledge(
        created,
        'AwsSolutions-APIG4',
        `${method} ${path} is public by design: a liveness probe that reads nothing and returns {"status":"ok"}.`,
      );
      acknowledge(
        created,
        'AwsSolutions-COG4',
        `${method} ${path} is public by design: a liveness probe that reads nothing and returns {"status":"ok"}.`,
      );
    }
    this.methods.set(`${method} ${path}`, created);
    return created;
  }
}
