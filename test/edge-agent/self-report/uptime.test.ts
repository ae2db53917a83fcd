/**
 * The uptime monitor (platform-formats.md §10.4, §6.9, §8.2): its log lines at the configured level
 * (the real service logger), its `svc_memory_usage` points through the platform pipeline (durable
 * queue + tsdb destination) into a real influxd, and its monsaas metrics to a local recording server
 * (no local stand-in of the monitoring SaaS exists).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { platformPipeline, platformPipelineWanted } from '../../../edge-agent/runtime/platform-pipeline.js';
import { selfReportComponents } from '../../../edge-agent/self-report/compose.js';
import { formatUptime, UptimeMonitor, uptimeLines } from '../../../edge-agent/self-report/uptime.js';
import type { SvcConfig } from '../../../shared/config/schema.js';
import { MonSaasWriter } from '../../../shared/destinations/monsaas/client.js';
import { ErrorTracker } from '../../../shared/errors/tracker.js';
import { createLogger } from '../../../shared/logging/logger.js';
import { PointClock } from '../../../shared/queue/point-clock.js';
import type { Component } from '../../../shared/runtime/lifecycle.js';
import { SVC_VERSION } from '../../../shared/version.js';
import { fieldTypes, type InfluxdHandle, queryRows, startInfluxd, tagKeys } from '../../support/influxd.js';
import { silentLog } from '../../support/log.js';
import { LOOPBACK } from '../../support/ports.js';
import { type RecordingServer, startRecordingServer } from '../../support/recording-http.js';
import { svcConfig } from '../../support/udp.js';

let influx: InfluxdHandle;
let monsaas: RecordingServer;
let dir: string;
let running: Component[] = [];

beforeAll(async () => {
  [influx, monsaas] = await Promise.all([startInfluxd(), startRecordingServer()]);
  dir = mkdtempSync(join(tmpdir(), 'svc-uptime-'));
});
afterAll(async () => {
  await Promise.all([influx?.stop(), monsaas?.stop()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});
afterEach(async () => {
  for (const c of running.reverse()) await c.stop();
  running = [];
});

/** A real service logger at `level` whose JSON lines are kept. */
async function capture(level: 'silly' | 'debug' | 'verbose' | 'info') {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const { logger } = await createLogger({ level, destination: stream, pretty: false });
  const field = (line: string, key: string): string => {
    const parsed: unknown = JSON.parse(line);
    const value: unknown = typeof parsed === 'object' && parsed !== null ? Reflect.get(parsed, key) : undefined;
    return typeof value === 'string' ? value : '';
  };
  const lines = () =>
    text
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => ({ level: field(l, 'level'), msg: field(l, 'msg') }));
  return { logger, lines };
}

const SAMPLE = {
  heapUsed: 12_345_678,
  heapTotal: 23_456_789,
  external: 1_234_567,
  rss: 98_765_432,
  uptimeMs: ((2 * 24 + 3) * 3600 + 4 * 60 + 5) * 1000 + 678,
};

describe('uptime log lines (§10.4)', () => {
  it('formats uptime, iteration (en-US grouping) and MB with 2 decimals', () => {
    expect(formatUptime(SAMPLE.uptimeMs)).toBe('2 days, 3 hours, 4 minutes, 5 seconds');
    expect(uptimeLines(1234567, SAMPLE)).toEqual([
      '--------------------------------------------------------',
      'Iteration # 1,234,567',
      'Svc uptime: 2 days, 3 hours, 4 minutes, 5 seconds',
      'Memory used (heap used): 11.77 MB',
      'Memory allocated (heap total): 22.37 MB',
      'External memory: 1.18 MB',
      'Process memory (RSS): 94.19 MB',
    ]);
  });

  it('logs them at start at uptimeMonitor.logLevel, and not below the logger level', async () => {
    const verbose = await capture('verbose');
    const config = svcConfig(['  uptimeMonitor: { frequency: "every 1 hour", logLevel: verbose }']);
    const monitor = new UptimeMonitor({
      settings: config.uptimeMonitor,
      log: verbose.logger,
      clock: new PointClock(),
      queue: null,
      monsaas: null,
      sample: () => SAMPLE,
    });
    await monitor.start();
    running.push(monitor);
    await expect.poll(() => verbose.lines().length).toBe(7);
    expect(verbose.lines().map((l) => l.level)).toEqual(Array(7).fill('verbose'));
    expect(verbose.lines().map((l) => l.msg)).toEqual(uptimeLines(1, SAMPLE));

    const info = await capture('info');
    const quiet = new UptimeMonitor({
      settings: config.uptimeMonitor,
      log: info.logger,
      clock: new PointClock(),
      queue: null,
      monsaas: null,
      sample: () => SAMPLE,
    });
    await quiet.start();
    running.push(quiet);
    await expect.poll(() => quiet.iterations).toBe(1);
    expect(info.lines()).toEqual([]);
  });
});

