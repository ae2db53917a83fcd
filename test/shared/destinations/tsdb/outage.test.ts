/**
 * Nothing acknowledged is lost when the tsdb goes away: events flow source → durable local queue →
 * writer handler → real influxd while influxd is stopped for a while under load; after its restart
 * every point is there, once.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditTimeMs } from '../../../../shared/audit/datamodel.js';
import { parseConfigText } from '../../../../shared/config/load.js';
import { makeWriterHandler } from '../../../../shared/destinations/handler.js';
import { TsdbDestination } from '../../../../shared/destinations/tsdb/destination.js';
import { TsdbWriter } from '../../../../shared/destinations/tsdb/writer.js';
import { ErrorTracker } from '../../../../shared/errors/tracker.js';
import type { QueuedEvent } from '../../../../shared/queue/events.js';
import { LocalEventQueue } from '../../../../shared/queue/local/index.js';
import { PointClock } from '../../../../shared/queue/point-clock.js';
import { auditQueued, captureLog } from '../../../support/audit.js';
import { type InfluxdHandle, query, startInfluxd } from '../../../support/influxd.js';

/** The audit API's clock: it decides each event's point time when the event is queued. */
const apiClock = new PointClock();

function queued(): QueuedEvent {
  const q = auditQueued({
    type: 'object.view.duration',
    payload: { context: { sheetId: 's1' }, event: { objectId: 'o1', duration: 12.5, leftAt: '2026-11-22T10:16:00Z' } },
  });
  // As the audit API does: a write that succeeded but was reported failed (a lost response) is
  // delivered again and overwrites its own point instead of adding one.
  return { ...q, timeNs: String(apiClock.next(auditTimeMs(q))) };
}

async function count(influx: InfluxdHandle): Promise<number> {
  const result = (await query(influx, 'SELECT count(event_id) FROM audit_events', 'svc_outage')) as {
    results: { series?: { values: [string, number][] }[] }[];
  };
  return result.results[0]?.series?.[0]?.values[0]?.[1] ?? 0;
}

describe('tsdb outage under load', () => {
  let influx: InfluxdHandle;
  beforeAll(async () => {
    influx = await startInfluxd();
  });
  afterAll(() => influx.stop());

  it('writes every accepted event after influxd comes back, each exactly once', async () => {
    const { config } = parseConfigText(
      [
        'Svc:',
        '  tsdbConfig:',
        '    enable: true',
        '    host: 127.0.0.1',
        `    port: ${influx.port}`,
        '    version: 1',
        '    v1Config:',
        '      dbName: svc_outage',
        '',
      ].join('\n'),
      'test.yaml',
      {},
    );
    const log = await captureLog('info');
    const errors = new ErrorTracker({ enabled: true, log: log.logger });
    const writer = new TsdbWriter({
      config: config.tsdbConfig,
      log: log.logger,
      onError: (type, module, err) => errors.track(type, err, { module }),
      retryDelaysMs: [50, 100],
      requestTimeoutMs: 2000,
    });
    const destination = new TsdbDestination({
      writer,
      audit: { measurement: 'audit_events', staticTags: [{ name: 'env', value: 'test' }], clock: new PointClock() },
      userEvents: null,
      logEvents: null,
      points: false,
      log: log.logger,
    });
    const queue = new LocalEventQueue({
      directory: mkdtempSync(join(tmpdir(), 'outage-queue-')),
      capacity: 100_000,
      maxReceiveCount: 50,
      retryBaseMs: 100,
      retryCapMs: 500,
      log: log.logger,
      groups: [
        {
          name: 'tsdb',
          handler: makeWriterHandler({ destination, claimCheck: null, log: log.logger }),
          batchSize: 50,
          batchWindowMs: 50,
        },
      ],
    });
    await queue.start();

    const sent: string[] = [];
    const load = (async () => {
      for (let i = 0; i < 60; i++) {
        const batch = Array.from({ length: 10 }, queued);
        await queue.send(batch);
        sent.push(...batch.map((e) => e.id));
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    await expect.poll(() => count(influx), { timeout: 10_000 }).toBeGreaterThan(0);
    await influx.stopProcess();
    await new Promise((r) => setTimeout(r, 1500));
    await influx.startProcess();
    await load;

    await expect.poll(() => count(influx), { timeout: 60_000, interval: 250 }).toBe(600);
    await queue.stop();
    expect(sent).toHaveLength(600);
    expect(errors.summary().details['TSDB_V1_WRITE']?.total ?? 0).toBeGreaterThan(0);
    const rows = (await query(
      influx,
      'SELECT event_id, "duration", env FROM audit_events WHERE event_type = \'object.view.duration\' LIMIT 1',
      'svc_outage',
    )) as { results: { series?: { columns: string[]; values: unknown[][] }[] }[] };
    expect(rows.results[0]?.series?.[0]?.columns).toEqual(['time', 'event_id', 'duration', 'env']);
    expect(rows.results[0]?.series?.[0]?.values[0]?.slice(2)).toEqual([12.5, 'test']);
  }, 120_000);
});
