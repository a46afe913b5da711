/**
 * StreamingAnswerApi: POST /api/rag/answer as Server-Sent Events, through an API Gateway REST API whose
 * Lambda proxy integration streams (`responseTransferMode: STREAM`: the function is invoked with
 * InvokeWithResponseStream and its output reaches the client as it is written). HTTP APIs buffer
 * responses, hence a REST API for this one route. Its Cognito authorizer checks the ID token
 * like the HTTP API's JWT authorizer does (the function reads the claims from
 * `requestContext.authorizer.claims`; the authorizer does not check the token's audience, so the
 * function does, against `TOKEN_AUDIENCES`); CORS, stage throttling, JSON access logs and tracing
 * as on the HTTP API. API Gateway's own rejections (the authorizer's 401, an unknown route,
 * throttling, a WAF block) carry the error model (error-model-responses.ts); an optional WAF web
 * ACL guards the stage (api-firewall.ts).
 *
 * Access logs of a REST API need the region's API Gateway CloudWatch Logs role
 * (AWS::ApiGateway::Account): created here unless `cloudWatchRole` is false, for an account that
 * manages it elsewhere. The role and the account setting are retained when the stack is deleted
 * (another API of the account may depend on them).
 */
import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
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
import { ApiFirewall } from './api-firewall';
import { addErrorModelResponses } from './error-model-responses';
import type { GroundworkFunction } from './groundwork-function';
import type { StageThrottle } from './groundwork-http-api';

export interface StreamingAnswerApiProps {
  /** The streaming function (lambdas/rag-answer/stream.ts). */
  readonly handler: GroundworkFunction;
  /**
   * The POST routes the function streams (API Gateway path syntax), from the route table's
   * streaming routes; POST /api/rag/answer always. @default ['/api/rag/answer']
   */
  readonly paths?: readonly string[];
  /** The pool whose ID tokens are accepted. */
  readonly userPool: cognito.IUserPool;
  /** Browser origins allowed by CORS; empty: no CORS. @default [] */
  readonly corsOrigins?: readonly string[];
  /** @default { rateLimit: 50, burstLimit: 100 } */
  readonly throttle?: StageThrottle;
  /** Retention of the access log. @default logs.RetentionDays.ONE_MONTH */
  readonly logRetention?: logs.RetentionDays;
  /**
   * The integration's timeout: streamed responses may run up to 15 minutes, and the function's
   * own timeout should not be longer. @default Duration.minutes(2)
   */
  readonly timeout?: Duration;
  /** The app clients whose ID tokens the function accepts (`aud`), as `TOKEN_AUDIENCES`. */
  readonly clients: readonly cognito.IUserPoolClient[];
  /**
   * Create the region's API Gateway CloudWatch Logs role that access logs need; false when the
   * account already has one. @default true
   */
  readonly cloudWatchRole?: boolean;
  /** A WAF web ACL on the stage, with this per-IP limit per 5 minutes; unset: no WAF. @default - none */
  readonly firewall?: { readonly ratePer5Minutes: number };
}

/** The streamed answer's path (lambdas/http/api-routes.ts, route `answer`). */
const ANSWER_PATH = '/api/rag/answer';

export class StreamingAnswerApi extends Construct {
  readonly api: apigateway.RestApi;
  readonly accessLog: logs.LogGroup;
  /** POST /api/rag/answer. */
  readonly method: apigateway.Method;
  /** Every streamed route's method, by path. */
  readonly methods: Readonly<Record<string, apigateway.Method>>;
  readonly firewall: ApiFirewall | undefined;

  constructor(scope: Construct, id: string, props: StreamingAnswerApiProps) {
    super(scope, id);
    const origins = props.corsOrigins ?? DEFAULT_CORS_ORIGINS;
    const throttle = props.throttle ?? { rateLimit: 50, burstLimit: 100 };
    this.accessLog = new logs.LogGroup(this, 'AccessLog', {
      retention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.api = new apigateway.RestApi(this, 'Api', {
      description: 'Groundwork: streamed answers (Server-Sent Events)',
      endpointTypes: [apigateway.EndpointType.REGIONAL],
      ...((props.cloudWatchRole ?? true)
        ? { cloudWatchRole: true, cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN }
        : { cloudWatchRole: false }),
      deployOptions: {
        stageName: 'stream',
        throttlingRateLimit: throttle.rateLimit,
        throttlingBurstLimit: throttle.burstLimit,
        tracingEnabled: true,
        metricsEnabled: true,
        accessLogDestination: new apigateway.LogGroupLogDestination(this.accessLog),
        accessLogFormat: apigateway.AccessLogFormat.jsonWithStandardFields(),
      },
      ...(origins.length > 0
        ? {
            defaultCorsPreflightOptions: {
              allowOrigins: [...origins],
              allowMethods: ['POST'],
              allowHeaders: [...CORS_ALLOW_HEADERS],
              exposeHeaders: [...CORS_EXPOSE_HEADERS],
              maxAge: Duration.seconds(CORS_MAX_AGE_SECONDS),
            },
          }
        : {}),
    });
    addErrorModelResponses(this.api, origins.length === 1 ? origins[0] : undefined);
    props.handler.addEnvironment(
      'TOKEN_AUDIENCES',
      Stack.of(this).toJsonString(props.clients.map((c) => c.userPoolClientId)),
    );
    const authorizer = new apigateway.CognitoUserPoolsAuthorizer(this, 'Cognito', {
      cognitoUserPools: [props.userPool],
      identitySource: apigateway.IdentitySource.header('Authorization'),
    });
    const integration = new apigateway.LambdaIntegration(props.handler.function, {
      proxy: true,
      responseTransferMode: apigateway.ResponseTransferMode.STREAM,
      timeout: props.timeout ?? Duration.minutes(2),
    });
    const methods: Record<string, apigateway.Method> = {};
    for (const path of new Set([ANSWER_PATH, ...(props.paths ?? [])])) {
      methods[path] = this.api.root.resourceForPath(path).addMethod('POST', integration, {
        authorizer,
        authorizationType: apigateway.AuthorizationType.COGNITO,
      });
    }
    this.methods = methods;
    this.method = methods[ANSWER_PATH]!;

    acknowledge(
      this.api,
      'AwsSolutions-APIG2',
      'The handler validates the body with the same zod schema as the buffered POST /api/rag/answer and answers 422 naming the field; a second, JSON-Schema copy in API Gateway would drift.',
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
      'Execution logs (one log group per stage, kept forever by default) are off: the stage writes JSON access logs and the function logs every request with Powertools.',
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

  /** The streaming endpoint, `https://<id>.execute-api.<region>.amazonaws.com/stream/api/rag/answer`. */
  get url(): string {
    return this.api.urlForPath(ANSWER_PATH);
  }
}
