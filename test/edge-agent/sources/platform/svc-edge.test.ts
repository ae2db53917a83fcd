/**
 * The pollers composed into the real process: `svc edge` polls a health API and the app list over
 * mutual TLS (the repository on its own port 4242, on a loopback address of its own), waits for the
 * app list before its UDP listeners start, and the events it then publishes to a real mosquitto
 * carry the app names: user events (§1.4) and engine-performance events through the filter's
 * app-name rule (§2.4).
 */
import { randomInt } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCertificates, writeCertificates } from '../../../../edge-agent/simulate/platform/certs.js';
import { type MosquittoHandle, startMosquitto } from '../../../support/mosquitto.js';
import { type HttpsStub, startHttpsStub } from '../../../support/platform-https.js';
import { freeUdpPort, LOOPBACK } from '../../../support/ports.js';
import { startSvc } from '../../../support/svc-process.js';
import { sendDatagrams } from '../../../support/udp.js';
import { LOG_QIX_PERF_USER, USER_CONNECTION_OPEN } from '../udp/parse/fixtures.js';

const SALES = 'e7af59a0-c243-480d-9571-08727551a66f';

let broker: MosquittoHandle;
let engine: HttpsStub;
let repository: HttpsStub;
let dir: string;

beforeAll(async () => {
  // The repository answers on its real port, 4242, on an address of 127.0.0.0/8 no other test uses.
  const repositoryIp = `127.${randomInt(100, 250)}.${randomInt(1, 250)}.${randomInt(1, 250)}`;
  const certs = makeCertificates([LOOPBACK, repositoryIp]);
  dir = mkdtempSync(join(tmpdir(), 'svc-edge-polling-'));
  writeCertificates(join(dir, 'certs'), certs, 'export-pass');
  [broker, engine, repository] = await Promise.all([
    startMosquitto(),
    startHttpsStub(certs),
    startHttpsStub(certs, { host: repositoryIp, port: 4242 }),
  ]);
  repository.route('/qrs/app', { json: [{ id: SALES.toUpperCase(), name: 'Sales dashboard', description: '' }] });
  engine.route('/engine/healthcheck', { status: 503 });
});

afterAll(async () => {
  await Promise.all([broker?.stop(), engine?.stop(), repository?.stop()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('svc edge with the platform pollers', () => {
  it('polls over mutual TLS, and its UDP events carry the app names of the list it loaded before listening', async () => {
    const [userPort, logPort] = [await freeUdpPort(), await freeUdpPort()];
    writeFileSync(
      join(dir, 'svc.yaml'),
      [
        'Svc:',
        '  uptimeMonitor: { enable: false }',
        '  systemInfo: { enable: false }',
        '  localQueue: { directory: queue }',
        `  mqttConfig: { enable: true, brokerHost: ${LOOPBACK}, brokerPort: ${broker.port} }`,
        // Relative paths: from the working directory.
        '  cert: { clientCert: certs/client.pem, clientCertKey: certs/client_key.pem, clientCertCA: certs/root.pem, clientCertPassphrase: "${env:CERT_PASSPHRASE}" }',
        `  appNames: { enableAppNameExtract: true, hostIP: ${repository.host} }`,
        '  serversToMonitor:',
        '    pollingInterval: 1000',
        '    serverTagsDefinition: []',
        `    servers: [{ host: "${engine.hostPort}", serverName: node1, headers: { X-Site: lab } }]`,
        '  userEvents:',
        '    enable: true',
        `    udpServerConfig: { serverHost: ${LOOPBACK}, portUserActivityEvents: ${userPort} }`,
        '    sendToMQTT: { enable: true, postTo: { everythingTopic: { enable: true, topic: e2e/user } } }',
        '  logEvents:',
        `    udpServerConfig: { serverHost: ${LOOPBACK}, portLogEvents: ${logPort} }`,
        '    source: { apiPerf: { enable: true } }',
        '    enginePerformanceMonitor:',
        '      enable: true',
        '      appNameLookup: { enable: true }',
        "      monitorFilter: { appSpecific: { enable: true, app: [{ include: [{ appName: 'Sales dashboard' }], objectType: { allObjectTypes: true }, appObject: { allAppObjects: true }, method: { allMethods: true } }] } }",
        '    sendToMQTT: { enable: true, baseTopic: e2e/log, postTo: { baseTopic: true } }',
        '',
      ].join('\n'),
    );
    const subscriber = await mqtt.connectAsync(broker.url);
    const messages: { topic: string; payload: Record<string, unknown> }[] = [];
    await subscriber.subscribeAsync('e2e/#');
    subscriber.on('message', (topic, payload) => {
      const parsed: unknown = JSON.parse(payload.toString('utf8'));
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed))
        messages.push({ topic, payload: Object.fromEntries(Object.entries(parsed)) });
    });
    const edge = startSvc(dir, 'edge', { CERT_PASSPHRASE: 'export-pass' });
    try {
      await expect
        .poll(edge.output, { timeout: 20_000 })
        .toContain(`user_events listener receiving on udp://${LOOPBACK}:${userPort}`);
      await expect
        .poll(edge.output, { timeout: 5_000 })
        .toContain(`log_events listener receiving on udp://${LOOPBACK}:${logPort}`);
      const out = edge.output();
      expect(out).toContain(
        `platform polling on: the health API of 1 server(s) every 1000 ms; the app list of ${repository.host}:4242 every 60000 ms; client certificate ${join(dir, 'certs', 'client.pem')}`,
      );
      // The list was loaded before the listeners started.
      expect(out.indexOf(`app list of ${repository.host} loaded: 1 app(s)`)).toBeGreaterThan(-1);
      expect(out.indexOf(`app list of ${repository.host} loaded`)).toBeLessThan(
        out.indexOf('user_events listener receiving'),
      );
      const [appRequest] = repository.to('/qrs/app');
      expect(appRequest?.clientCert).toBe('svc-client');
      expect(appRequest?.headers['x-qlik-xrfkey']).toBe(appRequest?.query.get('xrfkey'));

      await sendDatagrams(userPort, [USER_CONNECTION_OPEN]);
      await sendDatagrams(logPort, [LOG_QIX_PERF_USER]);
      await expect.poll(() => messages.length, { timeout: 15_000 }).toBe(2);
      expect(messages.find((m) => m.topic === 'e2e/user')?.payload).toMatchObject({
        appId: SALES,
        appName: 'Sales dashboard',
      });
      expect(messages.find((m) => m.topic === 'e2e/log')?.payload).toMatchObject({
        source: 'qseow-qix-perf',
        app_id: SALES,
        app_name: 'Sales dashboard',
      });

      // The health API answers 503: polled at start and every second, each failure an ERROR naming the server.
      await expect.poll(() => engine.to('/engine/healthcheck').length, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
      const health = engine.to('/engine/healthcheck')[0];
      expect(health?.clientCert).toBe('svc-client');
      expect(health?.headers['x-site']).toBe('lab');
      await expect
        .poll(edge.output, { timeout: 5_000 })
        .toMatch(
          /"level":"error".*health poll of node1 failed \(https:\/\/127\.0\.0\.1:\d+\/engine\/healthcheck\): HTTP 503 \[http_5xx\]/,
        );
    } finally {
      edge.child.kill('SIGTERM');
      await subscriber.endAsync();
    }
    expect(await edge.exited).toBe(0);
    expect(edge.output()).toContain('shutdown complete');
    // The passphrase is a secret: never in the log.
    expect(edge.output()).not.toContain('export-pass');
  }, 90_000);
});
