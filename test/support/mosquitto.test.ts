import { existsSync } from 'node:fs';
import { connectAsync, type MqttClient } from 'mqtt';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type MosquittoHandle, startMosquitto } from './mosquitto.js';

function nextMessage(client: MqttClient, timeoutMs = 5_000): Promise<{ topic: string; payload: string }> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      client.removeListener('message', onMessage);
      reject(new Error(`no MQTT message within ${timeoutMs} ms`));
    }, timeoutMs);
    const onMessage = (topic: string, payload: Buffer): void => {
      clearTimeout(timer);
      client.removeListener('message', onMessage);
      resolve({ topic, payload: payload.toString('utf8') });
    };
    client.on('message', onMessage);
  });
}

describe('startMosquitto (real mosquitto)', () => {
  let broker: MosquittoHandle | undefined;
  let dir = '';
  const clients: MqttClient[] = [];

  const server = (): MosquittoHandle => {
    if (broker === undefined) throw new Error('mosquitto not started');
    return broker;
  };

  beforeAll(async () => {
    broker = await startMosquitto();
    dir = broker.dir;
  });

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.endAsync()));
  });

  afterAll(async () => {
    const pid = broker?.pid;
    await broker?.stop();
    if (pid !== undefined) expect(() => process.kill(pid, 0)).toThrow();
    if (dir !== '') expect(existsSync(dir)).toBe(false);
  });

  it('listens on a free loopback port', () => {
    const b = server();
    expect(b.host).toBe('127.0.0.1');
    expect(b.port).not.toBe(1883);
    expect(b.url).toBe(`mqtt://127.0.0.1:${b.port}`);
    expect(b.pid).toBeTypeOf('number');
  });

  it('delivers a published message to a subscriber', async () => {
    const b = server();
    const opts = { connectTimeout: 5_000, reconnectPeriod: 0 };
    const sub = await connectAsync(b.url, { ...opts, clientId: `sub-${process.pid}` });
    clients.push(sub);
    const pub = await connectAsync(b.url, { ...opts, clientId: `pub-${process.pid}` });
    clients.push(pub);

    const topic = `support/test/${process.pid}/temperature`;
    const granted = await sub.subscribeAsync(topic, { qos: 1 });
    expect(granted).toEqual([expect.objectContaining({ topic, qos: 1 })]);

    const received = nextMessage(sub);
    const payload = JSON.stringify({ celsius: 21.5, at: '2024-01-01T00:00:00Z' });
    await pub.publishAsync(topic, payload, { qos: 1 });

    expect(await received).toEqual({ topic, payload });
  });
});
