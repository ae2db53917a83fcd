/**
 * The IdempotencyStore contract against both adapters (the local log file, and DynamoDB on
 * dynalite, the local stand-in for DynamoDB), plus what each adapter adds: the local store's file,
 * its recovery of queued events, its memory bound; the DynamoDB item's TTL, the takeover of an
 * abandoned claim, and failing open.
 */
import { randomUUID } from 'node:crypto';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbIdempotencyStore, IDEMPOTENCY_TABLE_KEYS } from '../../../shared/idempotency/dynamodb.js';
import {
  IDEMPOTENCY_FILE,
  type LocalIdempotencyOptions,
  LocalIdempotencyStore,
  SYNC_INTERVAL_MS,
} from '../../../shared/idempotency/local.js';
import { CLAIM_TIMEOUT_MS } from '../../../shared/idempotency/port.js';
import { frame, scanRecords } from '../../../shared/queue/local/append-log.js';
import { localDynamoClient, useDynalite } from '../../support/dynalite.js';
import { silentLog } from '../../support/log.js';
import { freePort } from '../../support/ports.js';
import { mountTmpfs, type Tmpfs } from '../../support/tmpfs.js';
import { idempotencyContract, T0 } from './contract.js';

const TABLE = 'svc-idempotency-test';
const silent = silentLog;
const iso = (ms: number) => new Date(ms).toISOString();

const running = useDynalite({ [TABLE]: IDEMPOTENCY_TABLE_KEYS.partitionKey });

async function localStore(over: Partial<LocalIdempotencyOptions> = {}): Promise<LocalIdempotencyStore> {
  const store = new LocalIdempotencyStore({
    directory: mkdtempSync(join(tmpdir(), 'idem-')),
    windowSeconds: 3600,
    maxEntries: 1000,
    log: silent,
    now: () => T0,
    ...over,
  });
  await store.start();
  return store;
}

idempotencyContract('local', async (windowSeconds) => {
  const directory = mkdtempSync(join(tmpdir(), 'idem-'));
  const options = { directory, windowSeconds, maxEntries: 1000, log: silent, now: () => T0 };
  const store = new LocalIdempotencyStore(options);
  await store.start();
  let current = store;
  return {
    store,
    reopen: async () => {
      await store.stop();
      current = new LocalIdempotencyStore(options);
      await current.start();
      return current;
    },
    close: () => current.stop(),
  };
});

idempotencyContract('DynamoDB (dynalite)', (windowSeconds) => {
  const store = new DynamoDbIdempotencyStore({ client: running().api, tableName: TABLE, windowSeconds });
  return Promise.resolve({
    store,
    reopen: () =>
      Promise.resolve(new DynamoDbIdempotencyStore({ client: running().api, tableName: TABLE, windowSeconds })),
    close: () => Promise.resolve(),
  });
});

