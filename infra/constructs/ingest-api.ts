/**
 * The ingest API: the audit API Lambda behind an API Gateway HTTP API, with the DynamoDB tables that
 * hold its per-IP rate-limit counters and its idempotency records. Accepted events go to the queue of
 * every destination that takes audit events (the queues the edge feeds are not its business). The
 * stage writes a JSON access log and may be throttled; the function's concurrency may be reserved
 * (infra/api-limits.ts).
 */
import { CfnOutput, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import {
  HttpApi,
  HttpMethod,
  HttpStage,
  LogGroupLogDestination,
  PayloadFormatVersion,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { AttributeType, BillingMode, Table } from 'aws-cdk-lib/aws-dynamodb';
import { Grant } from 'aws-cdk-lib/aws-iam';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import {
  AUDIT_EVENT_PATH,
  CLAIM_CHECK_PREFIX,
  ENTRIES,
  IDEMPOTENCY_TABLE_KEYS,
  LAMBDA_ENV,
  RATE_LIMIT_TABLE_KEYS,
  TEST_CONNECTION_PATH,
} from '../../functions/contract.js';
import type { StageThrottle } from '../api-limits.js';
import { acknowledgeNag } from './acknowledge.js';
import { acknowledgeClaimCheckWildcard } from './storage.js';
import { SvcFunction } from './svc-function.js';

/** The audit Lambda's entry, relative to the repository root. */
export const AUDIT_ENTRY = ENTRIES.audit;

/** Routes of the audit API; OPTIONS is the CORS preflight, which the spec allows on either path. */
export const AUDIT_ROUTES: ReadonlyArray<{ path: string; method: HttpMethod }> = [
  { path: AUDIT_EVENT_PATH, method: HttpMethod.POST },
  { path: AUDIT_EVENT_PATH, method: HttpMethod.OPTIONS },
  { path: TEST_CONNECTION_PATH, method: HttpMethod.GET },
  { path: TEST_CONNECTION_PATH, method: HttpMethod.OPTIONS },
];

/**
 * The fields of the stage's access log, one JSON object per request: who (address, user agent),
 * what (method, path without its query string, the matched route), the outcome (status, the
 * integration's status and error, the gateway's own error) and how long. Nothing that can hold a
 * credential: no header but the user agent, no query string, no body.
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-logging-variables.html
 */
export const ACCESS_LOG_FIELDS = {
  requestId: '$context.requestId',
  ip: '$context.identity.sourceIp',
  requestTime: '$context.requestTime',
  httpMethod: '$context.httpMethod',
  path: '$context.path',
  routeKey: '$context.routeKey',
  protocol: '$context.protocol',
  status: '$context.status',
  responseLength: '$context.responseLength',
  responseLatency: '$context.responseLatency',
  integrationStatus: '$context.integrationStatus',
  integrationLatency: '$context.integrationLatency',
  integrationError: '$context.integrationErrorMessage',
  errorMessage: '$context.error.message',
  errorType: '$context.error.responseType',
  userAgent: '$context.identity.userAgent',
} as const;

/** Retention of the access log (as the functions' logs). */
export const ACCESS_LOG_RETENTION = RetentionDays.ONE_MONTH;

export interface IngestApiProps {
  /** The queue of each destination that takes audit events, by destination name; every accepted event goes to all. */
  queues: Readonly<Record<string, IQueue>>;
  /** Where the queue puts claim checks of large events. */
  bucket: IBucket;
  /** Path of the resolved config document (shared/config/resolved.ts), bundled into the function. */
  configDocument: string;
  /** Create the idempotency table (one item per eventId, expired by TTL) and give it to the function. */
  idempotency: boolean;
  /** `auditEvents.apiToken` is set: the function refuses requests without it (else the API is open, and cdk-nag says so). */
  tokenRequired: boolean;
  /** Throttling of the stage; none: only the account's quotas apply. */
  throttle?: StageThrottle | undefined;
  /** Reserved concurrency of the audit function; none: it scales within the account's unreserved pool. */
  reservedConcurrency?: number | undefined;
}

export class IngestApi extends Construct {
  readonly table: Table;
  readonly idempotencyTable: Table | undefined;
  readonly handler: SvcFunction;
  readonly api: HttpApi;
  readonly stage: HttpStage;
  readonly accessLogs: LogGroup;

  constructor(scope: Construct, id: string, props: IngestApiProps) {
    super(scope, id);
    this.table = new Table(this, 'RateLimitTable', {
      billingMode: BillingMode.PAY_PER_REQUEST,
      partitionKey: { name: RATE_LIMIT_TABLE_KEYS.partitionKey, type: AttributeType.STRING },
      timeToLiveAttribute: RATE_LIMIT_TABLE_KEYS.ttlAttribute,
      // One-minute counters: nothing worth keeping.
      removalPolicy: RemovalPolicy.DESTROY,
    });
    acknowledgeNag(
      this.table,
      'DDB3',
      'Rate-limit counters live one minute (TTL): a point-in-time restore would bring back nothing worth having',
    );

    this.idempotencyTable = props.idempotency
      ? new Table(this, 'IdempotencyTable', {
          billingMode: BillingMode.PAY_PER_REQUEST,
          partitionKey: { name: IDEMPOTENCY_TABLE_KEYS.partitionKey, type: AttributeType.STRING },
          timeToLiveAttribute: IDEMPOTENCY_TABLE_KEYS.ttlAttribute,
          // Records expire after the idempotency window anyway.
          removalPolicy: RemovalPolicy.DESTROY,
        })
      : undefined;
    if (this.idempotencyTable)
      acknowledgeNag(
        this.idempotencyTable,
        'DDB3',
        'Idempotency records expire after windowSeconds (TTL); losing them only lets a retried event be queued once more, which the writers drop by its id',
      );

    const queues = Object.entries(props.queues);
    const environment: Record<string, string> = {
      [LAMBDA_ENV.eventQueueUrls]: Stack.of(this).toJsonString(
        Object.fromEntries(queues.map(([name, queue]) => [name, queue.queueUrl])),
      ),
      [LAMBDA_ENV.rateLimitTable]: this.table.tableName,
      [LAMBDA_ENV.claimCheckBucket]: props.bucket.bucketName,
      ...(this.idempotencyTable ? { [LAMBDA_ENV.idempotencyTable]: this.idempotencyTable.tableName } : {}),
    };
    this.handler = new SvcFunction(this, 'AuditFunction', {
      entry: AUDIT_ENTRY,
      configDocument: props.configDocument,
      environment,
      ...(props.reservedConcurrency === undefined ? {} : { reservedConcurrentExecutions: props.reservedConcurrency }),
    });
    // Exactly the calls the function makes (shared/ratelimit/dynamodb.ts, shared/idempotency/dynamodb.ts,
    // shared/queue/sqs.ts: SendMessageBatch is authorised by sqs:SendMessage, shared/queue/claim-check.ts).
    // The sender's best-effort delete of an unsent claim check is not granted: the lifecycle rule expires it.
    Grant.addToPrincipal({
      grantee: this.handler,
      actions: ['dynamodb:UpdateItem'],
      resourceArns: [this.table.tableArn],
    });
    if (this.idempotencyTable) {
      Grant.addToPrincipal({
        grantee: this.handler,
        actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:DeleteItem'],
        resourceArns: [this.idempotencyTable.tableArn],
      });
    }
    if (queues.length > 0)
      Grant.addToPrincipal({
        grantee: this.handler,
        actions: ['sqs:SendMessage'],
        resourceArns: queues.map(([, queue]) => queue.queueArn),
      });
    Grant.addToPrincipal({
      grantee: this.handler,
      actions: ['s3:PutObject'],
      resourceArns: [props.bucket.arnForObjects(`${CLAIM_CHECK_PREFIX}*`)],
    });
    acknowledgeClaimCheckWildcard(this.handler.executionRole, props.bucket);

    // No API Gateway CORS configuration (corsPreflight) on purpose: the function answers CORS itself
    // (shared/audit/cors.ts), because the allowed origins come from the Svc config and the same handler
    // serves local mode's gateway too. With corsPreflight set, API Gateway would answer preflights
    // itself and the OPTIONS routes would never reach the function.
    // The default stage ($default) serves the routes at the API's root URL, without a stage prefix.
    // The stage is made here rather than by HttpApi (createDefaultStage), which takes no stage
    // options; the same construct id keeps the logical id of the stage earlier stacks created.
    this.api = new HttpApi(this, 'HttpApi', { description: 'Svc audit event API', createDefaultStage: false });
    this.accessLogs = new LogGroup(this, 'AccessLogs', { retention: ACCESS_LOG_RETENTION });
    this.stage = new HttpStage(this.api, 'DefaultStage', {
      httpApi: this.api,
      autoDeploy: true,
      throttle: props.throttle,
      accessLogSettings: {
        destination: new LogGroupLogDestination(this.accessLogs),
        format: AccessLogFormat.custom(JSON.stringify(ACCESS_LOG_FIELDS)),
      },
    });
    const integration = new HttpLambdaIntegration('AuditIntegration', this.handler, {
      payloadFormatVersion: PayloadFormatVersion.VERSION_2_0,
    });
    for (const { path, method } of AUDIT_ROUTES) {
      const [route] = this.api.addRoutes({ path, methods: [method], integration });
      if (!route) continue;
      // A preflight never carries credentials (the Fetch standard), so it cannot require the token.
      if (method === HttpMethod.OPTIONS)
        acknowledgeNag(
          route,
          'APIG4',
          'CORS preflight: browsers send it without credentials, so it cannot require the token; the function answers it from the CORS config alone',
        );
      else if (props.tokenRequired)
        acknowledgeNag(
          route,
          'APIG4',
          "The function authorizes every request by the bearer token Svc.auditEvents.apiToken (the audit client sends a static token, which none of API Gateway's authorizers checks without a second function)",
        );
    }

    new CfnOutput(this, 'ApiUrl', { description: 'Base URL of the audit API', value: this.api.apiEndpoint });
    new CfnOutput(this, 'AuditEventUrl', {
      description: 'URL for the audit client',
      value: `${this.api.apiEndpoint}${AUDIT_EVENT_PATH}`,
    });
  }
}
