/**
 * The self-report features in a real `svc edge` process (the built CLI): the heartbeat reaches a
 * local recording server at start and on the schedule, the uptime lines appear at the configured
 * level, `svc_memory_usage` points land in a real influxd, and SIGTERM stops every timer (a clean
 * exit). Schedules are `every 1 second` (`@breejs/later` has seconds), so the real clock is used.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SVC_VERSION } from '../../../shared/version.js';
import { fieldTypes, type InfluxdHandle, queryRows, startInfluxd } from '../../support/influxd.js';
import { LOOPBACK } from '../../support/ports.js';
import { type RecordingServer, startRecordingServer } from '../../support/recording-http.js';
import { logLines, startSvc } from '../../support/svc-process.js';

let influx: InfluxdHandle;
let heartbeat: RecordingServer;
let dir: string;

beforeAll(async () => {
  [influx, heartbeat] = await Promise.all([startInfluxd(), startRecordingServer()]);
  heartbeat.setFallback(200);
  dir = mkdtempSync(join(tmpdir(), 'svc-self-report-'));
});
afterAll(async () => {
  await Promise.all([influx?.stop(), heartbeat?.stop()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('svc edge reports on itself', () => {
  it('sends heartbeats, logs uptime, writes svc_memory_usage and stops cleanly', async () => {
    const db = 'self_report_e2e';
    writeFileSync(
      join(dir, 'svc.yaml'),
      [
        'Svc:',
        '  logLevel: debug',
        `  localQueue: { directory: ${join(dir, 'queue')} }`,
        `  tsdbConfig: { enable: true, host: ${LOOPBACK}, port: ${influx.port}, version: 1, v1Config: { dbName: ${db} } }`,
        `  heartbeat: { enable: true, remoteURL: "${heartbeat.url}/alive?token=secret-token", frequency: "every 1 second" }`,
        '  uptimeMonitor: { frequency: "every 1 second", logLevel: info, storeInTsdb: { svcMemoryUsage: true, instanceTag: e2e } }',
        '',
      ].join('\n'),
    );
    const svc = startSvc(dir, 'edge');
    try {
      await expect.poll(() => heartbeat.requests.length, { timeout: 20_000 }).toBeGreaterThanOrEqual(3);
      expect(heartbeat.requests.every((r) => r.method === 'GET' && r.url === '/alive?token=secret-token')).toBe(true);
      await expect
        .poll(async () => (await queryRows(influx, 'SELECT * FROM svc_memory_usage', db).catch(() => [])).length, {
          timeout: 20_000,
        })
        .toBeGreaterThanOrEqual(2);
      const rows = await queryRows(influx, 'SELECT * FROM svc_memory_usage', db);
      expect(rows[0]).toMatchObject({ svc_instance: 'e2e', version: SVC_VERSION });
      expect(await fieldTypes(influx, 'svc_memory_usage', db)).toEqual({
        external: 'float',
        heap_total: 'float',
        heap_used: 'float',
        process_memory: 'float',
      });
    } finally {
      svc.child.kill('SIGTERM');
    }
    expect(await svc.exited).toBe(0);
    const lines = logLines(svc.output());
    const messages = lines.map((l) => l.msg);
    // What it does, said at start.
    expect(messages).toContain(`heartbeat: GET ${heartbeat.url}/alive?[REDACTED] at start, then every 1 second (UTC)`);
    expect(messages).toContain(
      'uptime monitor: at start, then every 1 second (UTC), logs at info and writes svc_memory_usage points to the tsdb',
    );
    expect(
      messages.some((m) =>
        /^system info: arch \S+, platform \S+, release .*, \d+ cores?, memory \d+ MB, container (yes|no); certificates: /.test(
          m,
        ),
      ),
    ).toBe(true);
    // The uptime lines at INFO, iterations counting up from 1.
    const iterations = lines.filter((l) => l.level === 'info' && l.msg.startsWith('Iteration # ')).map((l) => l.msg);
    expect(iterations.slice(0, 2)).toEqual(['Iteration # 1', 'Iteration # 2']);
    expect(
      lines.some((l) => l.level === 'info' && /^Svc uptime: 0 days, 0 hours, 0 minutes, \d+ seconds$/.test(l.msg)),
    ).toBe(true);
    expect(lines.some((l) => l.level === 'info' && /^Process memory \(RSS\): \d+\.\d\d MB$/.test(l.msg))).toBe(true);
    expect(
      lines.filter((l) => l.level === 'debug' && l.msg.startsWith('heartbeat sent to ')).length,
    ).toBeGreaterThanOrEqual(3);
    expect(svc.output()).not.toContain('secret-token');
    expect(messages).toEqual(
      expect.arrayContaining(['stopped heartbeat', 'stopped uptime monitor', 'shutdown complete']),
    );
  });
});
