/**
 * GroundworkHttpApi: an API Gateway HTTP API whose routes all require a Cognito ID token (JWT
 * authorizer, audience = the app client) unless added as public, with CORS from configuration,
 * stage throttling and JSON access logs. Handlers read the verified claims from
 * `requestContext.authorizer.jwt.claims`.
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpUserPoolAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type * as cognito from 'aws-cdk-lib/aws-cognito';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import {
  CORS_ALLOW_HEADERS,
  CORS_EXPOSE_HEADERS,
  CORS_MAX_AGE_SECONDS,
  DEFAULT_CORS_ORIGINS,
} from '../../lambdas/http/cors';
import { acknowledge } from '../nag';
import type { GroundworkFunction } from './groundwork-function';

/** Steady-state and burst request limits of the stage. */
export interface StageThrottle {
  readonly rateLimit: number;
  readonly burstLimit: number;
}

export interface GroundworkHttpApiProps {
  /** The pool whose ID tokens are accepted. */
  readonly userPool: cognito.IUserPool;
  /** The app client: tokens must carry its id as audience. */
  readonly client: cognito.IUserPoolClient;
  /** Browser origins allowed by CORS; empty: no CORS configuration. @default [] */
  readonly corsOrigins?: readonly string[];
  /** @default { rateLimit: 50, burstLimit: 100 } */
  readonly throttle?: StageThrottle;
  /** Retention of the access log. @default logs.RetentionDays.ONE_MONTH */
  readonly logRetention?: logs.RetentionDays;
}

/** Rate-limit headers the handlers set, readable by browser code. */

/** The access log line: one JSON object per request. */
const ACCESS_LOG_FORMAT = JSON.stringify({
  requestId: '$context.requestId',
  ip: '$context.identity.sourceIp',
  requestTime: '$context.requestTime',
  method: '$context.httpMethod',
  routeKey: '$context.routeKey',
  status: '$context.status',
  protocol: '$context.protocol',
  responseLength: '$context.responseLength',
  latencyMs: '$context.responseLatency',
  integrationLatencyMs: '$context.integration.latency',
  integrationError: '$context.integrationErrorMessage',
  authorizerError: '$context.authorizer.error',
  userId: '$context.authorizer.claims.sub',
});

export class GroundworkHttpApi extends Construct {
  readonly api: apigwv2.HttpApi;
  readonly stage: apigwv2.HttpStage;
  readonly authorizer: HttpUserPoolAuthorizer;
  readonly accessLog: logs.LogGroup;
  private readonly integrations = new Map<GroundworkFunction, HttpLambdaIntegration>();

  constructor(scope: Construct, id: string, props: GroundworkHttpApiProps) {
    super(scope, id);
    const origins = props.corsOrigins ?? DEFAULT_CORS_ORIGINS;
    this.authorizer = new HttpUserPoolAuthorizer('Cognito', props.userPool, {
      userPoolClients: [props.client],
      identitySource: ['$request.header.Authorization'],
    });
    this.api = new apigwv2.HttpApi(this, 'Api', {
      description: 'Groundwork: search and answers over your documents',
      createDefaultStage: false,
      defaultAuthorizer: this.authorizer,
      ...(origins.length > 0
        ? {
            corsPreflight: {
              allowOrigins: [...origins],
              allowMethods: [
                apigwv2.CorsHttpMethod.GET,
                apigwv2.CorsHttpMethod.POST,
                apigwv2.CorsHttpMethod.DELETE,
              ],
              allowHeaders: [...CORS_ALLOW_HEADERS],
              exposeHeaders: [...CORS_EXPOSE_HEADERS],
              maxAge: Duration.seconds(CORS_MAX_AGE_SECONDS),
            },
          }
        : {}),
    });
    this.accessLog = new logs.LogGroup(this, 'AccessLog', {
      retention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.stage = this.api.addStage('Stage', {
      stageName: '$default',
      autoDeploy: true,
      throttle: props.throttle ?? { rateLimit: 50, burstLimit: 100 },
      detailedMetricsEnabled: true,
      accessLogSettings: {
        destination: new apigwv2.LogGroupLogDestination(this.accessLog),
        format: apigateway.AccessLogFormat.custom(ACCESS_LOG_FORMAT),
      },
    });
  }

  /** The stage's base URL, `https://<id>.execute-api.<region>.amazonaws.com/`. */
  get url(): string {
    return this.stage.url;
  }

  /**
   * Routes `method path` to a function. Every route requires a valid ID token unless `public`
   * is set (then the handler must not need an identity, e.g. GET /api/health).
   */
  addRoute(
    method: apigwv2.HttpMethod,
    path: string,
    fn: GroundworkFunction,
    options: { public?: boolean } = {},
  ): apigwv2.HttpRoute {
    let integration = this.integrations.get(fn);
    if (!integration) {
      integration = new HttpLambdaIntegration(`${fn.node.id}Integration`, fn.function);
      this.integrations.set(fn, integration);
    }
    const [route] = this.api.addRoutes({
      path,
      methods: [method],
      integration,
      ...(options.public ? { authorizer: new apigwv2.HttpNoneAuthorizer() } : {}),
    });
    if (!route) throw new Error(`no route created for ${method} ${path}`);
    if (options.public) {
      acknowledge(
        route,
        'AwsSolutions-APIG4',
        `${method} ${path} is public by design: a liveness probe that reads nothing and returns {"status":"ok"}.`,
      );
    }
    return route;
  }
}
