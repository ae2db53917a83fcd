/**
 * The RateLimiter contract against both adapters (in-memory and DynamoDB on dynalite, the local
 * stand-in for DynamoDB), plus the adapter-specific guarantees: the DynamoDB item's TTL attribute,
 * counters shared between limiter instances (= Lambda instances), failing open on store errors,
 * and the memory adapter's bounded map.
 */
import { type DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it, vi } from 'vitest';
import { DynamoDbRateLimiter, RATE_LIMIT_TABLE_KEYS, rateLimitItemKey } from '../../../shared/ratelimit/dynamodb.js';
import { MemoryRateLimiter } from '../../../shared/ratelimit/memory.js';
import { decide, WINDOW_MS, windowOf } from '../../../shared/ratelimit/port.js';
import { localDynamoClient, useDynalite } from '../../support/dynalite.js';
import { freePort } from '../../support/ports.js';
import { BASE_WINDOW_START, ManualClock, rateLimiterContract, uniqueKey } from './contract.js';

const TABLE = 'svc-ratelimit-test';

const running = useDynalite({ [TABLE]: RATE_LIMIT_TABLE_KEYS.partitionKey });

describe('port arithmetic', () => {
  it('windowOf gives [start, start + 60 s) aligned to epoch minutes', () => {
    expect(windowOf(BASE_WINDOW_START)).toEqual({ start: BASE_WINDOW_START, end: BASE_WINDOW_START + WINDOW_MS });
    expect(windowOf(BASE_WINDOW_START + 59_999)).toEqual({
      start: BASE_WINDOW_START,
      end: BASE_WINDOW_START + WINDOW_MS,
    });
    expect(windowOf(BASE_WINDOW_START + 60_000).start).toBe(BASE_WINDOW_START + WINDOW_MS);
    expect(windowOf(0)).toEqual({ start: 0, end: 60_000 });
  });

  it('decide allows counts up to the limit and reports the window end in seconds', () => {
    const now = BASE_WINDOW_START + 10_250;
    expect(decide(1, 3, now)).toEqual({
      allowed: true,
      limit: 3,
      remaining: 2,
      resetAt: BASE_WINDOW_START / 1000 + 60,
      retryAfterSeconds: 50,
    });
    expect(decide(3, 3, now)).toMatchObject({ allowed: true, remaining: 0 });
    expect(decide(4, 3, now)).toMatchObject({ allowed: false, remaining: 0 });
    expect(decide(0, 3, now)).toMatchObject({ allowed: true, remaining: 3 });
  });
});

rateLimiterContract('memory', (limit, clock) =>
  Promise.resolve(new MemoryRateLimiter({ limit, now: () => clock.now() })),
);

rateLimiterContract('DynamoDB (dynalite)', (limit, clock) =>
  Promise.resolve(new DynamoDbRateLimiter({ client: running().api, tableName: TABLE, limit, now: () => clock.now() })),
);

describe('MemoryRateLimiter', () => {
  it('sweeps entries of past windows, so a flood of distinct IPs cannot grow the map forever', async () => {
    const clock = new ManualClock(BASE_WINDOW_START);
    const limiter = new MemoryRateLimiter({ limit: 300, now: () => clock.now() });

    for (let i = 0; i < 5_000; i++) await limiter.consume(`10.0.${i >> 8}.${i & 255}`);
    expect(limiter.size).toBe(5_000);

    // The first request of the next window drops everything older.
    clock.ms += WINDOW_MS;
    await limiter.consume('192.0.2.1');
    expect(limiter.size).toBe(1);

    // Minute after minute of fresh IPs: the map never holds more than one window's keys.
    let largest = 0;
    for (let minute = 2; minute < 50; minute++) {
      clock.ms = BASE_WINDOW_START + minute * WINDOW_MS + 500;
      for (let i = 0; i < 200; i++) {
        await limiter.consume(`10.${minute}.0.${i}`);
        largest = Math.max(largest, limiter.size);
      }
    }
    expect(largest).toBe(200);
  });

  it('resets a key whose entry belongs to another window even before a sweep (clock going backwards)', async () => {
    const clock = new ManualClock(BASE_WINDOW_START + 5 * WINDOW_MS);
    const limiter = new MemoryRateLimiter({ limit: 1, now: () => clock.now() });
    expect((await limiter.consume('192.0.2.9')).allowed).toBe(true);
    expect((await limiter.consume('192.0.2.9')).allowed).toBe(false);
    clock.ms = BASE_WINDOW_START; // an earlier window (e.g. an explicit older nowMs)
    expect((await limiter.consume('192.0.2.9')).allowed).toBe(true);
  });
});