describe('LocalIdempotencyStore', () => {
  it('writes and syncs its records in the background, all of them by the time it stops', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'idem-'));
    const store = await localStore({ directory });
    const keys = [randomUUID(), randomUUID()];
    for (const key of keys) {
      await store.claim(key, T0);
      await store.complete(key, iso(T0), T0);
    }
    const file = join(directory, IDEMPOTENCY_FILE);
    await expect
      .poll(() => scanRecords(readFileSync(file)).payloads, { timeout: 3 * SYNC_INTERVAL_MS })
      .toEqual(keys.map((k) => `${k} ${T0}`));
    const late = randomUUID();
    await store.complete(late, iso(T0), T0);
    await store.stop();
    expect(scanRecords(readFileSync(file)).payloads).toContain(`${late} ${T0}`);
  });

  it('takes the events the queue found on disk at start as recorded, before it starts, and keeps them in its file', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'idem-'));
    const queued = [randomUUID(), randomUUID()];
    const store = new LocalIdempotencyStore({
      directory,
      windowSeconds: 3600,
      maxEntries: 1000,
      log: silent,
      now: () => T0,
    });
    // The queue calls this while it opens, before it deletes the events it delivered.
    store.recover([
      ...queued.map((key) => ({ key, receivedAtMs: T0 - 5000 })),
      { key: randomUUID(), receivedAtMs: T0 - 7_200_000 },
    ]);
    expect(scanRecords(readFileSync(join(directory, IDEMPOTENCY_FILE))).payloads).toEqual(
      queued.map((k) => `${k} ${T0 - 5000}`),
    );
    await store.start();
    expect(await store.claim(queued[0] ?? '', T0)).toEqual({ status: 'duplicate', receivedAt: iso(T0 - 5000) });
    await store.stop();
    const again = new LocalIdempotencyStore({
      directory,
      windowSeconds: 3600,
      maxEntries: 1000,
      log: silent,
      now: () => T0,
    });
    await again.start();
    expect((await again.claim(queued[1] ?? '', T0)).status).toBe('duplicate');
    await again.stop();
  });

  it('holds at most maxEntries records: the oldest are forgotten first', async () => {
    const store = await localStore({ maxEntries: 1000 });
    const keys = Array.from({ length: 1200 }, () => randomUUID());
    for (const [i, key] of keys.entries()) {
      await store.claim(key, T0 + i);
      await store.complete(key, iso(T0 + i), T0 + i);
    }
    expect(store.size).toBe(1000);
    expect((await store.claim(keys[0] ?? '', T0 + 2000)).status).toBe('claimed');
    expect((await store.claim(keys[1199] ?? '', T0 + 2000)).status).toBe('duplicate');
    await store.stop();
  });

  it('forgets by age of the last receipt: a key recorded again goes to the end, and the order holds over thousands of records', async () => {
    const store = await localStore({ maxEntries: 3 });
    const record = (key: string, ms: number) => store.complete(key, iso(ms), ms);
    await record('a', T0);
    await record('b', T0 + 1);
    await record('c', T0 + 2);
    // a again, later (as after its window): now the newest.
    await record('a', T0 + 3);
    await record('d', T0 + 4);
    const statuses = async (keys: string[], at: number) =>
      Promise.all(keys.map(async (k) => (await store.claim(k, at)).status));
    expect(await statuses(['a', 'b', 'c', 'd'], T0 + 5)).toEqual(['duplicate', 'claimed', 'duplicate', 'duplicate']);
    await store.release('b');
    const keys = Array.from({ length: 5000 }, (_, i) => `k${i}`);
    for (const [i, key] of keys.entries()) await record(key, T0 + 10 + i);
    expect(store.size).toBe(3);
    expect(await statuses(['a', 'd', 'k4996', 'k4997', 'k4998', 'k4999'], T0 + 6000)).toEqual([
      'claimed',
      'claimed',
      'claimed',
      'duplicate',
      'duplicate',
      'duplicate',
    ]);
    await store.stop();
  });

  it('drops expired records from its file at start, and reports damaged lines without losing the others', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'idem-'));
    const file = join(directory, IDEMPOTENCY_FILE);
    const [old, fresh, other] = [randomUUID(), randomUUID(), randomUUID()];
    appendFileSync(
      file,
      frame(`${old} ${T0 - 7_200_000}`) +
        frame(`${fresh} ${T0 - 60_000}`).replace(fresh.slice(0, 4), 'zzzz') +
        frame(`${other} ${T0 - 1000}`),
    );
    const warnings: string[] = [];
    const store = new LocalIdempotencyStore({
      directory,
      windowSeconds: 3600,
      maxEntries: 1000,
      log: { ...silent, warn: (_o, msg) => warnings.push(msg) },
      now: () => T0,
    });
    await store.start();
    expect(store.size).toBe(1);
    expect((await store.claim(other, T0)).status).toBe('duplicate');
    expect(warnings.join('\n')).toContain('1 damaged region(s)');
    expect(scanRecords(readFileSync(file)).payloads).toEqual([`${other} ${T0 - 1000}`]);
    await store.stop();
  });

  describe('on a full filesystem (tmpfs)', () => {
    let fs: Tmpfs;
    beforeAll(() => {
      fs = mountTmpfs('64k', 'the idempotency store on a full filesystem');
    });
    afterAll(() => fs.unmount());

    it('keeps its records in memory, logs, and writes them once there is room; never fails a request for it', async ({
      skip,
    }) => {
      if (fs.reason) skip(fs.reason);
      const errors: string[] = [];
      const store = new LocalIdempotencyStore({
        directory: fs.path,
        windowSeconds: 3600,
        maxEntries: 100_000,
        log: { ...silent, error: (_o, msg) => errors.push(msg) },
        now: () => T0,
      });
      await store.start();
      const filler = join(fs.path, 'filler');
      writeFileSync(filler, Buffer.alloc(60 * 1024));
      const keys = Array.from({ length: 200 }, () => randomUUID());
      for (const key of keys) {
        await store.claim(key, T0);
        await expect(store.complete(key, iso(T0), T0)).resolves.toBeUndefined();
      }
      expect((await store.claim(keys[0] ?? '', T0)).status).toBe('duplicate');
      await expect
        .poll(() => errors.join('\n'), { timeout: 3 * SYNC_INTERVAL_MS })
        .toContain('cannot write the idempotency log');
      rmSync(filler);
      await store.stop();
      const lines = scanRecords(readFileSync(join(fs.path, IDEMPOTENCY_FILE)));
      expect(lines.payloads).toEqual(keys.map((k) => `${k} ${T0}`));
      expect(lines.damaged).toEqual([]);
    });
  });
});

