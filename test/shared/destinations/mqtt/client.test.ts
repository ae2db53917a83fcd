/**
 * MqttWriter (platform-formats.md §7) against a real mosquitto: exact topic and payload, QoS 0 and
 * not retained, wildcards in data-built topic levels, failures tracked as MQTT_PUBLISH, a broker
 * down at start and one that goes away.
 *
 * The reconnect tests need a broker on a port chosen before it starts; `startMosquitto()` picks its
 * own port, so those tests start mosquitto themselves on the chosen port (same binary and settings).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { connectAsync, type MqttClient } from 'mqtt';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SvcConfig } from '../../../../shared/config/schema.js';
import {
  invalidTopicReason,
  MQTT_CONNECTION_MODULE,
  MqttPublishError,
  MqttWriter,
  type MqttWriterOptions,
  topicLevel,
} from '../../../../shared/destinations/mqtt/client.js';
import { ErrorTracker, type TrackedError } from '../../../../shared/errors/tracker.js';
import type { Log } from '../../../../shared/logging/log.js';
import { silentLog } from '../../../support/log.js';
import { type MosquittoHandle, startMosquitto } from '../../../support/mosquitto.js';
import { mqttTestSettings } from '../../../support/mqtt-rig.js';
import {
  canConnect,
  findExecutable,
  freePort,
  LOOPBACK,
  registerTempDir,
  sleep,
  spawnManaged,
  unregisterTempDir,
  until,
  waitUntilReady,
} from '../../../support/ports.js';

const MODULE = 'HEALTH_METRICS_MQTT';

interface Received {
  topic: string;
  payload: string;
  qos: number;
  retain: boolean;
}

interface LogEntry {
  level: 'debug' | 'info' | 'warn' | 'error';
  obj: Record<string, unknown>;
  msg: string;
}

function recordingLog(): { log: Log; entries: LogEntry[]; at(level: LogEntry['level']): LogEntry[] } {
  const entries: LogEntry[] = [];
  const add = (level: LogEntry['level']) => (obj: object, msg: string) => {
    entries.push({ level, obj: { ...obj }, msg });
  };
  return {
    log: { debug: add('debug'), info: add('info'), warn: add('warn'), error: add('error') },
    entries,
    at: (level) => entries.filter((e) => e.level === level),
  };
}

const mqttSettings = (port: number): SvcConfig['mqttConfig'] => mqttTestSettings(port);

/** An MQTT 5 subscriber with retain-as-published, so `retain` shows the flag the publisher set. */
async function subscriber(url: string, filter: string): Promise<{ client: MqttClient; messages: Received[] }> {
  const client = await connectAsync(url, {
    protocolVersion: 5,
    clientId: `sub_${Math.random().toString(16).slice(2)}`,
    reconnectPeriod: 0,
    connectTimeout: 5_000,
  });
  const messages: Received[] = [];
  client.on('message', (topic, payload, packet) => {
    messages.push({ topic, payload: payload.toString('utf8'), qos: packet.qos, retain: packet.retain });
  });
  await client.subscribeAsync(filter, { qos: 1, rap: true });
  return { client, messages };
}

/** mosquitto on a given port (see the file comment). */
async function mosquittoOn(port: number): Promise<{ stop(): Promise<void> }> {
  const binary = findExecutable('mosquitto', ['/usr/sbin', '/usr/local/sbin', '/usr/bin']);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'mqtt-writer-test-'));
  registerTempDir(dir);
  const config = path.join(dir, 'mosquitto.conf');
  await writeFile(
    config,
    `listener ${port} ${LOOPBACK}\nallow_anonymous true\npersistence false\nlog_dest stderr\nlog_type error\nlog_type warning\nconnection_messages false\n`,
  );
  const proc = spawnManaged(binary, ['-c', config], dir);
  try {
    await waitUntilReady(proc, `mosquitto (${LOOPBACK}:${port})`, () => canConnect(port, LOOPBACK, 500), 10_000);
  } catch (err) {
    await proc.kill();
    throw err;
  }
  return {
    async stop() {
      await proc.stop(5_000);
      await rm(dir, { recursive: true, force: true });
      unregisterTempDir(dir);
    },
  };
}

function trackerWithSink(): { tracker: ErrorTracker; tracked: TrackedError[] } {
  const tracked: TrackedError[] = [];
  const tracker = new ErrorTracker({ enabled: true, log: silentLog, sink: (e) => tracked.push(e) });
  return { tracker, tracked };
}

