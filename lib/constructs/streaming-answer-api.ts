/**
 * StreamingAnswerApi: POST /answer as Server-Sent Events, through an API Gateway REST API whose
 * Lambda proxy integration streams (`responseTransferMode: STREAM`: the function is invoked with
 * InvokeWithResponseStream and its output reaches the client as it is written). HTTP APIs buffer
 * responses, hence a REST API for this one route. Its Cognito authorizer checks the ID token
 * like the HTTP API's JWT authorizer does (the function reads the claims from
 * `requestContext.authorizer.claims`); CORS, stage throttling, JSON access logs and tracing as on
 * the HTTP API.
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import type * as cognito from 'aws-cdk-lib/aws-cognito';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { acknowledge } from '../nag';
import type { GroundworkFunction } from './groundwork-function';
import type { StageThrottle } from './groundwork-http-api';

export interface StreamingAnswerApiProps {
  /** The streaming function (lambdas/rag-answer/stream.ts). */
  readonly handler: GroundworkFunction;
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
}

/** Rate-limit headers the handler sets, readable by browser code. */
const EXPOSED_HEADERS = [
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'retry-after',
];

export class StreamingAnswerApi extends Construct {
  readonly api: apigateway.RestApi;
  readonly accessLog: logs.LogGroup;
  readonly method: apigateway.Method;

  constructor(scope: Construct, id: string, props: StreamingAnswerApiProps) {
    super(scope, id);
    const origins = props.corsOrigins ?? [];
    const throttle = props.throttle ?? { rateLimit: 50, burstLimit: 100 };
    this.accessLog = new logs.LogGroup(this, 'AccessLog', {
      retention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.api = new apigateway.RestApi(this, 'Api', {
      description: 'Groundwork: streamed answers (Server-Sent Events)',
      endpointTypes: [apigateway.EndpointType.REGIONAL],
      // Execution logs would need an account-wide CloudWatch role; access logs are enough here.
      cloudWatchRole: false,
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
              allowHeaders: ['authorization', 'content-type'],
              exposeHeaders: EXPOSED_HEADERS,
              maxAge: Duration.hours(1),
            },
          }
        : {}),
    });
    const authorizer = new apigateway.CognitoUserPoolsAuthorizer(this, 'Cognito', {
      cognitoUserPools: [props.userPool],
      identitySource: apigateway.IdentitySource.header('Authorization'),
    });
    this.method = this.api.root.addResource('answer').addMethod(
      'POST',
      new apigateway.LambdaIntegration(props.handler.function, {
        proxy: true,
        responseTransferMode: apigateway.ResponseTransferMode.STREAM,
        timeout: props.timeout ?? Duration.minutes(2),
      }),
      { authorizer, authorizationType: apigateway.AuthorizationType.COGNITO },
    );

    acknowledge(
      this.api,
      'AwsSolutions-APIG2',
      'The handler validates the body with the same zod schema as the buffered POST /answer and answers 422 naming the field; a second, JSON-Schema copy in API Gateway would drift.',
    );
    acknowledge(
      this.api.deploymentStage,
      'AwsSolutions-APIG3',
      'No WAF in front of the API by default (as for the HTTP API): stage throttling, the Cognito authorizer and per-user rate limits and quotas apply; attach a web ACL to the stage where required.',
    );
    acknowledge(
      this.api.deploymentStage,
      'AwsSolutions-APIG6',
      'Execution logging needs an account-wide API Gateway CloudWatch role; the stage writes JSON access logs and the function logs every request with Powertools.',
    );
  }

  /** The streaming endpoint, `https://<id>.execute-api.<region>.amazonaws.com/stream/answer`. */
  get url(): string {
    return this.api.urlForPath('/answer');
  }
}
