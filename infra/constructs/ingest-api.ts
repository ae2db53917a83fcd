/**
 * The ingest API: the audit API Lambda behind an API Gateway HTTP API, with the DynamoDB tables that
 * hold its per-IP rate-limit counters and its idempotency records. Accepted events go to the queue of
 * every destination that takes audit events (the queues the edge feeds are not its business).
 */
import { CfnOutput, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { HttpApi, HttpMethod, PayloadFormatVersion } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { AttributeType, BillingMode, Table } from 'aws-cdk-lib/aws-dynamodb';
import { Grant } from 'aws-cdk-lib/aws-iam';
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

export interface IngestApiProps {
  /** The queue of each destination that takes audit events, by destination name; every accepted event goes to all. */
  queues: Readonly<Record<string, IQueue>>;
  /** Where the queue puts claim checks of large events. */
  bucket: IBucket;
  /** Path of the resolved config document (shared/config/resolved.ts), bundled into the function. */
  configDocument: string;
  /** Create the idempotency table (one item per eventId, expired by TTL) and give it to the function. */
  idempotency: boolean;
}

export class IngestApi extends Construct {
  readonly table: Table;
  readonly idempotencyTable: Table | undefined;
  readonly handler: SvcFunction;
  readonly api: HttpApi;

  constructor(scope: Construct, id: string, props: IngestApiProps) {
    super(scope, id);
    this.table = new Table(this, 'RateLimitTable', {
      billingMode: BillingMode.PAY_PER_REQUEST,
      partitionKey: { name: RATE_LIMIT_TABLE_KEYS.partitionKey, type: AttributeType.STRING },
      timeToLiveAttribute: RATE_LIMIT_TABLE_KEYS.ttlAttribute,
      // One-minute counters: nothing worth keeping.
      removalPolicy: RemovalPolicy.DESTROY,
    });

    this.idempotencyTable = props.idempotency
      ? new Table(this, 'IdempotencyTable', {
          billingMode: BillingMode.PAY_PER_REQUEST,
          partitionKey: { name: IDEMPOTENCY_TABLE_KEYS.partitionKey, type: AttributeType.STRING },
          timeToLiveAttribute: IDEMPOTENCY_TABLE_KEYS.ttlAttribute,
          // Records expire after the idempotency window anyway.
          removalPolicy: RemovalPolicy.DESTROY,
        })
      : undefined;

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

    // No API Gateway CORS configuration (corsPreflight) on purpose: the function answers CORS itself
    // (shared/audit/cors.ts), because the allowed origins come from the Svc config and the same handler
    // serves local mode's gateway too. With corsPreflight set, API Gateway would answer preflights
    // itself and the OPTIONS routes would never reach the function.
    // The default stage ($default) serves the routes at the API's root URL, without a stage prefix.
    this.api = new HttpApi(this, 'HttpApi', { description: 'Svc audit event API', createDefaultStage: true });
    const integration = new HttpLambdaIntegration('AuditIntegration', this.handler, {
      payloadFormatVersion: PayloadFormatVersion.VERSION_2_0,
    });
    for (const { path, method } of AUDIT_ROUTES) this.api.addRoutes({ path, methods: [method], integration });

    new CfnOutput(this, 'ApiUrl', { description: 'Base URL of the audit API', value: this.api.apiEndpoint });
    new CfnOutput(this, 'AuditEventUrl', {
      description: 'URL for the audit client',
      value: `${this.api.apiEndpoint}${AUDIT_EVENT_PATH}`,
    });
  }
}