describe('topicLevel', () => {
  it('replaces + and # by _ and leaves everything else alone', () => {
    expect(topicLevel('node+1#a')).toBe('node_1_a');
    expect(topicLevel('++##')).toBe('____');
    expect(topicLevel('Grüße/x y.z')).toBe('Grüße/x y.z');
    expect(topicLevel('')).toBe('');
  });

  it('invalidTopicReason refuses wildcards, empty topics and U+0000', () => {
    expect(invalidTopicReason('svc/a/b')).toBeUndefined();
    expect(invalidTopicReason('svc/+/b')).toMatch(/wildcard/);
    expect(invalidTopicReason('svc/#')).toMatch(/wildcard/);
    expect(invalidTopicReason('')).toMatch(/empty/);
    expect(invalidTopicReason('a\u0000b')).toMatch(/U\+0000/);
  });
});

describe('MqttWriter against a running mosquitto', () => {
  let broker: MosquittoHandle;
  let sub: { client: MqttClient; messages: Received[] };
  let rec: ReturnType<typeof recordingLog>;
  let errors: ReturnType<typeof trackerWithSink>;
  let writer: MqttWriter;
  const extraClients: MqttClient[] = [];

  const newWriter = (options: Partial<MqttWriterOptions> = {}): MqttWriter =>
    new MqttWriter({
      settings: mqttSettings(broker.port),
      log: rec.log,
      errors: errors.tracker,
      connectTimeoutMs: 3_000,
      ...options,
    });

  beforeAll(async () => {
    broker = await startMosquitto();
    sub = await subscriber(broker.url, 'svc-test/#');
  });

  afterAll(async () => {
    await sub.client.endAsync();
    await broker.stop();
  });

  beforeEach(async () => {
    sub.messages.length = 0;
    rec = recordingLog();
    errors = trackerWithSink();
    writer = newWriter();
    await writer.start();
  });

  afterEach(async () => {
    await writer.stop();
    await Promise.all(extraClients.splice(0).map((c) => c.endAsync()));
  });

  it('connects at start and publishes the exact topic and UTF-8 payload with QoS 0, not retained', async () => {
    expect(writer.connected).toBe(true);
    expect(writer.url).toBe(`mqtt://127.0.0.1:${broker.port}`);
    expect(rec.at('info')).toEqual([expect.objectContaining({ msg: 'connected to the MQTT broker' })]);

    const json = JSON.stringify(
      { messageType: 'qs-proxy-session', userId: 'göran', message: "Start session for user 'LAB\\göran' ✓" },
      null,
      2,
    );
    expect(await writer.publish('svc-test/node1.lab.local/mem/committed', '4213.6', MODULE)).toBe(true);
    expect(await writer.publish('svc-test/userevent', json, 'USER_EVENTS_MQTT')).toBe(true);
    expect(await writer.publish('svc-test/unicode', 'Grüße 🚀', MODULE)).toBe(true);

    await until('three messages', () => sub.messages.length >= 3);
    expect(sub.messages).toEqual([
      { topic: 'svc-test/node1.lab.local/mem/committed', payload: '4213.6', qos: 0, retain: false },
      { topic: 'svc-test/userevent', payload: json, qos: 0, retain: false },
      { topic: 'svc-test/unicode', payload: 'Grüße 🚀', qos: 0, retain: false },
    ]);
    expect(errors.tracked).toEqual([]);
  });

  it('does not retain: a subscriber that comes later gets nothing', async () => {
    const topic = `svc-test/retain/${Date.now()}`;
    expect(await writer.publish(topic, 'once', MODULE)).toBe(true);
    await until('the live subscriber to get it', () => sub.messages.some((m) => m.topic === topic));

    const late = await subscriber(broker.url, topic);
    extraClients.push(late.client);
    // A retained message would arrive right after the SUBACK.
    await sleep(400);
    expect(late.messages).toEqual([]);
  });

  it('publishes levels built from data with + and # replaced by _', async () => {
    const host = 'node+1#lab';
    const topic = `svc-test/${topicLevel(host)}/cpu/total`;
    expect(await writer.publish(topic, '12', MODULE)).toBe(true);
    await until('the message', () => sub.messages.length >= 1);
    expect(sub.messages[0]?.topic).toBe('svc-test/node_1_lab/cpu/total');
  });

  it('refuses a topic with a wildcard (tracked with the module) and stays connected', async () => {
    expect(await writer.publish('svc-test/node+1/cpu', '1', 'PROXY_SESSIONS_MQTT')).toBe(false);
    expect(errors.tracked).toHaveLength(1);
    expect(errors.tracked[0]).toMatchObject({
      type: 'MQTT_PUBLISH',
      module: 'PROXY_SESSIONS_MQTT',
      category: 'mqtt_error',
    });
    expect(errors.tracked[0]?.error).toMatchObject({ host: '127.0.0.1', topic: 'svc-test/node+1/cpu' });
    expect(rec.at('error')).toEqual([
      expect.objectContaining({
        msg: 'MQTT publish failed',
        obj: expect.objectContaining({ module: 'PROXY_SESSIONS_MQTT' }),
      }),
    ]);

    expect(await writer.publish('svc-test/after', 'still here', MODULE)).toBe(true);
    await until('the message', () => sub.messages.length >= 1);
    expect(sub.messages.map((m) => m.topic)).toEqual(['svc-test/after']);
    expect(writer.connected).toBe(true);
  });

  it('stop() lets in-flight publishes finish, then disconnects; later publishes return false and are tracked', async () => {
    const pending = Array.from({ length: 50 }, (_, i) => writer.publish(`svc-test/burst/${i}`, `m${i}`, MODULE));
    await writer.stop();
    expect(await Promise.all(pending)).toEqual(Array.from({ length: 50 }, () => true));
    await until('all 50 messages', () => sub.messages.length >= 50);
    expect(sub.messages.map((m) => m.payload)).toEqual(Array.from({ length: 50 }, (_, i) => `m${i}`));
    expect(writer.connected).toBe(false);

    expect(await writer.publish('svc-test/late', 'x', 'LOG_EVENTS_MQTT')).toBe(false);
    expect(errors.tracked.map((t) => [t.type, t.module])).toEqual([['MQTT_PUBLISH', 'LOG_EVENTS_MQTT']]);
  });

  it('stop() also waits for publishes held back by a full socket buffer', async () => {
    // 2 MB payloads fill the socket buffer: their writes complete only on 'drain'.
    const big = (i: number): string => `${i}:`.padEnd(2 * 1024 * 1024, 'x');
    const pending = Array.from({ length: 12 }, (_, i) => writer.publish(`svc-test/big/${i}`, big(i), MODULE));
    await writer.stop();
    expect(await Promise.all(pending)).toEqual(Array.from({ length: 12 }, () => true));
    await until('all 12 messages', () => sub.messages.length >= 12);
    expect(sub.messages.map((m) => m.payload.slice(0, 3))).toEqual(
      Array.from({ length: 12 }, (_, i) => `${i}:`.padEnd(3, 'x')),
    );
    expect(errors.tracked).toEqual([]);
  });

  it('a publish before start() returns false and is tracked', async () => {
    const idle = newWriter();
    expect(await idle.publish('svc-test/x', 'x', MODULE)).toBe(false);
    expect(errors.tracked.map((t) => [t.type, t.module])).toEqual([['MQTT_PUBLISH', MODULE]]);
    await idle.stop();
  });
});