describe('svc_memory_usage points (§6.9) in influxd', () => {
  const config = (db: string): SvcConfig =>
    svcConfig([
      `  localQueue: { directory: ${join(dir, db)} }`,
      `  tsdbConfig: { enable: true, host: ${LOOPBACK}, port: ${influx.port}, version: 1, v1Config: { dbName: ${db} } }`,
      '  uptimeMonitor: { frequency: "every 1 second", storeInTsdb: { svcMemoryUsage: true, instanceTag: edge-7 } }',
    ]);

  it('go through the platform pipeline with their tags, float fields in MB, one per tick', async () => {
    const db = 'uptime_points';
    const c = config(db);
    expect(platformPipelineWanted(c)).toBe(true);
    const ctx = {
      config: c,
      configFile: 'test.yaml',
      logger: (await capture('info')).logger,
      errors: new ErrorTracker({ enabled: false, log: silentLog }),
      clock: new PointClock(),
    };
    const pipeline = await platformPipeline(ctx);
    for (const component of [...pipeline.components, ...selfReportComponents(ctx, pipeline.queue)]) {
      await component.start();
      running.push(component);
    }
    // At start and at the next whole seconds.
    await expect
      .poll(async () => (await queryRows(influx, 'SELECT * FROM svc_memory_usage', db).catch(() => [])).length, {
        timeout: 15_000,
      })
      .toBeGreaterThanOrEqual(2);
    const rows = await queryRows(influx, 'SELECT * FROM svc_memory_usage', db);
    for (const row of rows) {
      expect(row).toMatchObject({ svc_instance: 'edge-7', version: SVC_VERSION });
      for (const field of ['heap_used', 'heap_total', 'external', 'process_memory']) {
        const value = row[field];
        expect(typeof value).toBe('number');
        expect(Math.round(Number(value) * 100) / 100).toBe(value);
      }
      expect(Number(row['process_memory'])).toBeGreaterThan(Number(row['heap_used']));
    }
    expect((await tagKeys(influx, 'svc_memory_usage', db)).sort()).toEqual(['svc_instance', 'version']);
    expect(await fieldTypes(influx, 'svc_memory_usage', db)).toEqual({
      external: 'float',
      heap_total: 'float',
      heap_used: 'float',
      process_memory: 'float',
    });
  });
});

describe('monsaas uptime metrics (§8.2)', () => {
  it('posts the memory and uptime gauges with static attributes, svcVersion and the schedule gap as interval', async () => {
    monsaas.reset();
    const c = svcConfig([
      '  uptimeMonitor:',
      '    frequency: "every 15 minutes"',
      '    storeMonSaas: { enable: true, destinationAccount: [ops], attribute: { static: [{ name: site, value: north }] } }',
      `  monsaas: { enable: true, metric: { url: "${monsaas.url}/metric/v1" } }`,
      '  thirdPartyToolsCredentials: { monsaas: [{ accountName: ops, insertApiKey: key-1, accountId: "111" }] }',
    ]);
    const writer = new MonSaasWriter({
      settings: c.monsaas,
      credentials: c.thirdPartyToolsCredentials.monsaas,
      log: silentLog,
      errors: { track: () => undefined },
    });
    const monitor = new UptimeMonitor({
      settings: c.uptimeMonitor,
      log: (await capture('info')).logger,
      clock: new PointClock(),
      queue: null,
      monsaas: writer,
      sample: () => SAMPLE,
    });
    const before = Date.now();
    await monitor.start();
    running.push(monitor);
    await expect.poll(() => monsaas.requests.length, { timeout: 5_000 }).toBe(1);
    const [request] = monsaas.requests;
    expect(request?.url).toBe('/metric/v1');
    expect(request?.headers['api-key']).toBe('key-1');
    expect(request?.body).toEqual([
      {
        common: {
          timestamp: expect.any(Number),
          'interval.ms': 900_000,
          attributes: { site: 'north', svcVersion: SVC_VERSION },
        },
        metrics: [
          { name: 'svc_heapUsed', type: 'gauge', value: SAMPLE.heapUsed },
          { name: 'svc_heapTotal', type: 'gauge', value: SAMPLE.heapTotal },
          { name: 'svc_externalMem', type: 'gauge', value: SAMPLE.external },
          { name: 'svc_processMem', type: 'gauge', value: SAMPLE.rss },
          { name: 'svc_uptimeMillisec', type: 'gauge', value: SAMPLE.uptimeMs },
        ],
      },
    ]);
    const block: unknown = Array.isArray(request?.body) ? request.body[0] : undefined;
    const common: unknown = typeof block === 'object' && block !== null ? Reflect.get(block, 'common') : undefined;
    expect(
      typeof common === 'object' && common !== null ? Reflect.get(common, 'timestamp') : undefined,
    ).toBeGreaterThanOrEqual(before);
  });
});
