/**
 * One event, one record, in every destination: `svc local` with the tsdb (a real influxd), parquet,
 * table-file and JSON destinations. The same eventId posted twice, concurrently, and again after a
 * restart is written once; a crash between a destination write and its acknowledgement (injected
 * with the SVC_TEST_CRASH_BEFORE_SETTLE hook, not a timing guess) still leaves one record each.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CRASH_BEFORE_SETTLE_ENV } from '../../../functions/local/test-hooks.js';
import { envelope } from '../../support/audit.js';
import { type InfluxdHandle, queryRows, startInfluxd } from '../../support/influxd.js';
import { freePort } from '../../support/ports.js';
import {
  parquetEventIds,
  postAuditEvent,
  type SvcProcess,
  startAuditLocal,
  tablefileEventIds,
  writeAuditLocalConfig,
} from '../../support/svc-process.js';

let influx: InfluxdHandle;
beforeAll(async () => {
  influx = await startInfluxd();
});
afterAll(async () => {
  await influx.stop();
});

interface Setup {
  cwd: string;
  port: number;
  db: string;
}

async function setup(): Promise<Setup> {
  const cwd = mkdtempSync(join(tmpdir(), 'svc-once-'));
  const port = await freePort();
  const db = `once_${randomUUID().slice(0, 8)}`;
  writeAuditLocalConfig(
    cwd,
    port,
    {
      type: 'tsdb, parquet, tablefile, json',
      tsdb: { writeFrequency: 100 },
      parquet: { exportDirectory: 'out/parquet', writeFrequency: 200 },
      tablefile: { exportDirectory: 'out/tablefile', writeFrequency: 200 },
      json: { objectdata: { enable: true, exportDirectory: 'out/json' } },
    },
    { tsdbConfig: { enable: true, host: '127.0.0.1', port: influx.port, version: 1, v1Config: { dbName: db } } },
  );
  return { cwd, port, db };
}

async function stopped(svc: SvcProcess): Promise<void> {
  svc.child.kill('SIGTERM');
  expect(await svc.exited).toBe(0);
}

function body(id: string): Record<string, unknown> {
  return envelope({
    eventId: id,
    type: 'object.visibility.changed',
    payload: { context: { appId: randomUUID() }, event: { objectData: { qId: id.slice(0, 8) } } },
  });
}

async function post(
  s: Setup,
  payload: Record<string, unknown>,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await postAuditEvent(s.port, payload);
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

/** Every record of each destination, as event ids (one entry per point, row or file). */
async function recorded(s: Setup): Promise<Record<'tsdb' | 'parquet' | 'tablefile' | 'json', string[]>> {
  const points = await queryRows(influx, 'SELECT event_id FROM audit_events', s.db).catch(() => []);
  const json = readdirSync(join(s.cwd, 'out/json'), { withFileTypes: true })
    .filter((f) => f.isFile())
    .map((f) => /_([0-9a-f-]{36})\.json$/.exec(f.name)?.[1] ?? f.name);
  return {
    tsdb: points.map((p) => String(p['event_id'])).sort(),
    parquet: (await parquetEventIds(join(s.cwd, 'out/parquet'))).sort(),
    tablefile: tablefileEventIds(join(s.cwd, 'out/tablefile')).sort(),
    json: json.sort(),
  };
}

const once = (ids: string[]) => ({
  tsdb: [...ids].sort(),
  parquet: [...ids].sort(),
  tablefile: [...ids].sort(),
  json: [...ids].sort(),
});

describe('exactly once per eventId, in every destination', () => {
  it('writes an eventId posted twice in a row, concurrently, and again after a restart once', async () => {
    const s = await setup();
    const [twice, concurrent, afterRestart] = [randomUUID(), randomUUID(), randomUUID()];
    const first = await startAuditLocal(s.cwd, s.port);
    const a = await post(s, body(twice));
    const b = await post(s, body(twice));
    expect([a.status, b.status]).toEqual([202, 202]);
    // The repeat is answered with the first receipt's time.
    expect(b.json['receivedAt']).toBe(a.json['receivedAt']);
    const burst = await Promise.all(Array.from({ length: 8 }, () => post(s, body(concurrent))));
    expect(burst.map((r) => r.status)).toEqual(Array<number>(8).fill(202));
    expect(new Set(burst.map((r) => r.json['receivedAt'])).size).toBe(1);
    expect((await post(s, body(afterRestart))).status).toBe(202);
    await stopped(first);

    const second = await startAuditLocal(s.cwd, s.port);
    for (const id of [twice, concurrent, afterRestart]) expect((await post(s, body(id))).status).toBe(202);
    await stopped(second);
    expect(await recorded(s)).toEqual(once([twice, concurrent, afterRestart]));
  });

  it('remembers an eventId it answered just before a kill -9 (its record not yet in the idempotency file)', async () => {
    const s = await setup();
    const id = randomUUID();
    const first = await startAuditLocal(s.cwd, s.port);
    const a = await post(s, body(id));
    expect(a.status).toBe(202);
    // Wait until every destination has it (and acknowledged it), then kill at once: most often
    // inside the second in which the store's own line is still only in memory, so only the journal,
    // shown to the store as the queue opens, still knows the event.
    await expect.poll(() => recorded(s), { timeout: 5000 }).toEqual(once([id]));
    first.child.kill('SIGKILL');
    await first.exited;

    const second = await startAuditLocal(s.cwd, s.port);
    const again = await post(s, body(id));
    expect(again.json).toEqual({ status: 'accepted', receivedAt: a.json['receivedAt'], outcome: 'processed' });
    await stopped(second);
    expect(await recorded(s)).toEqual(once([id]));
  });

  it("writes once when Svc is killed between the destinations' writes and their acknowledgements", async () => {
    const s = await setup();
    const ids = [randomUUID(), randomUUID(), randomUUID()];
    // Every destination writes its batch; the hook then kills the process before any is acknowledged.
    const crashing = await startAuditLocal(s.cwd, s.port, { [CRASH_BEFORE_SETTLE_ENV]: 'tsdb,parquet,tablefile,json' });
    for (const id of ids) expect((await post(s, body(id))).status).toBe(202);
    expect(await crashing.exited).toBeNull(); // killed by a signal
    expect(crashing.output()).not.toContain('shutdown complete');
    const before = await recorded(s);
    expect(before.parquet.length + before.tablefile.length + before.json.length).toBeGreaterThan(0);

    // The restart delivers the unacknowledged batches again: every destination overwrites, none adds.
    const restarted = await startAuditLocal(s.cwd, s.port);
    await expect.poll(restarted.output, { timeout: 10_000 }).toContain('recovered 3 undelivered event(s)');
    await stopped(restarted);
    expect(await recorded(s)).toEqual(once(ids));
  });
});