describe('DynamoDbRateLimiter', () => {
  async function getItem(client: DynamoDBClient, key: string, windowStart: number) {
    const { Item } = await client.send(
      new GetItemCommand({
        TableName: TABLE,
        Key: { [RATE_LIMIT_TABLE_KEYS.partitionKey]: { S: rateLimitItemKey(key, windowStart) } },
        ConsistentRead: true,
      }),
    );
    return Item;
  }

  it('stores one counter item per key and window, with expiresAt = window end + grace (Unix seconds)', async () => {
    const { client, api } = running();
    const clock = new ManualClock(BASE_WINDOW_START + 3 * WINDOW_MS + 15_000);
    const windowStart = BASE_WINDOW_START + 3 * WINDOW_MS;
    const windowEndSeconds = (windowStart + WINDOW_MS) / 1000;
    const ip = uniqueKey('203.0.113.99');

    const limiter = new DynamoDbRateLimiter({
      client: api,
      tableName: TABLE,
      limit: 10,
      now: () => clock.now(),
      ttlGraceSeconds: 90,
    });
    await limiter.consume(ip);
    clock.ms += 40_000;
    await limiter.consume(ip);

    const item = await getItem(client, ip, windowStart);
    expect(item?.[RATE_LIMIT_TABLE_KEYS.partitionKey]).toEqual({ S: `${ip}#${windowStart}` });
    expect(item?.count).toEqual({ N: '2' });
    expect(item?.[RATE_LIMIT_TABLE_KEYS.ttlAttribute]).toEqual({ N: String(windowEndSeconds + 90) });

    // Default grace: 60 s.
    const other = uniqueKey('203.0.113.98');
    await new DynamoDbRateLimiter({ client: api, tableName: TABLE, limit: 10, now: () => clock.now() }).consume(other);
    expect((await getItem(client, other, windowStart))?.[RATE_LIMIT_TABLE_KEYS.ttlAttribute]).toEqual({
      N: String(windowEndSeconds + 60),
    });
  });

  it('shares the counter between limiter instances (Lambda instances) on the same table', async () => {
    const clock = new ManualClock(BASE_WINDOW_START + 10_000);
    const instances = Array.from(
      { length: 5 },
      () => new DynamoDbRateLimiter({ client: running().api, tableName: TABLE, limit: 12, now: () => clock.now() }),
    );
    const ip = uniqueKey('203.0.113.77');

    // 30 concurrent requests, 6 through each instance.
    const decisions = await Promise.all(
      instances.flatMap((instance) => Array.from({ length: 6 }, () => instance.consume(ip))),
    );
    expect(decisions.filter((d) => d.allowed)).toHaveLength(12);
  });

  it('fails open on an unreachable endpoint: allowed with remaining = limit, error passed to onError', async () => {
    const port = await freePort(); // nothing listens here
    const client = localDynamoClient(`http://127.0.0.1:${port}`);
    try {
      const onError = vi.fn();
      const clock = new ManualClock(BASE_WINDOW_START + 20_500);
      const limiter = new DynamoDbRateLimiter({ client, tableName: TABLE, limit: 2, now: () => clock.now(), onError });

      for (let i = 0; i < 4; i++) {
        expect(await limiter.consume('192.0.2.200')).toEqual({
          allowed: true,
          limit: 2,
          remaining: 2,
          resetAt: BASE_WINDOW_START / 1000 + 60,
          retryAfterSeconds: 40,
        });
      }
      expect(onError).toHaveBeenCalledTimes(4);
      expect(onError.mock.calls[0]?.[0]).toBeInstanceOf(Error);
    } finally {
      client.destroy();
    }
  });

  it('fails open when the table does not exist, and even when onError throws', async () => {
    const errors: unknown[] = [];
    const limiter = new DynamoDbRateLimiter({
      client: running().api,
      tableName: 'no-such-table',
      limit: 1,
      onError: (err) => {
        errors.push(err);
        throw new Error('logger broke');
      },
    });
    expect(await limiter.consume('192.0.2.201')).toMatchObject({ allowed: true, remaining: 1 });
    expect(await limiter.consume('192.0.2.201')).toMatchObject({ allowed: true, remaining: 1 });
    expect(errors).toHaveLength(2);
    expect(errors[0]).toMatchObject({ name: 'ResourceNotFoundException' });
  });

  it('rejects bad options', () => {
    const client = running().api;
    expect(() => new DynamoDbRateLimiter({ client, tableName: TABLE, limit: 1, ttlGraceSeconds: -1 })).toThrow(
      RangeError,
    );
    expect(() => new DynamoDbRateLimiter({ client, tableName: TABLE, limit: 1, ttlGraceSeconds: 1.5 })).toThrow(
      RangeError,
    );
    expect(() => new DynamoDbRateLimiter({ client, tableName: '', limit: 1 })).toThrow(RangeError);
  });
});
