/**
 * The real processes: `svc edge` publishes what `svc simulate udp` sends to a real mosquitto over
 * TLS with a user name and a password from `${env:…}`. The password is wrong at first: one ERROR line,
 * the events wait in the durable queue; the broker's password file is changed and reloaded (SIGHUP),
 * and every event arrives, once.
 */
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectAsync } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import {
  type CertificateFiles,
  makeCertificates,
  writeCertificates,
} from '../../../../edge-agent/simulate/platform/certs.js';
import { type MosquittoHandle, startMosquitto } from '../../../support/mosquitto.js';
import { freeUdpPort, LOOPBACK, sleep } from '../../../support/ports.js';
import { logLines, startSvc, startSvcCommand } from '../../../support/svc-process.js';

const PASSWORD = 'edge-Pa55word-7c1e';
const OLD_PASSWORD = 'old-Pa55word-0b2d';
const WATCHER = { username: 'watcher', password: 'watcher-Pa55word' };
const EVENTS = 40;

let certs: CertificateFiles;
let broker: MosquittoHandle;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-edge-mqtts-'));
  certs = writeCertificates(join(dir, 'certs'), makeCertificates(['127.0.0.1', 'localhost']));
  broker = await startMosquitto({
    users: { svc: OLD_PASSWORD, [WATCHER.username]: WATCHER.password },
    tls: { certFile: certs.serverCert, keyFile: certs.serverKey },
  });
});

afterAll(() => Promise.all([broker?.stop(), rm(dir, { recursive: true, force: true })]));

/** svc.yaml: user events from the UDP listener on `port` to the broker's TLS listener, as user `svc`. */
function writeConfig(port: number): void {
  const config = {
    Svc: {
      localQueue: { directory: 'queue' },
      mqttConfig: {
        enable: true,
        brokerHost: LOOPBACK,
        brokerPort: broker.tlsPort,
        username: 'svc',
        password: '${env:SVC_MQTT_PASSWORD}',
        tls: { enable: true, caFile: certs.clientCertCA },
      },
      userEvents: {
        enable: true,
        udpServerConfig: { serverHost: LOOPBACK, portUserActivityEvents: port },
        sendToMQTT: { enable: true, postTo: { everythingTopic: { enable: true, topic: 'sim/userevent' } } },
      },
    },
  };
  writeFileSync(join(dir, 'svc.yaml'), stringify(config));
}

describe('svc edge to an MQTT broker over TLS with credentials', () => {
  it('a refused password is one ERROR and the events wait; after the broker takes it, each arrives once', async () => {
    const port = await freeUdpPort();
    writeConfig(port);
    const subscriber = await connectAsync(broker.url, { ...WATCHER, reconnectPeriod: 0 });
    const topics: string[] = [];
    await subscriber.subscribeAsync('sim/#');
    subscriber.on('message', (topic) => topics.push(topic));
    const edge = startSvc(dir, 'edge', { SVC_MQTT_PASSWORD: PASSWORD });
    try {
      await expect
        .poll(edge.output, { timeout: 15_000 })
        .toContain(`user_events listener receiving on udp://${LOOPBACK}:${port}`);
      const sim = startSvcCommand(dir, [
        'simulate',
        'udp',
        '--target',
        `${LOOPBACK}:${port}`,
        '--kinds',
        'user',
        '--rate',
        '200',
        '--count',
        String(EVENTS),
      ]);
      expect(await sim.exited).toBe(0);
      // Attempts 1 s, 2 s, 4 s apart: the broker refused at least three times by now.
      await sleep(4_000);
      const errors = logLines(edge.output()).filter((line) => line.level === 'error');
      expect(errors.map((line) => line.msg)).toEqual([
        expect.stringMatching(
          new RegExp(`^the MQTT broker mqtts://127\\.0\\.0\\.1:${broker.tlsPort ?? 0} refused the connection: `),
        ),
      ]);
      expect(topics).toEqual([]);

      // The broker now has Svc's password; SIGHUP makes mosquitto read its password file again.
      await broker.setUsers({ svc: PASSWORD, [WATCHER.username]: WATCHER.password });
      await expect.poll(() => topics.length, { timeout: 30_000, interval: 250 }).toBe(EVENTS);
      await sleep(1_000);
      expect(topics).toHaveLength(EVENTS);
      expect(edge.output()).toContain('accepts the connection again');
      expect(logLines(edge.output()).filter((line) => line.level === 'error')).toHaveLength(1);
      expect(edge.output()).not.toContain(PASSWORD);
      const deadLetters = join(dir, 'queue');
      const folders = existsSync(deadLetters) ? readdirSync(deadLetters, { recursive: true }).map(String) : [];
      expect(folders.filter((name) => name.includes('dead-letters') && name.endsWith('.json'))).toEqual([]);
    } finally {
      edge.child.kill('SIGTERM');
      await subscriber.endAsync();
    }
    expect(await edge.exited).toBe(0);
  }, 90_000);
});