describe('MqttWriter when the broker is down at start, comes up, and goes away', () => {
  let port: number;
  let broker: { stop(): Promise<void> } | undefined;
  let writer: MqttWriter;
  const rec = recordingLog();
  const errors = trackerWithSink();

  beforeAll(async () => {
    port = await freePort();
    writer = new MqttWriter({
      settings: mqttSettings(port),
      log: rec.log,
      errors: errors.tracker,
      connectTimeoutMs: 3_000,
      reconnectPeriodMs: 200,
    });
  });

  afterAll(async () => {
    await writer.stop();
    await broker?.stop();
  });

  it('start() resolves with a WARN when no broker listens; publishes return false and are tracked with host', async () => {
    const started = Date.now();
    await writer.start();
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(writer.connected).toBe(false);
    expect(rec.at('warn')).toEqual([
      expect.objectContaining({
        msg: expect.stringMatching(/not reached at start/),
        obj: expect.objectContaining({ host: '127.0.0.1', port, code: 'ECONNREFUSED' }),
      }),
    ]);

    // The outage itself is tracked once (module MQTT_CONNECTION), then each failed publish.
    expect(errors.tracked).toHaveLength(1);
    expect(errors.tracked[0]).toMatchObject({
      type: 'MQTT_PUBLISH',
      module: MQTT_CONNECTION_MODULE,
      destinationHost: '127.0.0.1',
      category: 'connection_refused',
    });
    expect(await writer.publish('svc-test/down', '1', MODULE)).toBe(false);
    expect(errors.tracked).toHaveLength(2);
    expect(errors.tracked[1]).toMatchObject({ type: 'MQTT_PUBLISH', module: MODULE, category: 'mqtt_error' });
    const err = errors.tracked[1]?.error;
    expect(err).toBeInstanceOf(MqttPublishError);
    expect(err).toMatchObject({ host: '127.0.0.1', port, topic: 'svc-test/down' });
  });

  it('reconnects in the background once the broker is up, and publishes succeed', async () => {
    broker = await mosquittoOn(port);
    await until('the writer to reconnect', () => writer.connected);
    expect(rec.at('info')).toEqual([expect.objectContaining({ msg: 'reconnected to the MQTT broker' })]);

    const sub = await subscriber(`mqtt://${LOOPBACK}:${port}`, 'svc-test/#');
    try {
      expect(await writer.publish('svc-test/up', 'hello', MODULE)).toBe(true);
      await until('the message', () => sub.messages.length >= 1);
      expect(sub.messages).toEqual([{ topic: 'svc-test/up', payload: 'hello', qos: 0, retain: false }]);
    } finally {
      await sub.client.endAsync();
    }
  });

  it('broker stopped: publishes return false, each tracked as MQTT_PUBLISH with the module, ERROR logged once', async () => {
    const before = errors.tracked.length;
    const errorLinesBefore = rec.at('error').length;
    const warningsBefore = rec.at('warn').length;
    await broker?.stop();
    broker = undefined;
    await until('the writer to notice', () => !writer.connected);
    // One WARN for the outage ('connection lost' or 'connection error', depending on how the socket ended).
    await until('a WARN about the outage', () => rec.at('warn').length > warningsBefore);
    expect(rec.at('warn').slice(warningsBefore)).toEqual([
      expect.objectContaining({
        msg: expect.stringMatching(/^MQTT connection (lost|error)/),
        obj: expect.objectContaining({ host: '127.0.0.1', port }),
      }),
    ]);

    const results = [];
    for (let i = 0; i < 3; i++) results.push(await writer.publish('svc-test/gone', String(i), 'LOG_EVENTS_MQTT'));
    expect(results).toEqual([false, false, false]);

    const fresh = errors.tracked.slice(before);
    expect(fresh.map((t) => [t.type, t.module])).toEqual([
      ['MQTT_PUBLISH', MQTT_CONNECTION_MODULE],
      ['MQTT_PUBLISH', 'LOG_EVENTS_MQTT'],
      ['MQTT_PUBLISH', 'LOG_EVENTS_MQTT'],
      ['MQTT_PUBLISH', 'LOG_EVENTS_MQTT'],
    ]);
    expect(fresh[1]?.error).toMatchObject({ host: '127.0.0.1' });
    expect(errors.tracker.summary().details.MQTT_PUBLISH?.total).toBe(before + 4);
    // Throttled: one ERROR line for the three failures of this module.
    const newErrorLines = rec.at('error').slice(errorLinesBefore);
    expect(newErrorLines).toHaveLength(1);
    expect(newErrorLines[0]?.obj).toMatchObject({ module: 'LOG_EVENTS_MQTT', host: '127.0.0.1', port });

    // stop() does not hang on a client that is reconnecting.
    const stopping = Date.now();
    await writer.stop();
    expect(Date.now() - stopping).toBeLessThan(1_000);
  });
});

describe('MqttWriter when the broker accepts TCP but never answers CONNECT', () => {
  let server: net.Server;
  const sockets = new Set<net.Socket>();

  beforeAll(async () => {
    server = net.createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, LOOPBACK, () => resolve()));
  });

  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('start() resolves after connectTimeoutMs with a WARN', async () => {
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no address');
    const rec = recordingLog();
    const { tracker } = trackerWithSink();
    const writer = new MqttWriter({
      settings: mqttSettings(address.port),
      log: rec.log,
      errors: tracker,
      connectTimeoutMs: 300,
      reconnectPeriodMs: 10_000,
    });
    const started = Date.now();
    await writer.start();
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(250);
    expect(elapsed).toBeLessThan(2_000);
    expect(writer.connected).toBe(false);
    expect(rec.at('warn')[0]?.msg).toMatch(/not reached at start/);
    expect(await writer.publish('svc-test/x', 'x', MODULE)).toBe(false);
    await writer.stop();
  });
});
