/**
 * MQTT over TLS with credentials, against real mosquitto brokers the tests configure: a TLS
 * listener with a server certificate for 127.0.0.1 (signed by a test CA made here), a password file
 * (`mosquitto_passwd`) with anonymous access off, and a second broker that requires a client
 * certificate. Events flow through the real durable local queue and the writer handler, so "nothing
 * is lost" is the queue's answer, not the writer's.
 */
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectAsync, type MqttClient } from 'mqtt';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type CertificateFiles,
  makeCertificates,
  writeCertificates,
} from '../../../../edge-agent/simulate/platform/certs.js';
import type { SvcConfig } from '../../../../shared/config/schema.js';
import { makeWriterHandler } from '../../../../shared/destinations/handler.js';
import { MQTT_CONNECTION_MODULE, MqttWriter } from '../../../../shared/destinations/mqtt/client.js';
import { MqttDestination } from '../../../../shared/destinations/mqtt/destination.js';
import { ErrorTracker, type TrackedError } from '../../../../shared/errors/tracker.js';
import { DEAD_LETTER_DIR } from '../../../../shared/queue/local/dead-letters.js';
import { LocalEventQueue } from '../../../../shared/queue/local/index.js';
import { captureLog, type LogCapture } from '../../../support/audit.js';
import { type MosquittoHandle, startMosquitto } from '../../../support/mosquitto.js';
import { mqttTestSettings } from '../../../support/mqtt-rig.js';
import { sleep } from '../../../support/ports.js';
import { START_SESSION, userQueued } from '../../platform/fixtures.js';

const SVC_USER = 'svc';
const RIGHT_PASSWORD = 'right-Pa55word';
const WRONG_PASSWORD = 'wrong-Pa55word';
/** The test's own subscriber (over the broker's plain listener). */
const WATCHER = { username: 'watcher', password: 'watcher-Pa55word' };
const TOPIC = 'tls-auth/userevent';
const RECONNECT_MS = 100;

interface Received {
  topic: string;
  payload: string;
}

let certs: CertificateFiles;
/** Password broker: TLS listener, users, no anonymous access. */
let passwords: MosquittoHandle;
/** Client-certificate broker: TLS listener that requires a certificate from the test CA. */
let mutual: MosquittoHandle;
const clients: MqttClient[] = [];
const writers: MqttWriter[] = [];
const queues: LocalEventQueue[] = [];

beforeAll(async () => {
  certs = writeCertificates(
    mkdtempSync(join(tmpdir(), 'mqtt-tls-certs-')),
    makeCertificates(['127.0.0.1', 'localhost'], { commonName: 'MQTT test CA' }),
  );
  [passwords, mutual] = await Promise.all([
    startMosquitto({
      users: { [SVC_USER]: RIGHT_PASSWORD, [WATCHER.username]: WATCHER.password },
      tls: { certFile: certs.serverCert, keyFile: certs.serverKey },
    }),
    startMosquitto({
      users: { [WATCHER.username]: WATCHER.password },
      tls: {
        certFile: certs.serverCert,
        keyFile: certs.serverKey,
        caFile: certs.clientCertCA,
        requireCertificate: true,
        useIdentityAsUsername: true,
      },
    }),
  ]);
});

afterEach(async () => {
  await Promise.all(queues.splice(0).map((q) => q.stop()));
  await Promise.all(writers.splice(0).map((w) => w.stop()));
  await Promise.all(clients.splice(0).map((c) => c.endAsync(true)));
});

afterAll(async () => {
  await Promise.all([passwords?.stop(), mutual?.stop()]);
});

function tlsPort(broker: MosquittoHandle): number {
  if (broker.tlsPort === undefined) throw new Error('the broker has no TLS listener');
  return broker.tlsPort;
}

/** A subscriber to `#` on the broker's plain listener, as the watcher user. */
async function watch(broker: MosquittoHandle): Promise<Received[]> {
  const client = await connectAsync(broker.url, { ...WATCHER, reconnectPeriod: 0, connectTimeout: 5_000 });
  clients.push(client);
  const received: Received[] = [];
  client.on('message', (topic, payload) => received.push({ topic, payload: payload.toString('utf8') }));
  await client.subscribeAsync('#', { qos: 1 });
  return received;
}

function writerFor(
  settings: SvcConfig['mqttConfig'],
  log: LogCapture,
  options: { refusedReconnectCapMs?: number } = {},
): { writer: MqttWriter; tracked: TrackedError[] } {
  const tracked: TrackedError[] = [];
  const errors = new ErrorTracker({ enabled: true, log: log.logger, sink: (e) => tracked.push(e) });
  const writer = new MqttWriter({
    settings,
    log: log.logger,
    errors,
    connectTimeoutMs: 2_000,
    reconnectPeriodMs: RECONNECT_MS,
    ...options,
  });
  writers.push(writer);
  return { writer, tracked };
}

