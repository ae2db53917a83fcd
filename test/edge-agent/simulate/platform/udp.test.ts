/**
 * UDP traffic from the platform simulator, over real UDP on 127.0.0.1: the user events name the
 * simulated users, and their apps are the apps of the app list the simulator serves, so Svc finds
 * their names; the log events too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_START_MS, LOG_KINDS, USER_KINDS } from '../../../../edge-agent/simulate/messages.js';
import { type PlatformSimulator, startPlatformSimulator } from '../../../../edge-agent/simulate/platform/server.js';
import { driveUdp } from '../../../../edge-agent/simulate/platform/udp.js';
import { parseLogEvent, parseUserEvent } from '../../../../edge-agent/sources/udp/parse/index.js';
import { type Receiver, startReceiver } from '../receiver.js';
import { get, json, SA_REPOSITORY, svcClient, withKey, XRFKEY } from './client.js';

let sim: PlatformSimulator;
let appIds: Set<string>;
const receivers: Receiver[] = [];

beforeAll(async () => {
  sim = await startPlatformSimulator({ seed: 5, servers: 2, stepMs: 0 });
  // The app list as Svc's app-name poller gets it.
  const list = json(
    await get(withKey(sim.appListUrl, 'xrfkey'), svcClient(sim.certs), {
      'X-Qlik-Xrfkey': XRFKEY,
      'X-Qlik-User': SA_REPOSITORY,
    }),
  );
  appIds = new Set(Array.isArray(list) ? list.map((app: { id?: unknown }) => String(app.id)) : []);
});

afterAll(async () => {
  await sim.stop();
  await Promise.all(receivers.map((r) => r.close()));
});

/** Drives UDP to a fresh receiver until it holds `count` datagrams; returns them. */
async function collect(kinds: typeof USER_KINDS, count: number, seed = sim.seed): Promise<Buffer[]> {
  const receiver = await startReceiver();
  receivers.push(receiver);
  const controller = new AbortController();
  const run = driveUdp({
    pool: sim.pool,
    seed,
    host: '127.0.0.1',
    port: receiver.port,
    rate: 2000,
    kinds,
    signal: controller.signal,
    startMs: DEFAULT_START_MS,
  });
  await expect.poll(() => receiver.datagrams.length, { timeout: 15_000 }).toBeGreaterThanOrEqual(count);
  controller.abort();
  const stats = await run;
  expect(stats.sendErrors).toBe(0);
  expect(stats.sent).toBeGreaterThanOrEqual(count);
  return receiver.datagrams.slice(0, count);
}

describe('driveUdp with the simulator pool', () => {
  it('sends user events of the simulated users, whose /app/<id> contexts name apps of the app list', async () => {
    expect(appIds.size).toBe(sim.apps.length);
    const users = new Set(sim.users.map((u) => `${u.dir}\\${u.id}`));
    const seenApps = new Set<string>();
    const commands = new Set<string>();
    for (const datagram of await collect(USER_KINDS, 300)) {
      const result = parseUserEvent(datagram, Date.now());
      expect(result.ok, datagram.toString('utf8')).toBe(true);
      if (!result.ok) continue;
      const { event } = result;
      expect(users.has(event.user_full)).toBe(true);
      expect(['node1', 'node2']).toContain(event.host);
      commands.add(event.command);
      if (event.appId !== undefined) {
        expect(appIds.has(event.appId)).toBe(true);
        seenApps.add(event.appId);
      }
    }
    expect([...commands].sort()).toEqual(['Close connection', 'Open connection', 'Start session', 'Stop session']);
    expect(seenApps.size).toBeGreaterThan(5);
  });

  it('sends log events naming the simulated apps', async () => {
    const seenApps = new Set<string>();
    for (const datagram of await collect(LOG_KINDS, 300)) {
      const result = parseLogEvent(datagram, Date.now());
      expect(result.ok, datagram.toString('utf8')).toBe(true);
      if (!result.ok) continue;
      const event: Record<string, unknown> = { ...result.event };
      expect(['node1', 'node2']).toContain(event['host']);
      const appId = event['app_id'];
      if (typeof appId === 'string' && appId !== '') seenApps.add(appId);
    }
    expect(seenApps.size).toBeGreaterThan(5);
    for (const id of seenApps) expect(appIds.has(id)).toBe(true);
  });

  it('is reproducible: the same seed sends the same datagrams', async () => {
    const [a, b] = await Promise.all([collect(USER_KINDS, 100, 77), collect(USER_KINDS, 100, 77)]);
    expect(b.map((d) => d.toString('hex'))).toEqual(a.map((d) => d.toString('hex')));
    const c = await collect(USER_KINDS, 100, 78);
    expect(c.map((d) => d.toString('hex'))).not.toEqual(a.map((d) => d.toString('hex')));
  });
});
