/**
 * The idempotency store for Lambda: one DynamoDB item per event id, shared by every instance of the
 * audit function. `claim` is one conditional PutItem of an IN_PROGRESS item, which succeeds only
 * when no live record exists (none, an expired one, or an abandoned claim); when it fails, one
 * consistent GetItem says whether the event is a duplicate or in progress. `complete` overwrites the
 * item as COMPLETED with the original receivedAt; DynamoDB TTL (`expiration`, Unix seconds) removes
 * it after the window. The design follows Powertools' DynamoDBPersistenceLayer.
 *
 * Failure policy: FAIL OPEN, like the rate limiter. When the table cannot be reached the event is
 * queued (a possible duplicate) rather than refused: losing nothing matters more than deduplicating.
 */
import { type AttributeValue, type DynamoApi, isConditionalCheckFailed } from '../aws/dynamodb.js';
import {
  assertValidWindow,
  CLAIM_TIMEOUT_MS,
  type Claim,
  IDEMPOTENCY_TABLE_KEYS,
  type IdempotencyStore,
} from './port.js';

export { IDEMPOTENCY_TABLE_KEYS };

const IN_PROGRESS = 'INPROGRESS';
const COMPLETED = 'COMPLETED';

export interface DynamoDbIdempotencyOptions {
  client: DynamoApi;
  tableName: string;
  windowSeconds: number;
  /** Called with every store error that made the store fail open. */
  onError?: (err: unknown) => void;
}

export class DynamoDbIdempotencyStore implements IdempotencyStore {
  constructor(private readonly options: DynamoDbIdempotencyOptions) {
    assertValidWindow(options.windowSeconds);
    if (options.tableName === '') throw new RangeError('tableName must not be empty');
  }

  private key(key: string) {
    return { [IDEMPOTENCY_TABLE_KEYS.partitionKey]: { S: key } };
  }

  /** The item of `key` in `status`, expiring (TTL) `windowSeconds` after `fromSeconds`. */
  private item(key: string, status: string, fromSeconds: number, more: Record<string, AttributeValue>) {
    return {
      ...this.key(key),
      status: { S: status },
      [IDEMPOTENCY_TABLE_KEYS.ttlAttribute]: { N: String(fromSeconds + this.options.windowSeconds) },
      ...more,
    };
  }

  async claim(key: string, nowMs: number): Promise<Claim> {
    const nowSeconds = Math.floor(nowMs / 1000);
    try {
      for (let attempt = 0; attempt < 2; attempt++) {
        try {
          await this.options.client.putItem({
            TableName: this.options.tableName,
            Item: this.item(key, IN_PROGRESS, nowSeconds, { claimExpiresAt: { N: String(nowMs + CLAIM_TIMEOUT_MS) } }),
            ConditionExpression:
              'attribute_not_exists(#id) OR #exp <= :now OR (#status = :inProgress AND claimExpiresAt <= :nowMs)',
            ExpressionAttributeNames: {
              '#id': IDEMPOTENCY_TABLE_KEYS.partitionKey,
              '#exp': IDEMPOTENCY_TABLE_KEYS.ttlAttribute,
              '#status': 'status',
            },
            ExpressionAttributeValues: {
              ':now': { N: String(nowSeconds) },
              ':inProgress': { S: IN_PROGRESS },
              ':nowMs': { N: String(nowMs) },
            },
          });
          return { status: 'claimed' };
        } catch (err) {
          if (!isConditionalCheckFailed(err)) throw err;
        }
        const found = await this.options.client.getItem({
          TableName: this.options.tableName,
          Key: this.key(key),
          ConsistentRead: true,
        });
        const item = found.Item;
        // Gone (or expired) between the two calls: claim again.
        if (!item || Number(item[IDEMPOTENCY_TABLE_KEYS.ttlAttribute]?.N ?? 0) <= nowSeconds) continue;
        if (item['status']?.S === COMPLETED)
          return { status: 'duplicate', receivedAt: item['receivedAt']?.S ?? new Date(nowMs).toISOString() };
        return { status: 'in-progress' };
      }
      return { status: 'in-progress' };
    } catch (err) {
      this.report(err);
      return { status: 'claimed' };
    }
  }

  async complete(key: string, receivedAt: string): Promise<void> {
    try {
      await this.options.client.putItem({
        TableName: this.options.tableName,
        Item: this.item(key, COMPLETED, Math.floor(Date.parse(receivedAt) / 1000), { receivedAt: { S: receivedAt } }),
      });
    } catch (err) {
      this.report(err);
    }
  }

  async release(key: string): Promise<void> {
    try {
      await this.options.client.deleteItem({
        TableName: this.options.tableName,
        Key: this.key(key),
        ConditionExpression: '#status = :inProgress',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':inProgress': { S: IN_PROGRESS } },
      });
    } catch (err) {
      if (!isConditionalCheckFailed(err)) this.report(err);
    }
  }

  private report(err: unknown): void {
    try {
      this.options.onError?.(err);
    } catch {
      // A throwing callback must not undo failing open.
    }
  }
}
