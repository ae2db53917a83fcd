/**
 * Lambda entry of the audit API (behind API Gateway HTTP API). Dependencies are built once per
 * container, at module scope: the bundled config, the logger, the shared DynamoDB rate limiter and
 * idempotency store, and the SQS queue. SQS and DynamoDB are reached through the lean JSON client
 * (shared/aws/), not the AWS SDK, whose import alone would cost the cold start ~90 ms.
 */
import { randomInt } from 'node:crypto';
import { makeAuditHandler } from '../../shared/audit/handler.js';
import { LeanDynamoDbClient } from '../../shared/aws/dynamodb.js';
import { LeanSqsClient } from '../../shared/aws/sqs.js';
import { DynamoDbIdempotencyStore } from '../../shared/idempotency/dynamodb.js';
import { FanOutEventQueue } from '../../shared/queue/fanout.js';
import { PointClock } from '../../shared/queue/point-clock.js';
import { SqsEventQueue } from '../../shared/queue/sqs.js';
import { DynamoDbRateLimiter } from '../../shared/ratelimit/dynamodb.js';
import { LAMBDA_ENV, queueUrls, requiredEnv } from '../lambda-env.js';
import { lambdaAws, lambdaRuntime, lazyClaimChecks } from '../lambda-runtime.js';

const { config, logger } = await lambdaRuntime('audit');
const settings = config.auditEvents;
if (settings.apiToken === '')
  logger.warn({}, 'Svc.auditEvents.apiToken is not set: the audit API accepts requests without a token');

// Region and the role's credentials from the environment Lambda gives (credentials read at each request).
const aws = lambdaAws();
// Short timeouts: a slow limiter store must not hold requests (the limiter fails open on errors).
const dynamo = new LeanDynamoDbClient({ ...aws, maxAttempts: 2, connectTimeoutMs: 1000, requestTimeoutMs: 1000 });
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
// One queue per destination (each with its own writer function); events go to all of them. One
// attempt per request: SqsEventQueue retries itself, per entry, with backoff (5 attempts), and
// counts it; short timeouts keep those attempts inside the function's 10 s.
const sqs = new LeanSqsClient({ ...aws, maxAttempts: 1, connectTimeoutMs: 1000, requestTimeoutMs: 1500 });
// The S3 client is loaded at the first event too large for SQS (rare for audit events), not at cold start.
const claimCheck = lazyClaimChecks(requiredEnv(LAMBDA_ENV.claimCheckBucket));
const queue = new FanOutEventQueue(
  Object.values(queueUrls()).map((queueUrl) => new SqsEventQueue({ client: sqs, queueUrl, claimCheck, log: logger })),
);

// Instances run side by side: a random counter start keeps their point times of one millisecond apart (§0.3).
export const handler = makeAuditHandler({
  settings,
  rateLimiter,
  idempotency,
  queue,
  clock: new PointClock(randomInt(1_000_000)),
  log: logger,
});