/** A writer to the password broker's TLS listener as the svc user, trusting the test CA. */
const passwordWriter = (password: string, log: LogCapture, options: { refusedReconnectCapMs?: number } = {}) =>
  writerFor(
    mqttTestSettings(tlsPort(passwords), {
      username: SVC_USER,
      password,
      tls: { enable: true, caFile: certs.clientCertCA },
    }),
    log,
    options,
  );

/** The writer behind the real local queue and writer handler, as `svc edge` composes them. */
async function pipeline(writer: MqttWriter, log: LogCapture): Promise<{ queue: LocalEventQueue; directory: string }> {
  const destination = new MqttDestination({
    writer,
    userEvents: {
      settings: {
        enable: true,
        postTo: {
          everythingTopic: { enable: true, topic: TOPIC },
          sessionStartTopic: { enable: false, topic: 'x' },
          sessionStopTopic: { enable: false, topic: 'x' },
          connectionOpenTopic: { enable: false, topic: 'x' },
          connectionCloseTopic: { enable: false, topic: 'x' },
        },
      },
      tags: [],
    },
    logEvents: null,
    log: log.logger,
  });
  const directory = mkdtempSync(join(tmpdir(), 'mqtt-tls-queue-'));
  const queue = new LocalEventQueue({
    directory,
    capacity: 10_000,
    // Two attempts: a refusal that counted attempts would dead-letter every event within the test.
    maxReceiveCount: 2,
    retryBaseMs: 20,
    retryCapMs: 50,
    unavailableBaseMs: 50,
    unavailableCapMs: 200,
    log: log.logger,
    groups: [
      {
        name: 'mqtt',
        handler: makeWriterHandler({ destination, claimCheck: null, log: log.logger }),
        batchSize: 10,
        batchWindowMs: 0,
      },
    ],
  });
  queues.push(queue);
  await queue.start();
  return { queue, directory };
}

const deadLetters = (directory: string): string[] => {
  const folder = join(directory, DEAD_LETTER_DIR, 'mqtt');
  return existsSync(folder) ? readdirSync(folder) : [];
};

const errorLines = (log: LogCapture) => log.lines().filter((line) => line['level'] === 'error');
const lineText = (log: LogCapture) => log.lines().map((line) => JSON.stringify(line));

