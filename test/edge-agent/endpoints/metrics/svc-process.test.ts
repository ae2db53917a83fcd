/**
 * The composition in real processes: `svc edge` with a log listener whose MQTT broker is down serves
 * its counters on the metrics endpoint, keeps the events waiting in its queue (none dead-lettered)
 * and writes the broker's outage as one `svc_errors` point to a real influxd; `svc local` with only the audit API (no platform source) writes its file
 * destination's failures as `svc_errors` points through the pipeline started for them alone, and
 * shows the audit queue on the endpoint.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SVC_VERSION } from '../../../../shared/version.js';
import { envelope } from '../../../support/audit.js';
import { type InfluxdHandle, queryRows, startInfluxd } from '../../../support/influxd.js';
import { mqttOutageRow } from '../../../support/mqtt-rig.js';
import { freePort, freeUdpPort, LOOPBACK } from '../../../support/ports.js';
import { scrape } from '../../../support/prometheus.js';
import { type SvcProcess, startSvc } from '../../../support/svc-process.js';
import { sendDatagrams } from '../../../support/udp.js';
import { LOG_PROXY } from '../../sources/udp/parse/fixtures.js';

let influx: InfluxdHandle;
let dir: string;

beforeAll(async () => {
  influx = await startInfluxd();
  dir = mkdtempSync(join(tmpdir(), 'svc-metrics-'));
});
afterAll(async () => {
  await influx?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function stop(svc: SvcProcess): Promise<void> {
  svc.child.kill('SIGTERM');
  expect(await svc.exited).toBe(0);
}

describe('metrics endpoint and error tracking in svc edge and svc local', () => {
  it('svc edge: UDP counters and a down MQTT broker on the endpoint, its events waiting, the outage a svc_errors point', async () => {
    const cwd = join(dir, 'edge');
    const [metricsPort, brokerPort] = [await freePort(), await freePort()];
    const udpPort = await freeUdpPort();
    mkdirSync(cwd);
    writeFileSync(
      join(cwd, 'svc.yaml'),
      [
        'Svc:',
        '  localQueue: { directory: queue, maxReceiveCount: 1 }',
        `  metricsEndpoint: { enable: true, host: ${LOOPBACK}, port: ${metricsPort} }`,
        `  tsdbConfig: { enable: true, host: ${LOOPBACK}, port: ${influx.port}, version: 1, v1Config: { dbName: edge_errors } }`,
        '  errorTracking: { enable: true, tsdb: { enable: true } }',
        `  mqttConfig: { enable: true, brokerHost: ${LOOPBACK}, brokerPort: ${brokerPort} }`,
        '  logEvents:',
        `    udpServerConfig: { serverHost: ${LOOPBACK}, portLogEvents: ${udpPort}, maxMessageSize: 400 }`,
        '    source: { proxy: { enable: true } }',
        '    sendToMQTT: { enable: true, baseTopic: svc/logevent, postTo: { baseTopic: true } }',
        '',
      ].join('\n'),
    );
    const svc = startSvc(cwd, 'edge');
    const url = `http://${LOOPBACK}:${metricsPort}/metrics`;
    try {
      await expect
        .poll(svc.output, { timeout: 15_000 })
        .toContain('svc edge 15.0.0 running'.replace('15.0.0', SVC_VERSION));
      expect(svc.output()).toContain(`metrics endpoint listening on ${url}`);
      // One event per queue message: the listener handles what one turn of its event loop read as one
      // batch, so the second datagram is sent once the first is handled.
      await sendDatagrams(udpPort, [LOG_PROXY]);
      await expect
        .poll(
          async () =>
            (await scrape(url)).metrics.value('svc_udp_datagrams_processed_total', { listener: 'log_events' }),
          { timeout: 15_000 },
        )
        .toBe(1);
      await sendDatagrams(udpPort, [LOG_PROXY, 'x'.repeat(500)], { inFlight: 1 });
      // maxReceiveCount 1, yet nothing is dead-lettered: while the broker is down the events wait.
      await expect
        .poll(
          async () =>
            (await scrape(url)).metrics.value('svc_queue_pending_events', { queue: 'platform', destination: 'mqtt' }),
          { timeout: 15_000 },
        )
        .toBe(2);
      const { metrics } = await scrape(url);
      expect(
        metrics.series('svc_queue_dead_lettered_messages_total', { queue: 'platform', destination: 'mqtt' }),
      ).toEqual([expect.objectContaining({ value: 0 })]);
      // The outage is tracked once, not once per event or per try.
      expect(metrics.value('svc_errors_tracked_total', { error_type: 'MQTT_PUBLISH' })).toBe(1);
      expect(metrics.value('svc_udp_datagrams_received_total', { listener: 'log_events' })).toBe(3);
      expect(metrics.value('svc_udp_datagrams_processed_total', { listener: 'log_events' })).toBe(2);
      expect(metrics.value('svc_udp_datagrams_dropped_total', { listener: 'log_events', reason: 'size' })).toBe(1);
      // The composition hands the log listener's counts to the endpoint: the two WARNs, the rest at 0.
      expect(metrics.value('svc_log_events_total', { source: 'proxy', level: 'WARN' })).toBe(2);
      expect(metrics.value('svc_log_events_total', { source: 'engine', level: 'ERROR' })).toBe(0);
      expect(metrics.series('svc_queue_capacity_events')).toEqual([
        { name: 'svc_queue_capacity_events', labels: { queue: 'platform' }, value: 500_000 },
      ]);
      expect(metrics.series('svc_process_start_time_seconds')).toHaveLength(1);

      await expect
        .poll(async () => (await queryRows(influx, 'SELECT * FROM svc_errors', 'edge_errors').catch(() => [])).length, {
          timeout: 15_000,
        })
        .toBe(1);
      const rows = await queryRows(influx, 'SELECT * FROM svc_errors', 'edge_errors');
      for (const row of rows) {
        expect(row).toEqual(mqttOutageRow(brokerPort, expect.any(String)));
      }
    } finally {
      await stop(svc);
    }
  }, 60_000);

  it('svc local without a platform source: file failures become svc_errors points; the audit queue is on the endpoint', async () => {
    const cwd = join(dir, 'local');
    const [metricsPort, apiPort] = [await freePort(), await freePort()];
    mkdirSync(cwd);
    // The parquet directory lies below a regular file: every write fails (ENOTDIR).
    writeFileSync(join(cwd, 'blocker'), '');
    writeFileSync(
      join(cwd, 'svc.yaml'),
      [
        'Svc:',
        // One attempt: the event goes to the dead letters at once (a clean stop would wait for it).
        '  localQueue: { directory: queue, maxReceiveCount: 1 }',
        `  metricsEndpoint: { enable: true, host: ${LOOPBACK}, port: ${metricsPort} }`,
        `  tsdbConfig: { enable: true, host: ${LOOPBACK}, port: ${influx.port}, version: 1, v1Config: { dbName: local_errors } }`,
        '  errorTracking: { enable: true, tsdb: { enable: true } }',
        '  auditEvents:',
        '    enable: true',
        `    port: ${apiPort}`,
        '    destination: { enable: true, type: parquet, parquet: { exportDirectory: blocker/parquet, writeFrequency: 100 } }',
        '',
      ].join('\n'),
    );
    const svc = startSvc(cwd, 'local');

    const url = `http://${LOOPBACK}:${metricsPort}/metrics`;
    try {
      await expect
        .poll(svc.output, { timeout: 15_000 })
        .toContain(`audit API listening on http://${LOOPBACK}:${apiPort}`);
      const res = await fetch(`http://${LOOPBACK}:${apiPort}/api/v1/audit-event`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(envelope()),
      });
      expect(res.status).toBe(202);

      await expect
        .poll(
          async () => (await queryRows(influx, 'SELECT * FROM svc_errors', 'local_errors').catch(() => [])).length,
          { timeout: 15_000 },
        )
        .toBeGreaterThan(0);
      const [row] = await queryRows(influx, 'SELECT * FROM svc_errors', 'local_errors');
      expect(row).toMatchObject({
        error_type: 'AUDIT_FILE_WRITE',
        server_name: '_no_server_context',
        module: 'PARQUET',
        error_count: 1,
        error_code: 'ENOTDIR',
        syscall: 'mkdir',
      });

      await expect
        .poll(
          async () =>
            (await scrape(url)).metrics.value('svc_queue_dead_lettered_messages_total', {
              queue: 'audit',
              destination: 'parquet',
            }),
          { timeout: 10_000 },
        )
        .toBe(1);
      const { metrics } = await scrape(url);
      expect(metrics.value('svc_destination_events_failed_total', { queue: 'audit', destination: 'parquet' })).toBe(1);
      expect(metrics.value('svc_queue_pending_events', { queue: 'audit', destination: 'parquet' })).toBe(0);
      expect(metrics.value('svc_queue_capacity_events', { queue: 'audit' })).toBe(10_000);
      // The pipeline runs for the error points alone: its tsdb consumer group is there, no listener.
      expect(
        metrics.series('svc_queue_pending_events', { queue: 'platform' }).map((s) => s.labels['destination']),
      ).toEqual(['tsdb']);
      expect(metrics.series('svc_udp_datagrams_received_total')).toEqual([]);
      expect(metrics.value('svc_errors_tracked_total', { error_type: 'AUDIT_FILE_WRITE' })).toBe(1);
    } finally {
      await stop(svc);
    }
  }, 60_000);
});
