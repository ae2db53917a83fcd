/**
 * RateLimiter backed by one DynamoDB table, for AWS Lambda: many instances run at once, so the
 * counter has to live outside the process. Each request is ONE atomic `UpdateItem` on the item
 * `pk = "<key>#<windowStartMs>"`:
 *
 *   ADD #count :one                                   -- atomic increment, creates the item if missing
 *   SET #expiresAt = if_not_exists(#expiresAt, :exp)  -- DynamoDB TTL attribute (Unix seconds)
 *
 * with `ReturnValues: UPDATED_NEW`, so the new count comes back from the same call; there is no
 * read-then-write race between instances. Items of past windows are never read again (the window
 * start is part of the key); TTL only keeps the table from growing. DynamoDB deletes expired items
 * lazily (typically within a few days), which is harmless for the same reason.
 *
 * Failure policy: FAIL OPEN. If DynamoDB is unreachable, throttles or answers something unusable,
 * the request is allowed (remaining = limit) and the error is passed to `onError` so the caller can
 * log it. The limiter protects ingestion from abusive clients; an outage of the limiter's store
 * must not turn into an outage of ingestion itself. The client's own retry and timeout settings
 * (shared/aws/dynamodb.ts LeanDynamoDbClient: maxAttempts, connect and request timeouts) bound how long a failing call takes before that happens.
 */
import type { DynamoApi } from '../aws/dynamodb.js';
import {
  assertValidLimit,
  decide,
  RATE_LIMIT_TABLE_KEYS,
  type RateLimitDecision,
  type RateLimiter,
  windowOf,
} from './port.js';

export { RATE_LIMIT_TABLE_KEYS };

/** Counter attribute (`count` is a DynamoDB reserved word, hence the #count placeholder). */
const COUNT_ATTRIBUTE = 'count';

export const DEFAULT_TTL_GRACE_SECONDS = 60;

export interface DynamoDbRateLimiterOptions {
  client: DynamoApi;
  tableName: string;
  /** maxPerMinute. */
  limit: number;
  /** Clock used when `consume` gets no `nowMs`; Date.now by default. */
  now?: () => number;
  /** Seconds after the window end at which the item may expire (DynamoDB TTL). Default 60. */
  ttlGraceSeconds?: number;
  /** Called with every store error that made the limiter fail open (e.g. to log it). */
  onError?: (err: unknown) => void;
}

/** The partition key value of `key`'s counter in the window starting at `windowStartMs`. */
export function rateLimitItemKey(key: string, windowStartMs: number): string {
  return `${key}#${windowStartMs}`;
}

export class DynamoDbRateLimiter implements RateLimiter {
  private readonly client: DynamoApi;
  private readonly tableName: string;
  private readonly limit: number;
  private readonly now: () => number;
  private readonly ttlGraceSeconds: number;
  private readonly onError: ((err: unknown) => void) | undefined;

  constructor(options: DynamoDbRateLimiterOptions) {
    assertValidLimit(options.limit);
    const grace = options.ttlGraceSeconds ?? DEFAULT_TTL_GRACE_SECONDS;
    if (!Number.isSafeInteger(grace) || grace < 0) {
      throw new RangeError(`ttlGraceSeconds must be a non-negative integer, got ${String(grace)}`);
    }
    if (options.tableName === '') throw new RangeError('tableName must not be empty');
    this.client = options.client;
    this.tableName = options.tableName;
    this.limit = options.limit;
    this.now = options.now ?? Date.now;
    this.ttlGraceSeconds = grace;
    this.onError = options.onError;
  }

  async consume(key: string, nowMs: number = this.now()): Promise<RateLimitDecision> {
    const { start, end } = windowOf(nowMs);
    const expiresAt = Math.ceil(end / 1000) + this.ttlGraceSeconds;
    try {
      const result = await this.client.updateItem({
        TableName: this.tableName,
        Key: { [RATE_LIMIT_TABLE_KEYS.partitionKey]: { S: rateLimitItemKey(key, start) } },
        UpdateExpression: 'ADD #count :one SET #expiresAt = if_not_exists(#expiresAt, :exp)',
        ExpressionAttributeNames: { '#count': COUNT_ATTRIBUTE, '#expiresAt': RATE_LIMIT_TABLE_KEYS.ttlAttribute },
        ExpressionAttributeValues: { ':one': { N: '1' }, ':exp': { N: String(expiresAt) } },
        ReturnValues: 'UPDATED_NEW',
      });
      const raw = result.Attributes?.[COUNT_ATTRIBUTE]?.N;
      const count = raw === undefined ? Number.NaN : Number(raw);
      if (!Number.isSafeInteger(count) || count < 1) {
        throw new Error(`rate-limit UpdateItem returned no usable ${COUNT_ATTRIBUTE} (got ${String(raw)})`);
      }
      return decide(count, this.limit, nowMs);
    } catch (err) {
      this.report(err);
      // Fail open: same window arithmetic as a first request, i.e. allowed with remaining = limit.
      return decide(0, this.limit, nowMs);
    }
  }

  private report(err: unknown): void {
    try {
      this.onError?.(err);
    } catch {
      // A throwing error callback must not undo failing open.
    }
  }
}