describe('MQTT over TLS with a user name and password (real mosquitto)', () => {
  it('publishes over mqtts with the right credentials: the subscriber sees every message', async () => {
    const received = await watch(passwords);
    const log = await captureLog('debug');
    const { writer, tracked } = passwordWriter(RIGHT_PASSWORD, log);
    expect(writer.url).toBe(`mqtts://127.0.0.1:${tlsPort(passwords)}`);
    await writer.start();
    expect(writer.connected).toBe(true);
    const { queue } = await pipeline(writer, log);
    const events = Array.from({ length: 5 }, () => userQueued(START_SESSION));
    await queue.send(events);
    await expect.poll(() => received.length, { timeout: 10_000 }).toBe(5);
    expect(received.every((m) => m.topic === TOPIC)).toBe(true);
    expect(tracked).toEqual([]);
    expect(errorLines(log)).toEqual([]);
    expect(lineText(log).some((line) => line.includes(RIGHT_PASSWORD))).toBe(false);
  });

  it('a wrong password is one ERROR over many refused attempts, tracked once; events wait in the queue and arrive once each after the password file is fixed', async () => {
    const received = await watch(passwords);
    const log = await captureLog('debug');
    const { writer, tracked } = passwordWriter(WRONG_PASSWORD, log, { refusedReconnectCapMs: 4 * RECONNECT_MS });
    await writer.start();
    expect(writer.connected).toBe(false);
    const { queue, directory } = await pipeline(writer, log);
    const events = Array.from({ length: 12 }, () => userQueued(START_SESSION));
    await queue.send(events.slice(0, 6));

    // Several reconnect periods, backed off up to 4 × the period: at least three more refusals.
    const stillRefused = () => log.lines().filter((l) => l['msg'] === 'the MQTT broker still refuses the connection');
    await expect.poll(() => stillRefused().length, { timeout: 10_000 }).toBeGreaterThanOrEqual(3);
    await queue.send(events.slice(6));
    await sleep(5 * RECONNECT_MS);

    const errors = errorLines(log);
    expect(errors).toHaveLength(1);
    const message = String(errors[0]?.['msg']);
    expect(message).toContain(`mqtts://127.0.0.1:${tlsPort(passwords)}`);
    expect(message).toMatch(/refused the connection: (Not authorized|Bad username or password)/);
    expect(message).toContain('Svc.mqttConfig.username and Svc.mqttConfig.password');
    expect(tracked).toHaveLength(1);
    expect(tracked[0]).toMatchObject({
      type: 'MQTT_PUBLISH',
      module: MQTT_CONNECTION_MODULE,
      destinationHost: '127.0.0.1',
      category: 'auth_error',
    });
    // The backoff: the waits grow from the reconnect period to the cap.
    const waits = stillRefused().map((l) => Number(l['waitMs']));
    expect(waits.slice(0, 2)).toEqual([2 * RECONNECT_MS, 4 * RECONNECT_MS]);
    expect(Math.max(...waits)).toBe(4 * RECONNECT_MS);
    expect(received).toEqual([]);
    expect(deadLetters(directory)).toEqual([]);

    // The broker's password file now holds the password Svc sends; SIGHUP reloads it.
    await passwords.setUsers({ [SVC_USER]: WRONG_PASSWORD, [WATCHER.username]: WATCHER.password });
    await expect.poll(() => received.length, { timeout: 15_000 }).toBe(events.length);
    await sleep(5 * RECONNECT_MS);
    expect(received).toHaveLength(events.length);
    expect(deadLetters(directory)).toEqual([]);
    expect(log.lines().some((l) => String(l['msg']).includes('accepts the connection again'))).toBe(true);
    expect(errorLines(log)).toHaveLength(1);
    expect(lineText(log).some((line) => line.includes(WRONG_PASSWORD) || line.includes(RIGHT_PASSWORD))).toBe(false);
    await passwords.setUsers({ [SVC_USER]: RIGHT_PASSWORD, [WATCHER.username]: WATCHER.password });
  });

  it('rejectUnauthorized true without caFile: one ERROR saying the certificate is not trusted, tracked; false connects and publishes', async () => {
    const log = await captureLog('debug');
    const untrusted = writerFor(
      mqttTestSettings(tlsPort(passwords), { username: SVC_USER, password: RIGHT_PASSWORD, tls: { enable: true } }),
      log,
    );
    await untrusted.writer.start();
    await sleep(5 * RECONNECT_MS);
    expect(untrusted.writer.connected).toBe(false);
    const errors = errorLines(log);
    expect(errors).toHaveLength(1);
    expect(String(errors[0]?.['msg'])).toMatch(/TLS handshake .* failed: .*certificate.*Svc\.mqttConfig\.tls\.caFile/);
    expect(untrusted.tracked).toHaveLength(1);
    expect(untrusted.tracked[0]).toMatchObject({ module: MQTT_CONNECTION_MODULE, category: 'certificate_error' });

    const received = await watch(passwords);
    const accepting = writerFor(
      mqttTestSettings(tlsPort(passwords), {
        username: SVC_USER,
        password: RIGHT_PASSWORD,
        tls: { enable: true, rejectUnauthorized: false },
      }),
      await captureLog('debug'),
    );
    await accepting.writer.start();
    expect(accepting.writer.connected).toBe(true);
    expect(await accepting.writer.publish('tls-auth/any-cert', 'hello', 'TEST')).toBe(true);
    await expect.poll(() => received.map((m) => m.payload)).toEqual(['hello']);
  });
});

describe('MQTT with a client certificate (mosquitto require_certificate true)', () => {
  it('connects and publishes with certFile and keyFile', async () => {
    const received = await watch(mutual);
    const { writer, tracked } = writerFor(
      mqttTestSettings(tlsPort(mutual), {
        tls: { enable: true, caFile: certs.clientCertCA, certFile: certs.clientCert, keyFile: certs.clientCertKey },
      }),
      await captureLog('debug'),
    );
    await writer.start();
    expect(writer.connected).toBe(true);
    expect(await writer.publish('tls-auth/mutual', 'with a certificate', 'TEST')).toBe(true);
    await expect.poll(() => received.map((m) => m.payload)).toEqual(['with a certificate']);
    expect(tracked).toEqual([]);
  });

  it('without a client certificate: one ERROR naming certFile and keyFile, tracked once', async () => {
    const log = await captureLog('debug');
    const { writer, tracked } = writerFor(
      mqttTestSettings(tlsPort(mutual), { tls: { enable: true, caFile: certs.clientCertCA } }),
      log,
    );
    await writer.start();
    await sleep(8 * RECONNECT_MS);
    expect(writer.connected).toBe(false);
    const errors = errorLines(log);
    expect(errors).toHaveLength(1);
    expect(String(errors[0]?.['msg'])).toContain('Svc.mqttConfig.tls.certFile and tls.keyFile');
    expect(tracked).toHaveLength(1);
  });
});

describe('a broken TLS file stops start()', () => {
  it('rejects with the key and the reason when the key file is gone', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'mqtt-tls-files-'));
    const cert = join(directory, 'client.pem');
    writeFileSync(cert, '-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n');
    const { writer } = writerFor(
      mqttTestSettings(tlsPort(mutual), {
        tls: { enable: true, certFile: cert, keyFile: join(directory, 'missing.pem') },
      }),
      await captureLog('debug'),
    );
    await expect(writer.start()).rejects.toThrow(/Svc\.mqttConfig\.tls\.keyFile: cannot read .*missing\.pem/);
  });
});
