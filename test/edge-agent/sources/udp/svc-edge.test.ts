/**
 * The real processes: `svc edge` receives what `svc simulate udp` sends and publishes it to a real
 * mosquitto; malformed datagrams are counted, not published; SIGTERM stops it cleanly.
 */
import { spawn } from 'node:child_process';
import dgram from 'node:dgram';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatagramGenerator, DEFAULT_START_MS } from '../../../../edge-agent/simulate/messages.js';
import { REPO_ROOT } from '../../../support/build.js';
import { type MosquittoHandle, startMosquitto } from '../../../support/mosquitto.js';
import { freeUdpPort, LOOPBACK, trackChild } from '../../../support/ports.js';

const SVC = join(REPO_ROOT, 'node_modules/.bin/svc');

function run(args: string[], cwd: string) {
  const child = spawn(SVC, args, { cwd, env: { ...process.env, SVC_CONFIG: '' } });
  trackChild(child);
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  return { child, output: () => out, exited };
}

let broker: MosquittoHandle;
let dir: string;

beforeAll(async () => {
  broker = await startMosquitto();
  dir = mkdtempSync(join(tmpdir(), 'svc-edge-'));
});

afterAll(async () => {
  await broker?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('svc edge with svc simulate udp', () => {
  it('publishes every well-formed simulated log event to MQTT and none of the malformed ones', async () => {
    const port = await freeUdpPort();
    writeFileSync(
      join(dir, 'svc.yaml'),
      [
        'Svc:',
        '  localQueue: { directory: queue }',
        `  mqttConfig: { enable: true, brokerHost: ${LOOPBACK}, brokerPort: ${broker.port} }`,
        '  logEvents:',
        `    udpServerConfig: { serverHost: ${LOOPBACK}, portLogEvents: ${port} }`,
        '    source: { engine: { enable: true }, proxy: { enable: true }, repository: { enable: true }, scheduler: { enable: true } }',
        '    sendToMQTT: { enable: true, baseTopic: sim/logevent, postTo: { baseTopic: true } }',
        '',
      ].join('\n'),
    );
    const subscriber = await mqtt.connectAsync(broker.url);
    const topics: string[] = [];
    await subscriber.subscribeAsync('sim/#');
    subscriber.on('message', (topic) => topics.push(topic));
    const edge = run(['edge', '--config', 'svc.yaml'], dir);
    try {
      await expect
        .poll(edge.output, { timeout: 15_000 })
        .toContain(`log_events listener receiving on udp://${LOOPBACK}:${port}`);
      const sim = run(
        [
          'simulate',
          'udp',
          '--target',
          `${LOOPBACK}:${port}`,
          '--kinds',
          'engine,proxy,repository,scheduler',
          '--rate',
          '500',
          '--count',
          '300',
          '--malformed',
          '0.1',
          '--seed',
          '7',
        ],
        dir,
      );
      expect(await sim.exited).toBe(0);
      // The same seed and options give the same stream: what Svc must accept is known exactly.
      const generator = createDatagramGenerator({
        seed: 7,
        kinds: ['engine', 'proxy', 'repository', 'scheduler'],
        malformed: 0.1,
        startMs: DEFAULT_START_MS,
        stepMs: 1000 / 500,
      });
      const stream = Array.from({ length: 300 }, () => generator.next());
      const wellFormed = stream.filter((d) => d.expected === 'ok').length;
      expect(wellFormed).toBeLessThan(300);
      await expect.poll(() => topics.length, { timeout: 15_000 }).toBe(wellFormed);
      expect(new Set(topics)).toEqual(new Set(['sim/logevent']));
    } finally {
      edge.child.kill('SIGTERM');
      await subscriber.endAsync();
    }
    expect(await edge.exited).toBe(0);
    expect(edge.output()).toContain('shutdown complete');
  }, 60_000);

  it('stops with a clear error and exit code 1 when a listener port is taken', async () => {
    const blocker = dgram.createSocket('udp4');
    const port = await new Promise<number>((resolve) =>
      blocker.bind(0, LOOPBACK, () => resolve(blocker.address().port)),
    );
    try {
      writeFileSync(
        join(dir, 'taken.yaml'),
        [
          'Svc:',
          '  localQueue: { directory: queue-taken }',
          '  userEvents:',
          '    enable: true',
          `    udpServerConfig: { serverHost: ${LOOPBACK}, portUserActivityEvents: ${port} }`,
          '',
        ].join('\n'),
      );
      const edge = run(['edge', '--config', 'taken.yaml'], dir);
      expect(await edge.exited).toBe(1);
      expect(edge.output()).toContain(`the user_events listener cannot bind UDP ${LOOPBACK}:${port}: bind EADDRINUSE`);
    } finally {
      blocker.close();
    }
  }, 30_000);
});