describe('DynamoDbIdempotencyStore', () => {
  it('stores COMPLETED with the receivedAt and a TTL of receivedAt + window', async () => {
    const store = new DynamoDbIdempotencyStore({ client: running().api, tableName: TABLE, windowSeconds: 600 });
    const key = randomUUID();
    await store.claim(key, T0);
    await store.complete(key, iso(T0));
    const item = (
      await running().client.send(
        new GetItemCommand({
          TableName: TABLE,
          Key: { [IDEMPOTENCY_TABLE_KEYS.partitionKey]: { S: key } },
          ConsistentRead: true,
        }),
      )
    ).Item;
    expect(item?.['status']?.S).toBe('COMPLETED');
    expect(item?.['receivedAt']?.S).toBe(iso(T0));
    expect(item?.[IDEMPOTENCY_TABLE_KEYS.ttlAttribute]?.N).toBe(String(T0 / 1000 + 600));
  });

  it('lets a claim be taken over once its holder has not finished for CLAIM_TIMEOUT_MS (a crashed Lambda)', async () => {
    const store = new DynamoDbIdempotencyStore({ client: running().api, tableName: TABLE, windowSeconds: 3600 });
    const key = randomUUID();
    expect((await store.claim(key, T0)).status).toBe('claimed');
    expect((await store.claim(key, T0 + CLAIM_TIMEOUT_MS - 1)).status).toBe('in-progress');
    expect((await store.claim(key, T0 + CLAIM_TIMEOUT_MS)).status).toBe('claimed');
  });

  it('fails open when the table cannot be reached: the event is queued, the error reported', async () => {
    const errors: unknown[] = [];
    const client = localDynamoClient(`http://127.0.0.1:${await freePort()}`);
    const store = new DynamoDbIdempotencyStore({
      client,
      tableName: TABLE,
      windowSeconds: 3600,
      onError: (err) => errors.push(err),
    });
    expect(await store.claim(randomUUID(), T0)).toEqual({ status: 'claimed' });
    await store.complete(randomUUID(), iso(T0));
    expect(errors).toHaveLength(2);
    client.destroy();
  });
});
