/**
 * Anonymous telemetry (platform-formats.md §10.6): the payload holds exactly the listed facts and
 * nothing from the config or the host's identity; it is sent to `anonTelemetrySettings.url` (here a
 * real local recording server) at start.
 */
import { hostname, networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectSystemInfo, type SystemInfo } from '../../../edge-agent/self-report/system-info.js';
import { featureSwitches, telemetryPayload, telemetryTask } from '../../../edge-agent/self-report/telemetry.js';
import { SVC_VERSION } from '../../../shared/version.js';
import { recordingLog, silentLog } from '../../support/log.js';
import { type RecordingServer, startRecordingServer } from '../../support/recording-http.js';
import { svcConfig } from '../../support/udp.js';

const MARK = 'ZQXMARK';

/** A config whose every string value the test chose is a marker (hosts, paths, names, URLs, secrets). */
const markedConfig = (url: string) =>
  svcConfig([
    `  anonTelemetry: true`,
    `  anonTelemetrySettings: { url: "${url}" }`,
    `  logDirectory: /var/${MARK}logdir`,
    `  heartbeat: { enable: true, remoteURL: "https://${MARK}heartbeat.example.com/${MARK}path" }`,
    `  uptimeMonitor: { storeInTsdb: { svcMemoryUsage: true, instanceTag: ${MARK}instance } }`,
    `  tsdbConfig: { enable: true, host: ${MARK}tsdb.example.com, v1Config: { dbName: ${MARK}db } }`,
    `  mqttConfig: { enable: true, brokerHost: ${MARK}broker.example.com, baseTopic: ${MARK}topic/ }`,
    `  cert: { clientCert: /etc/${MARK}cert.pem, clientCertKey: /etc/${MARK}key.pem, clientCertCA: /etc/${MARK}ca.pem, clientCertPassphrase: ${MARK}passphrase }`,
    `  serversToMonitor: { servers: [{ host: "${MARK}server.example.com:4747", serverName: ${MARK}name, serverDescription: ${MARK}description }] }`,
    `  userEvents: { enable: true, tags: [{ name: ${MARK}tag, value: ${MARK}value }] }`,
    `  localQueue: { directory: /var/${MARK}queue }`,
  ]);

/** System info whose host-identifying facts are markers (the collector would never put them in those fields; the payload must not carry them anyway). */
const markedInfo = (info: SystemInfo): SystemInfo => ({
  ...info,
  cpuBrand: `${MARK}cpu`,
  systemUuid: `${MARK}uuid`,
  defaultInterface: { name: `${MARK}eth`, mac: 'aa:bb:cc:dd:ee:ff', ip4: '10.99.88.77' },
});

let server: RecordingServer;
beforeAll(async () => {
  server = await startRecordingServer();
});
afterAll(async () => {
  await server?.stop();
});

describe('telemetry payload', () => {
  it('holds exactly the listed facts: id, service, version, OS facts, runtime version, one boolean per feature', async () => {
    const info = await collectSystemInfo({ enable: true, log: silentLog });
    const payload = telemetryPayload(info, markedConfig(`${server.url}/t`));
    expect(Object.keys(payload).sort()).toEqual(
      [
        'arch',
        'codename',
        'distro',
        'features',
        'id',
        'isContainer',
        'platform',
        'release',
        'runtimeVersion',
        'service',
        'version',
        'virtual',
      ].sort(),
    );
    expect(payload).toMatchObject({
      id: info.hostId,
      service: 'svc',
      version: SVC_VERSION,
      arch: info.arch,
      platform: info.platform,
      release: info.release,
      distro: info.distro,
      codename: info.codename,
      virtual: info.virtual,
      isContainer: info.isContainer,
      runtimeVersion: process.version,
    });
    expect(payload.id).toMatch(/^[0-9a-f]{64}$/);
    for (const value of Object.values(payload.features)) expect(typeof value).toBe('boolean');
    expect(payload.features).toMatchObject({
      heartbeat: true,
      uptimeMonitor: true,
      tsdb: true,
      mqtt: true,
      userEvents: true,
      healthMonitoring: true,
      monsaas: false,
      auditEvents: false,
    });
    expect(Object.keys(payload.features)).toEqual(Object.keys(featureSwitches(svcConfig([]))));
  });

  it('carries no host name, IP address, MAC, path or config value', async () => {
    const info = markedInfo(await collectSystemInfo({ enable: true, log: silentLog }));
    const text = JSON.stringify(telemetryPayload(info, markedConfig(`${server.url}/t`)));
    expect(text).not.toContain(MARK);
    expect(text).not.toContain(hostname());
    expect(text).not.toMatch(/\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\b/);
    expect(text).not.toMatch(/([0-9a-f]{2}:){5}[0-9a-f]{2}/i);
    for (const list of Object.values(networkInterfaces()))
      for (const a of list ?? [])
        if (a.address !== '::1' && a.address !== '127.0.0.1') expect(text).not.toContain(a.address);
    expect(text).not.toMatch(/[/\\][A-Za-z]+[/\\]/);
    expect(text).not.toContain(server.url);
  });

  it('is POSTed as JSON to anonTelemetrySettings.url at start, with a WARN (not an error) when refused', async () => {
    server.reset();
    server.reply(204, 500);
    const info = await collectSystemInfo({ enable: true, log: silentLog });
    const config = markedConfig(`${server.url}/api/v1/telemetry`);
    const { log, lines } = recordingLog();
    const task = telemetryTask({ config, info: () => info, log, intervalMs: 300 });
    await task.start();
    await expect.poll(() => server.requests.length, { timeout: 5_000 }).toBeGreaterThanOrEqual(2);
    await task.stop();
    const [first] = server.requests;
    expect(first?.method).toBe('POST');
    expect(first?.url).toBe('/api/v1/telemetry');
    expect(first?.headers['content-type']).toBe('application/json');
    expect(first?.body).toEqual(JSON.parse(JSON.stringify(telemetryPayload(info, config))));
    expect(lines[0]).toMatchObject({
      level: 'debug',
      msg: `anonymous telemetry sent to ${server.url}/api/v1/telemetry: HTTP 204`,
    });
    expect(lines[1]).toMatchObject({
      level: 'warn',
      msg: `anonymous telemetry to ${server.url}/api/v1/telemetry not accepted: HTTP 500; next try in 12 hours`,
    });
  });
});
