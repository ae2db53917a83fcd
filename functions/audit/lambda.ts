/**
 * Lambda entry of the audit API (behind API Gateway HTTP API). Dependencies are built once per
 * container, at module scope: the bundled config, the logger, the shared DynamoDB rate limiter and
 * idempotency store, and the SQS queue.
 */
import { randomInt } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDbIdempotencyStore } from '../../shared/idempotency/dynamodb.js';
import { PointClock } from '../../shared/destinations/point-clock.js';
import { SQSClient } from '@aws-sdk/client-sqs';
import { FanOutEventQueue } from '../../shared/queue/fanout.js';
import { SqsEventQueue } from '../../shared/queue/sqs.js';
import { DynamoDbRateLimiter } from '../../shared/ratelimit/dynamodb.js';
import { LAMBDA_ENV, queueUrls, requiredEnv } from '../lambda-env.js';
import { lambdaRuntime, lazyClaimChecks } from '../lambda-runtime.js';
import { makeAuditHandler } from '../../shared/audit/handler.js';

const { config, logger } = await lambdaRuntime('audit');
const settings = config.auditEvents;
if (settings.apiToken === '') logger.warn({}, 'Svc.auditEvents.apiToken is not set: the audit API accepts requests without a token');

// Short timeouts: a slow limiter store must not hold requests (the limiter fails open on errors).
const dynamo = new DynamoDBClient({ maxAttempts: 2, requestHandler: { requestTimeout: 1000, connectionTimeout: 1000 } });
const rateLimiter = settings.rateLimit.enable
  ? new DynamoDbRateLimiter({
      client: dynamo,
      tableName: requiredEnv(LAMBDA_ENV.rateLimitTable),
      limit: settings.rateLimit.maxPerMinute,
      onError: (err) => logger.error({ err }, 'rate limit store failed; request let through'),
    })
  : null;
const idempotency = settings.idempotency.enable
  ? new DynamoDbIdempotencyStore({
      client: dynamo,
      tableName: requiredEnv(LAMBDA_ENV.idempotencyTable),
      windowSeconds: settings.idempotency.windowSeconds,
      onError: (err) => logger.error({ err }, 'idempotency store failed; event queued without deduplication'),
    })
  : null;
// One queue per destination (each with its own writer function); events go to all of them.
const sqs = new SQSClient({});
// The S3 client is loaded at the first event too large for SQS (rare for audit events), not at cold start.
const claimCheck = lazyClaimChecks(requiredEnv(LAMBDA_ENV.claimCheckBucket));
const queue = new FanOutEventQueue(Object.values(queueUrls()).map((queueUrl) => new SqsEventQueue({ client: sqs, queueUrl, claimCheck, log: logger })));

// Instances run side by side: a random counter start keeps their point times of one millisecond apart (§0.3).
export const handler = makeAuditHandler({ settings, rateLimiter, idempotency, queue, clock: new PointClock(randomInt(1_000_000)), log: logger });
