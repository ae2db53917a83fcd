/**
 * Platform monitoring end to end, with real parts only: the platform simulator serves three servers
 * over real mutual TLS (in this process, `stepMs: 0`, so only step() moves it and every poll of a
 * step gets the same body), a real `svc local` child process polls it, and what it made of the
 * answers is read back where an operator would: a real influxd (§6.1, §6.2, §6.10), a real mosquitto
 * (§7.1, §7.2), the metrics endpoint over HTTP (§9) and the process's log. The expected values come
 * from the simulator itself, fetched over the same mutual TLS with its client certificate.
 *
 * Also: one server failing in each of the simulator's modes while the others go on; user exclusion
 * in the session data (§0.5, §5.1); app names from the simulator's app list in user events (§1.4)
 * and in the engine-performance filter (§2.4). Versions 2 and 3 of the tsdb (no server of those can
 * be installed here) are checked line by line against test/support/fake-influx.ts.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Static, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { createDatagramGenerator, type SimDatagram } from '../../../../edge-agent/simulate/messages.js';
import type { FailureMode } from '../../../../edge-agent/simulate/platform/failures.js';
import {
  type PlatformSimulator,
  type SimulatedServerInfo,
  startPlatformSimulator,
} from '../../../../edge-agent/simulate/platform/server.js';
import { HealthBodySchema, ProxySessionSchema } from '../../../../shared/platform/polled.js';
import { type FakeInflux, startFakeInflux } from '../../../support/fake-influx.js';
import { fieldTypes, type InfluxdHandle, queryRows, startInfluxd, tagKeys } from '../../../support/influxd.js';
import { type MosquittoHandle, startMosquitto } from '../../../support/mosquitto.js';
import { freePort, freeUdpPort, LOOPBACK } from '../../../support/ports.js';
import { type Exposition, scrape } from '../../../support/prometheus.js';
import { logLines, type SvcProcess, startSvc } from '../../../support/svc-process.js';
import { eventually, sendDatagrams } from '../../../support/udp.js';
import { type ClientTls, get, json, svcClient, withKey, XRFKEY } from '../../simulate/platform/client.js';

const SEED = 20_250_611;
/** Health and session polls: short, so failures and recoveries show within seconds. */
const POLL_MS = 2_000;
const DB = 'e2e';
const BASE_TOPIC = 'e2e/';
/** Every simulated server listens on the simulator's one address: the `host` tag, and the MQTT topic level, of all three. */
const HOST = LOOPBACK;

type HealthBody = Static<typeof HealthBodySchema>;
const SessionListSchema = Type.Array(ProxySessionSchema);
type SessionList = Static<typeof SessionListSchema>;

let dir: string;
let influx: InfluxdHandle;
let broker: MosquittoHandle;
let sim: PlatformSimulator;
let tls: ClientTls;
let svc: SvcProcess;
let subscriber: mqtt.MqttClient;
let metricsUrl: string;
let userPort: number;
let logPort: number;
/** The user `userSessions.excludeUser` names (written in another case: §0.5 compares case-insensitively). */
let excluded: { dir: string; id: string };
/** Datagrams of the simulated platform, made before the start so that the filter's app is one they name. */
let userDatagrams: SimDatagram[];
let perfDatagrams: SimDatagram[];
let perfAppName: string;

interface Received {
  topic: string;
  payload: string;
  qos: number;
  retain: boolean;
}
const received: Received[] = [];

// ---------------------------------------------------------------------------------------------
// What the simulator serves (over the same mutual TLS as Svc)

async function healthOf(server: SimulatedServerInfo): Promise<HealthBody> {
  const reply = await get(server.healthUrl, tls);
  expect(reply.status).toBe(200);
  const body = json(reply);
  if (!Value.Check(HealthBodySchema, body)) throw new Error(`not a health body: ${reply.text.slice(0, 200)}`);
  return body;
}

async function sessionsOf(server: SimulatedServerInfo, vp: string): Promise<SessionList> {
  const reply = await get(withKey(server.sessionUrls[vp] ?? ''), tls, { 'X-Qlik-Xrfkey': XRFKEY });
  expect(reply.status).toBe(200);
  const body = json(reply);
  if (!Value.Check(SessionListSchema, body)) throw new Error(`not a session list: ${reply.text.slice(0, 200)}`);
  return body;
}

const isExcluded = (s: { UserDirectory: string; UserId: string }): boolean =>
  s.UserDirectory.toLowerCase() === excluded.dir.toLowerCase() && s.UserId.toLowerCase() === excluded.id.toLowerCase();

/** §4 server tags of a simulated server, as its config names them. */
function serverTags(index: number): Record<string, string> {
  const server = sim.servers[index] ?? expect.fail(`no server ${index}`);
  return {
    host: HOST,
    server_name: server.name,
    server_description: server.description,
    site: 'simulator',
    role: index === 0 ? 'central' : 'rim',
  };
}

function appName(id: string): string {
  return sim.apps.find((a) => a.id === id)?.name ?? expect.fail(`app ${id} is not in the simulator's app list`);
}

/** §4 doc names: the app ids by their names in the app list, sorted by code unit; the session apps apart, sorted. */
function docNames(ids: readonly string[]): { names: string; session: string } {
  const session = ids.filter((id) => id.startsWith('SessionApp'));
  const names = ids.filter((id) => !id.startsWith('SessionApp')).map(appName);
  return { names: names.sort().join(','), session: session.sort().join(',') };
}

/** `started` in the platform's compact ISO form with an offset (`20240312T081512.000+0100`), as ms since the epoch. */
function compactIsoMs(text: string): number {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})\.(\d{3})([+-])(\d{2})(\d{2})$/.exec(text);
  if (!m) throw new Error(`not a compact ISO time: ${text}`);
  const [y, mo, d, h, mi, s, ms, sign, oh, om] = m.slice(1);
  const local = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), Number(ms));
  return local - (sign === '-' ? -1 : 1) * (Number(oh) * 60 + Number(om)) * 60_000;
}

/** §4 uptime: `<d> days, <h>h <mm>m <ss>s` between `started` and `atMs`. */
function uptime(started: string, atMs: number): string {
  const total = Math.floor((atMs - compactIsoMs(started)) / 1000);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${Math.floor(total / 86_400)} days, ${Math.floor((total % 86_400) / 3600)}h ${two(Math.floor((total % 3600) / 60))}m ${two(total % 60)}s`;
}

/** §7.1: the payload of each health topic suffix for one body. */
function healthPayloads(b: HealthBody): Record<string, string> {
  return {
    '/version': b.version,
    '/started': b.started,
    '/mem/committed': String(b.mem.committed),
    '/mem/allocated': String(b.mem.allocated),
    '/mem/free': String(b.mem.free),
    '/cpu/total': String(b.cpu.total),
    '/session/active': String(b.session.active),
    '/session/total': String(b.session.total),
    '/users/active': String(b.users.active),
    '/users/total': String(b.users.total),
    '/apps/active_docs': b.apps.active_docs.join(','),
    '/apps/loaded_docs': b.apps.loaded_docs.join(','),
    '/apps/in_memory_docs': b.apps.in_memory_docs.join(','),
    '/apps/calls': String(b.apps.calls),
    '/apps/selections': String(b.apps.selections),
    '/cache/hits': String(b.cache.hits),
    '/cache/lookups': String(b.cache.lookups),
    '/cache/added': String(b.cache.added),
    '/cache/replaced': String(b.cache.replaced),
    '/cache/bytes_added': String(b.cache.bytes_added),
    // The simulator's caches are never empty (lookups > 0), so the ratio is always sent.
    '/cache/hit_ratio': String(Math.floor((b.cache.hits * 100) / b.cache.lookups)),
    '/saturated': String(b.saturated),
  };
}

/** §9: every gauge of one health body, by metric name. */
function healthGauges(b: HealthBody): Record<string, number> {
  const MB = 1_048_576;
  return {
    svc_apps_calls: b.apps.calls,
    svc_apps_selections: b.apps.selections,
    svc_apps_activedocs_total: b.apps.active_docs.length,
    svc_apps_loadeddocs_total: b.apps.loaded_docs.length,
    svc_apps_inmemorydocs_total: b.apps.in_memory_docs.length,
    svc_cache_hits: b.cache.hits,
    svc_cache_lookups: b.cache.lookups,
    svc_cache_added: b.cache.added,
    svc_cache_replaced: b.cache.replaced,
    svc_cache_bytes_added: b.cache.bytes_added,
    svc_cache_saturated: b.saturated ? 1 : 0,
    svc_cpu_total: b.cpu.total,
    svc_mem_committed: b.mem.committed * MB,
    svc_mem_allocated: b.mem.allocated * MB,
    svc_mem_free: b.mem.free * MB,
    svc_session_active: b.session.active,
    svc_session_total: b.session.total,
    svc_users_active: b.users.active,
    svc_users_total: b.users.total,
  };
}

/** The values the endpoint shows for the metrics `names` with one server's labels (undefined: no single series). */
function shownGauges(
  metrics: Exposition,
  labels: Record<string, string>,
  names: readonly string[],
): Record<string, number | undefined> {
  return Object.fromEntries(
    names.map((name) => {
      const series = metrics.series(name, labels);
      return [name, series.length === 1 ? series[0]?.value : undefined];
    }),
  );
}

// ---------------------------------------------------------------------------------------------
// Reading back

const metrics = async (): Promise<Exposition> => (await scrape(metricsUrl)).metrics;
const rows = (q: string): Promise<Record<string, unknown>[]> => queryRows(influx, q, DB).catch(() => []);
const rowsMs = (q: string): Promise<Record<string, unknown>[]> =>
  queryRows(influx, q, DB, { epoch: 'ms' }).catch(() => []);
/** The last row of each series (rows come in time order within a series). */
function lastBy(
  all: readonly Record<string, unknown>[],
  key: (row: Record<string, unknown>) => string,
): Map<string, Record<string, unknown>> {
  const last = new Map<string, Record<string, unknown>>();
  for (const row of all) last.set(key(row), row);
  return last;
}
const failedPolls = (m: Exposition, kind: 'health' | 'sessions', server: string): number =>
  m.series('svc_polls_failed_total', { kind, server_name: server })[0]?.value ?? 0;

// ---------------------------------------------------------------------------------------------

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-monitor-e2e-'));
  [influx, broker, sim] = await Promise.all([
    startInfluxd(),
    startMosquitto(),
    startPlatformSimulator({ servers: 3, stepMs: 0, seed: SEED, certDir: join(dir, 'certs') }),
  ]);
  tls = svcClient(sim.certs);

  // The user with the most sessions at the simulator's first step is the one excluded, named in another case.
  const counts = new Map<string, { dir: string; id: string; n: number }>();
  for (const server of sim.servers) {
    for (const vp of sim.virtualProxies) {
      for (const s of await sessionsOf(server, vp)) {
        const key = `${s.UserDirectory}\\${s.UserId}`;
        counts.set(key, { dir: s.UserDirectory, id: s.UserId, n: (counts.get(key)?.n ?? 0) + 1 });
      }
    }
  }
  const top = [...counts.values()].sort((a, b) => b.n - a.n)[0] ?? expect.fail('the simulator has no sessions');
  excluded = { dir: top.dir.toLowerCase(), id: top.id.toUpperCase() };

  // User events and engine-performance events about the simulator's users and apps; the filter lets
  // through the app the performance events name most often.
  const now = Date.now();
  const userGen = createDatagramGenerator({
    seed: SEED,
    kinds: ['user-connection', 'user-session'],
    pool: sim.pool,
    startMs: now,
  });
  const perfGen = createDatagramGenerator({ seed: SEED + 1, kinds: ['qix-perf'], pool: sim.pool, startMs: now });
  userDatagrams = Array.from({ length: 30 }, () => userGen.next());
  perfDatagrams = Array.from({ length: 40 }, () => perfGen.next());
  const perApp = new Map<string, number>();
  for (const d of perfDatagrams)
    perApp.set(appName(d.fields?.[13] ?? ''), (perApp.get(appName(d.fields?.[13] ?? '')) ?? 0) + 1);
  perfAppName = [...perApp.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? expect.fail('no performance events');

  const metricsPort = await freePort();
  [userPort, logPort] = [await freeUdpPort(), await freeUdpPort()];
  metricsUrl = `http://${LOOPBACK}:${metricsPort}/metrics`;
  const simSvc = sim.config.Svc;
  const config = {
    Svc: {
      uptimeMonitor: { enable: false },
      systemInfo: { enable: false },
      localQueue: { directory: 'queue' },
      cert: simSvc.cert,
      serversToMonitor: { ...simSvc.serversToMonitor, pollingInterval: POLL_MS },
      userSessions: {
        ...simSvc.userSessions,
        pollingInterval: POLL_MS,
        excludeUser: [{ directory: excluded.dir, userId: excluded.id }],
      },
      appNames: { ...simSvc.appNames, extractInterval: 5_000 },
      metricsEndpoint: { enable: true, host: LOOPBACK, port: metricsPort },
      tsdbConfig: {
        enable: true,
        host: LOOPBACK,
        port: influx.port,
        version: 1,
        v1Config: { dbName: DB },
        includeFields: { activeDocs: true, loadedDocs: true, inMemoryDocs: true },
      },
      mqttConfig: { enable: true, brokerHost: LOOPBACK, brokerPort: broker.port, baseTopic: BASE_TOPIC },
      errorTracking: { enable: true, tsdb: { enable: true } },
      platformEvents: { tsdb: { enable: true, writeFrequency: 1_000 }, rejectedEventCount: { enable: true } },
      userEvents: {
        enable: true,
        udpServerConfig: { serverHost: LOOPBACK, portUserActivityEvents: userPort },
        sendToTsdb: { enable: true },
      },
      logEvents: {
        udpServerConfig: { serverHost: LOOPBACK, portLogEvents: logPort },
        source: { apiPerf: { enable: true } },
        sendToTsdb: { enable: true },
        enginePerformanceMonitor: {
          enable: true,
          appNameLookup: { enable: true },
          trackRejectedEvents: { enable: true },
          monitorFilter: {
            appSpecific: {
              enable: true,
              app: [
                {
                  include: [{ appName: perfAppName }],
                  objectType: { allObjectTypes: true },
                  appObject: { allAppObjects: true },
                  method: { allMethods: true },
                },
              ],
            },
          },
        },
      },
    },
  };
  mkdirSync(join(dir, 'svc'));
  writeFileSync(join(dir, 'svc', 'svc.yaml'), stringify(config));

  // Subscribed before Svc starts: the messages of its first polls are kept too.
  subscriber = await mqtt.connectAsync(broker.url);
  subscriber.on('message', (topic, payload, packet) =>
    received.push({ topic, payload: payload.toString('utf8'), qos: packet.qos, retain: packet.retain }),
  );
  await subscriber.subscribeAsync(`${BASE_TOPIC}#`);

  svc = startSvc(join(dir, 'svc'), 'local');
  await eventually(() => /svc local \S+ running/.test(svc.output()), 30_000, 'svc local running').catch(
    (err: unknown) => {
      throw new Error(`${String(err)}\n${svc.output()}`);
    },
  );
}, 90_000);

afterAll(async () => {
  if (svc) {
    svc.child.kill('SIGTERM');
    // A clean stop: polls in progress are cancelled, not failures (docs/platform-polling.md).
    expect(await svc.exited).toBe(0);
  }
  await subscriber?.endAsync();
  await Promise.all([influx?.stop(), broker?.stop(), sim?.stop()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
}, 30_000);

describe('svc local monitoring the simulated platform', () => {
  it('polls every server at start: the §6.1 points in influxd with their tags, field types and the values served', async () => {
    const bodies = await Promise.all(sim.servers.map(healthOf));
    // The health poller starts once the first app list is loaded (compose.ts): a poll only on the
    // interval would answer a whole interval after that line, the poll at start within it.
    const listLoaded =
      logLines(svc.output()).find((l) => /^app list of \S+ loaded: \d+ app\(s\)$/.test(l.msg)) ??
      expect.fail('the app list was not loaded');
    await expect
      .poll(async () => (await rows('SELECT * FROM server_info')).map((r) => r['server_name']), { timeout: 10_000 })
      .toEqual(expect.arrayContaining(['node1', 'node2', 'node3']));
    for (const server of sim.servers) {
      const [first] = await rowsMs(`SELECT * FROM server_info WHERE server_name = '${server.name}' LIMIT 1`);
      expect(Number(first?.['time'])).toBeLessThan(Date.parse(listLoaded.time) + POLL_MS);
    }
    // The session poller too (§0.7), each virtual proxy.
    await expect
      .poll(async () => (await rows('SELECT * FROM user_session_summary')).length, { timeout: 10_000 })
      .toBeGreaterThanOrEqual(sim.servers.length * sim.virtualProxies.length);
    for (const server of sim.servers) {
      for (const vp of sim.virtualProxies) {
        const [first] = await rowsMs(
          `SELECT * FROM user_session_summary WHERE server_name = '${server.name}' AND user_session_virtual_proxy = '${vp}' LIMIT 1`,
        );
        expect(Number(first?.['time']), `${server.name} ${vp}`).toBeLessThan(Date.parse(listLoaded.time) + POLL_MS);
      }
    }

    // §6.1's measurements, their tags (the server tags, configured tags last) and field types as influxd keeps them.
    const health = ['apps', 'cache', 'cpu', 'mem', 'saturated', 'server_info', 'session', 'users'];
    const measurements = (await rows('SHOW MEASUREMENTS')).map((r) => r['name']);
    expect(measurements).toEqual(expect.arrayContaining([...health, 'user_session_details', 'user_session_summary']));
    for (const m of health)
      expect((await tagKeys(influx, m, DB)).sort(), m).toEqual([
        'host',
        'role',
        'server_description',
        'server_name',
        'site',
      ]);
    const [int, float, str] = ['integer', 'float', 'string'];
    const docs = (x: string) => ({ [`${x}_docs`]: str, [`${x}_docs_names`]: str, [`${x}_session_docs_names`]: str });
    expect(await fieldTypes(influx, 'server_info', DB)).toEqual({ version: str, started: str, uptime: str });
    expect(await fieldTypes(influx, 'mem', DB)).toEqual({ committed: float, allocated: float, free: float });
    expect(await fieldTypes(influx, 'apps', DB)).toEqual({
      active_docs_count: int,
      loaded_docs_count: int,
      in_memory_docs_count: int,
      calls: int,
      selections: int,
      ...docs('active'),
      ...docs('loaded'),
      ...docs('in_memory'),
    });
    expect(await fieldTypes(influx, 'cpu', DB)).toEqual({ total: float });
    expect(await fieldTypes(influx, 'session', DB)).toEqual({ active: int, total: int });
    expect(await fieldTypes(influx, 'users', DB)).toEqual({ active: int, total: int });
    expect(await fieldTypes(influx, 'cache', DB)).toEqual({
      hits: int,
      lookups: int,
      added: int,
      replaced: int,
      bytes_added: int,
    });
    expect(await fieldTypes(influx, 'saturated', DB)).toEqual({ saturated: 'boolean' });

    // The values of each server's first poll: what the simulator served (the step has not moved).
    for (const [i, server] of sim.servers.entries()) {
      const b = bodies[i] ?? expect.fail('no body');
      const tags = serverTags(i);
      const where = `WHERE server_name = '${server.name}' LIMIT 1`;
      const [info] = await rowsMs(`SELECT * FROM server_info ${where}`);
      expect(info).toEqual({
        time: expect.any(Number),
        ...tags,
        version: b.version,
        started: b.started,
        uptime: uptime(b.started, Number(info?.['time'])),
      });
      const t = Number(info?.['time']);
      // One poll: the same millisecond, the points in the order of §6.1.
      const at = async (m: string) => (await rowsMs(`SELECT * FROM "${m}" ${where}`))[0];
      expect(await at('mem')).toEqual({
        time: t,
        ...tags,
        committed: b.mem.committed,
        allocated: b.mem.allocated,
        free: b.mem.free,
      });
      const [active, loaded, inMemory] = [
        docNames(b.apps.active_docs),
        docNames(b.apps.loaded_docs),
        docNames(b.apps.in_memory_docs),
      ];
      expect(await at('apps')).toEqual({
        time: t,
        ...tags,
        active_docs_count: b.apps.active_docs.length,
        loaded_docs_count: b.apps.loaded_docs.length,
        in_memory_docs_count: b.apps.in_memory_docs.length,
        calls: b.apps.calls,
        selections: b.apps.selections,
        active_docs: b.apps.active_docs.join(','),
        active_docs_names: active.names,
        active_session_docs_names: active.session,
        loaded_docs: b.apps.loaded_docs.join(','),
        loaded_docs_names: loaded.names,
        loaded_session_docs_names: loaded.session,
        in_memory_docs: b.apps.in_memory_docs.join(','),
        in_memory_docs_names: inMemory.names,
        in_memory_session_docs_names: inMemory.session,
      });
      expect(await at('cpu')).toEqual({ time: t, ...tags, total: b.cpu.total });
      expect(await at('session')).toEqual({ time: t, ...tags, active: b.session.active, total: b.session.total });
      expect(await at('users')).toEqual({ time: t, ...tags, active: b.users.active, total: b.users.total });
      expect(await at('cache')).toEqual({
        time: t,
        ...tags,
        hits: b.cache.hits,
        lookups: b.cache.lookups,
        added: b.cache.added,
        replaced: b.cache.replaced,
        bytes_added: b.cache.bytes_added,
      });
      expect(await at('saturated')).toEqual({ time: t, ...tags, saturated: b.saturated });
      // The simulator's docs name its apps: the names come from its app list, not the ids.
      expect(inMemory.names).not.toBe('');
    }
  });

  it('publishes one MQTT message per health value under the base topic (§7.1)', async () => {
    const bodies = await Promise.all(sim.servers.map(healthOf));
    const expected = bodies.map(healthPayloads);
    const suffixes = Object.keys(expected[0] ?? {});
    expect(suffixes).toHaveLength(22);
    // All three servers share the host 127.0.0.1 and so each topic: per topic, one payload per server.
    const payloadsOf = (suffix: string) =>
      new Set(received.filter((m) => m.topic === `${BASE_TOPIC}${HOST}${suffix}`).map((m) => m.payload));
    await expect
      .poll(() => suffixes.map((s) => [...payloadsOf(s)].sort()), { timeout: 3 * POLL_MS })
      .toEqual(suffixes.map((s) => [...new Set(expected.map((e) => e[s] ?? ''))].sort()));

    const health = received.filter((m) => !m.topic.includes('/usersession'));
    // One message per value and poll: every topic as often as every other, and nothing else.
    const perTopic = new Map<string, number>();
    for (const m of health) perTopic.set(m.topic, (perTopic.get(m.topic) ?? 0) + 1);
    expect([...perTopic.keys()].sort()).toEqual(suffixes.map((s) => `${BASE_TOPIC}${HOST}${s}`).sort());
    const counts = [...perTopic.values()];
    // A poll may be between its first and last publish at this moment: the counts differ by at most one poll per server.
    expect(Math.max(...counts) - Math.min(...counts)).toBeLessThanOrEqual(sim.servers.length);
    expect(Math.min(...counts)).toBeGreaterThanOrEqual(sim.servers.length);
    expect(health.every((m) => m.qos === 0 && !m.retain)).toBe(true);
  });

  it('keeps the excluded user out of every session output (§0.5, §5.1, §6.2, §7.2, §9)', async () => {
    const served = new Map<string, SessionList>();
    for (const server of sim.servers)
      for (const vp of sim.virtualProxies) served.set(`${server.name} ${vp}`, await sessionsOf(server, vp));
    // The exclusion takes something away, so that its absence below means something.
    expect([...served.values()].flat().filter(isExcluded).length).toBeGreaterThan(0);

    await expect
      .poll(async () => (await rows('SELECT * FROM user_session_summary')).length, { timeout: 3 * POLL_MS })
      .toBeGreaterThanOrEqual(served.size);
    const summaries = lastBy(
      await rowsMs('SELECT * FROM user_session_summary'),
      (r) => `${String(r['server_name'])} ${String(r['user_session_virtual_proxy'])}`,
    );
    expect([...summaries.keys()].sort()).toEqual([...served.keys()].sort());
    const m = await metrics();
    for (const [i, server] of sim.servers.entries()) {
      for (const vp of sim.virtualProxies) {
        const kept = (served.get(`${server.name} ${vp}`) ?? []).filter((s) => !isExcluded(s));
        const users = [...new Set(kept.map((s) => `${s.UserDirectory}\\${s.UserId}`))];
        const sessionTags = {
          ...serverTags(i),
          user_session_virtual_proxy: vp,
          user_session_host: `${HOST}:${server.proxyPort}`,
        };
        const summary = summaries.get(`${server.name} ${vp}`);
        expect(summary).toEqual({
          time: expect.any(Number),
          ...sessionTags,
          session_count: kept.length,
          session_user_id_list: users.join(','),
        });
        // One details point per remaining session, in the same poll (the summary's millisecond).
        const details = await rowsMs(
          `SELECT * FROM user_session_details WHERE server_name = '${server.name}' AND user_session_virtual_proxy = '${vp}' AND time >= ${Number(summary?.['time'])}ms AND time < ${Number(summary?.['time']) + 1}ms`,
        );
        expect(details.map(({ time: _, ...rest }) => rest)).toEqual(
          kept.map((s) => ({
            ...sessionTags,
            user_session_id: s.SessionId,
            user_session_user_directory: s.UserDirectory,
            user_session_user_id: s.UserId,
            session_id: s.SessionId,
            user_directory: s.UserDirectory,
            user_id: s.UserId,
          })),
        );
        expect(m.value('svc_user_session_total', sessionTags)).toBe(kept.length);
      }
    }
    // Not in any details point of any poll.
    const everyDetail = await rows('SELECT * FROM user_session_details');
    expect(
      everyDetail.filter((r) =>
        isExcluded({ UserDirectory: String(r['user_directory']), UserId: String(r['user_id']) }),
      ),
    ).toEqual([]);
    expect(await fieldTypes(influx, 'user_session_summary', DB)).toEqual({
      session_count: 'integer',
      session_user_id_list: 'string',
    });
    expect(await fieldTypes(influx, 'user_session_details', DB)).toEqual({
      session_id: 'string',
      user_directory: 'string',
      user_id: 'string',
    });

    // §7.2: the remaining array as JSON with a 2-space indent, per virtual proxy (all servers share the topic's host).
    for (const vp of sim.virtualProxies) {
      const topic = `${BASE_TOPIC}${HOST}/usersession${vp}`;
      const expected = sim.servers.map((s) =>
        JSON.stringify(
          (served.get(`${s.name} ${vp}`) ?? []).filter((x) => !isExcluded(x)),
          null,
          2,
        ),
      );
      await expect
        .poll(() => [...new Set(received.filter((r) => r.topic === topic).map((r) => r.payload))].sort(), {
          timeout: 3 * POLL_MS,
        })
        .toEqual([...new Set(expected)].sort());
    }
  });

  it('shows every server on the metrics endpoint (§9) and the new value after the platform moved on', async () => {
    const before = await Promise.all(sim.servers.map(healthOf));
    const m = await metrics();
    for (const [i, b] of before.entries()) {
      const labels = serverTags(i);
      const expected = healthGauges(b);
      expect(shownGauges(m, labels, Object.keys(expected))).toEqual(expected);
      expect(m.series('svc_engine_metadata', labels)).toEqual([
        {
          name: 'svc_engine_metadata',
          labels: { ...labels, engine_version: b.version, engine_started: b.started },
          value: 1,
        },
      ]);
    }
    for (const name of Object.keys(healthGauges(before[0] ?? expect.fail('no body'))))
      expect(m.type.get(name), name).toBe('gauge');

    sim.step(30);
    const after = await Promise.all(sim.servers.map(healthOf));
    // The engine's counters only grow: the step changed what every server serves.
    for (const [i, b] of after.entries()) expect(b.apps.calls).toBeGreaterThan(before[i]?.apps.calls ?? Infinity);
    await expect
      .poll(
        async () => {
          const now = await metrics();
          return after.map((b, i) => shownGauges(now, serverTags(i), Object.keys(healthGauges(b))));
        },
        { timeout: 3 * POLL_MS },
      )
      .toEqual(after.map(healthGauges));
  });
});

/**
 * How a failure mode shows: its category (§10.9), the log message after the URL, the svc_errors
 * fields beyond the common ones. `cert-reject`: the simulator refuses Svc's certificate in a TLS 1.3
 * handshake, after which the server may close the connection before its alert is read, so Svc sees a
 * reset connection (docs/platform-polling.md "Failures"); an alert read in time is a certificate error.
 */
const MODES: Record<FailureMode, { category: RegExp; message: RegExp; fields: Record<string, unknown> }> = {
  'http-500': { category: /^http_5xx$/, message: /^HTTP 500 \[http_5xx\]$/, fields: { http_status: 500 } },
  timeout: {
    category: /^timeout$/,
    message: /^no complete answer within 5000 ms \(timeout\) \[timeout\]$/,
    fields: { error_code: 'ETIMEDOUT' },
  },
  'bad-body': {
    category: /^invalid_response$/,
    message: /^invalid response: the body is not a health report: .+ \[invalid_response\]$/,
    fields: {},
  },
  'cert-reject': {
    category: /^(connection_reset|certificate_error)$/,
    message:
      /^(connection reset by the server \(ECONNRESET\) \[connection_reset\]|TLS handshake failed: .+ \[certificate_error\])$/,
    fields: { error_code: expect.stringMatching(/^(ECONNRESET|ERR_SSL_\w+)$/) },
  },
};

describe('one server failing', () => {
  /** Fails `index` in `mode`, checks what Svc makes of it, heals it and sees it come back. */
  async function failAndHeal(index: number, mode: FailureMode): Promise<void> {
    const server = sim.servers[index] ?? expect.fail(`no server ${index}`);
    const labels = serverTags(index);
    const { category, message, fields } = MODES[mode];
    const ofMode = (r: Record<string, unknown>) => category.test(String(r['error_category']));
    const start = await metrics();
    const [healthBefore, sessionsBefore] = [
      failedPolls(start, 'health', server.name),
      failedPolls(start, 'sessions', server.name),
    ];
    expect(start.series('svc_cpu_total', labels)).toHaveLength(1);

    sim.fail(server.name, mode);
    try {
      // Failed polls counted; every series of the server gone, its session series too (no old value shown as current).
      await expect
        .poll(
          async () => {
            const m = await metrics();
            return [
              failedPolls(m, 'health', server.name) > healthBefore,
              failedPolls(m, 'sessions', server.name) > sessionsBefore,
              m.series('svc_cpu_total', labels).length,
              m.series('svc_engine_metadata', labels).length,
              m.series('svc_user_session_total', labels).length,
            ];
          },
          { timeout: 4 * POLL_MS + 5_000 },
        )
        .toEqual([true, true, 0, 0, 0]);

      // Tracked as HEALTH_API with the category of the mode: a svc_errors point (§6.10) …
      const url = `https://${HOST}:${server.healthPort}/engine/healthcheck`;
      await expect
        .poll(
          async () =>
            (
              await rows(`SELECT * FROM svc_errors WHERE error_type = 'HEALTH_API' AND server_name = '${server.name}'`)
            ).filter(ofMode),
          { timeout: 10_000 },
        )
        .toContainEqual({
          time: expect.any(String),
          error_type: 'HEALTH_API',
          server_name: server.name,
          host: `${HOST}:${server.healthPort}`,
          error_count: 1,
          error_category: expect.stringMatching(category),
          request_url: url,
          request_timeout_ms: 5000,
          ...fields,
        });
      // … and as PROXY_API for each virtual proxy of the server's session API, with the virtual proxy.
      for (const vp of sim.virtualProxies) {
        const sessionUrl = `https://${HOST}:${server.proxyPort}/qps${vp === '/' ? '' : vp}/session`;
        await expect
          .poll(
            async () =>
              (
                await rows(
                  `SELECT * FROM svc_errors WHERE error_type = 'PROXY_API' AND server_name = '${server.name}' AND virtual_proxy = '${vp}'`,
                )
              ).filter(ofMode),
            { timeout: 10_000 },
          )
          .toContainEqual(
            expect.objectContaining({
              error_type: 'PROXY_API',
              server_name: server.name,
              host: `${HOST}:${server.proxyPort}`,
              virtual_proxy: vp,
              error_count: 1,
              request_url: sessionUrl,
              request_timeout_ms: 5000,
            }),
          );
      }
      // … and in the log: one ERROR line naming the server, the URL and the category.
      const prefix = `health poll of ${server.name} failed (${url}): `;
      const logged = logLines(svc.output())
        .filter((l) => l.level === 'error' && l.msg.startsWith(prefix))
        .map((l) => l.msg.slice(prefix.length));
      expect(
        logged.filter((text) => message.test(text)),
        logged.join('\n'),
      ).not.toEqual([]);
    } finally {
      sim.heal(server.name);
    }
    await expect
      .poll(
        async () => {
          const m = await metrics();
          return [
            m.series('svc_cpu_total', labels).length,
            m.series('svc_engine_metadata', labels).length,
            m.series('svc_user_session_total', labels).length,
          ];
        },
        { timeout: 3 * POLL_MS + 5_000 },
      )
      .toEqual([1, 1, sim.virtualProxies.length]);
  }

  it.each([
    ['http-500', 'timeout'],
    ['bad-body', 'cert-reject'],
  ] satisfies [FailureMode, FailureMode][])(
    'node2 %s and node3 %s at once: node1 goes on; each is tracked with its category and comes back after heal',
    async (second, third) => {
      const node1 = `SELECT * FROM server_info WHERE server_name = 'node1'`;
      const before = (await rows(node1)).length;
      const tracked = (await metrics()).series('svc_errors_tracked_total', { error_type: 'HEALTH_API' })[0]?.value ?? 0;
      await Promise.all([failAndHeal(1, second), failAndHeal(2, third)]);
      // The healthy server was polled and written all along (at least once per interval of the failures).
      expect((await rows(node1)).length).toBeGreaterThan(before + 1);
      expect((await metrics()).value('svc_errors_tracked_total', { error_type: 'HEALTH_API' })).toBeGreaterThanOrEqual(
        tracked + 2,
      );
    },
    60_000,
  );
});

describe('app names of the simulated app list', () => {
  it('name the apps of user events, and the engine-performance filter lets through exactly the events of its app', async () => {
    await sendDatagrams(
      userPort,
      userDatagrams.map((d) => d.data),
      { inFlight: 1 },
    );
    await sendDatagrams(
      logPort,
      perfDatagrams.map((d) => d.data),
      { inFlight: 1 },
    );

    // §1.4: every user event with an /app/<id> context carries the name the app list gives that id.
    const withApp = userDatagrams
      .map((d) => /^\/app\/([0-9a-f-]{36})/.exec(d.fields?.[6] ?? '')?.[1])
      .filter((id): id is string => id !== undefined);
    expect(withApp.length).toBeGreaterThan(0);
    await expect
      .poll(async () => (await rows('SELECT * FROM user_events')).length, { timeout: 10_000 })
      .toBe(userDatagrams.length);
    const events = await rows('SELECT * FROM user_events');
    const named = events.filter((r) => r['appId'] !== undefined);
    expect(named.map((r) => [r['appId'], r['appName'], r['appName_field']]).sort()).toEqual(
      withApp.map((id) => [id, appName(id), appName(id)]).sort(),
    );

    // §2.4: the rule names an app by name; exactly its events pass, with the name looked up.
    const isPerfApp = (d: SimDatagram) => appName(d.fields?.[13] ?? '') === perfAppName;
    const accepted = perfDatagrams.filter(isPerfApp);
    const rejected = perfDatagrams.filter((d) => !isPerfApp(d));
    expect(accepted.length).toBeGreaterThan(0);
    expect(rejected.length).toBeGreaterThan(0);
    await expect
      .poll(async () => (await rows(`SELECT * FROM log_event WHERE source = 'qseow-qix-perf'`)).length, {
        timeout: 10_000,
      })
      .toBe(accepted.length);
    const perf = await rows(`SELECT * FROM log_event WHERE source = 'qseow-qix-perf'`);
    expect(perf.map((r) => [r['app_id'], r['app_name'], r['log_row']]).sort()).toEqual(
      accepted.map((d) => [d.fields?.[13], perfAppName, d.fields?.[1]]).sort(),
    );

    // The others are counted as rejected by the filter (§6.6), under their apps' names.
    const counted = async () =>
      (await rows(`SELECT * FROM rejected_event_count WHERE reason = 'perf_filter'`)).reduce(
        (n, r) => n + Number(r['counter']),
        0,
      );
    await expect.poll(counted, { timeout: 10_000 }).toBe(rejected.length);
    const perRejectedApp = new Map<string, number>();
    for (const r of await rows(`SELECT * FROM rejected_event_count WHERE reason = 'perf_filter'`)) {
      expect(r['app_name']).toBe(appName(String(r['app_id'])));
      expect(r['app_name_set']).toBe('true');
      perRejectedApp.set(String(r['app_id']), (perRejectedApp.get(String(r['app_id'])) ?? 0) + Number(r['counter']));
    }
    const sentPerApp = new Map<string, number>();
    for (const d of rejected) sentPerApp.set(d.fields?.[13] ?? '', (sentPerApp.get(d.fields?.[13] ?? '') ?? 0) + 1);
    expect(perRejectedApp).toEqual(sentPerApp);
  }, 30_000);
});

describe('tsdb versions 2 and 3', () => {
  let fakes: FakeInflux[] = [];
  afterAll(async () => {
    await Promise.all(fakes.map((f) => f.close()));
  });

  /** Tag values escape `,`, `=` and blanks (§6.0). */
  const tag = (value: string) => value.replace(/[,= ]/g, (c) => `\\${c}`);
  /** String fields in double quotes, `"` and `\` escaped (§6.0). */
  const q = (value: string) => `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;

  it('svc edge writes the same health and session lines of its first poll to both, exactly as §6.0–§6.2 say', async () => {
    fakes = await Promise.all([
      startFakeInflux({ version: 2, token: 'v2-token', org: 'acme', existing: ['svc'] }),
      startFakeInflux({ version: 3, token: 'v3-token' }),
    ]);
    const [v2, v3] = fakes;
    if (!v2 || !v3) throw new Error('no fakes');
    const server = sim.servers[0] ?? expect.fail('no server');
    const simSvc = sim.config.Svc;
    const first = simSvc.serversToMonitor.servers[0] ?? expect.fail('no server config');
    const runs = [
      { fake: v2, tsdb: { version: 2, v2Config: { org: 'acme', bucket: 'svc', token: 'v2-token' } } },
      { fake: v3, tsdb: { version: 3, v3Config: { database: 'svc', token: 'v3-token' } } },
    ];
    // An interval far beyond the test: every line comes from the poll at start.
    const procs = runs.map(({ fake, tsdb }) => {
      const cwd = join(dir, `v${fake.version}`);
      mkdirSync(cwd);
      const config = {
        Svc: {
          uptimeMonitor: { enable: false },
          systemInfo: { enable: false },
          localQueue: { directory: 'queue' },
          cert: simSvc.cert,
          serversToMonitor: { ...simSvc.serversToMonitor, pollingInterval: 600_000, servers: [first] },
          userSessions: { enableSessionExtract: true, pollingInterval: 600_000 },
          tsdbConfig: { enable: true, host: LOOPBACK, port: fake.port, ...tsdb },
        },
      };
      writeFileSync(join(cwd, 'svc.yaml'), stringify(config));
      return startSvc(cwd, 'edge');
    });
    try {
      const body = await healthOf(server);
      const sessions = await Promise.all(sim.virtualProxies.map((vp) => sessionsOf(server, vp)));
      const lineCount = 8 + sessions.reduce((n, list) => n + 1 + list.length, 0);
      for (const fake of fakes) await expect.poll(() => fake.lines().length, { timeout: 20_000 }).toBe(lineCount);

      const tags = `host=${HOST},server_name=${server.name},server_description=${tag(server.description)},site=simulator,role=central`;
      for (const fake of fakes) {
        const lines = fake.lines();
        const health = lines.filter((l) => !l.startsWith('user_session_'));
        const t = /(\d+)$/.exec(health[0] ?? '')?.[1] ?? expect.fail('no time');
        const at = (k: number) => String(BigInt(t) + BigInt(k));
        const ms = Number(BigInt(t) / 1_000_000n);
        expect(health).toEqual([
          `server_info,${tags} version=${q(body.version)},started=${q(body.started)},uptime=${q(uptime(body.started, ms))} ${at(0)}`,
          `mem,${tags} committed=${body.mem.committed},allocated=${body.mem.allocated},free=${body.mem.free} ${at(1)}`,
          `apps,${tags} active_docs_count=${body.apps.active_docs.length}i,loaded_docs_count=${body.apps.loaded_docs.length}i,in_memory_docs_count=${body.apps.in_memory_docs.length}i,calls=${body.apps.calls}i,selections=${body.apps.selections}i ${at(2)}`,
          `cpu,${tags} total=${body.cpu.total} ${at(3)}`,
          `session,${tags} active=${body.session.active}i,total=${body.session.total}i ${at(4)}`,
          `users,${tags} active=${body.users.active}i,total=${body.users.total}i ${at(5)}`,
          `cache,${tags} hits=${body.cache.hits}i,lookups=${body.cache.lookups}i,added=${body.cache.added}i,replaced=${body.cache.replaced}i,bytes_added=${body.cache.bytes_added}i ${at(6)}`,
          `saturated,${tags} saturated=${String(body.saturated)} ${at(7)}`,
        ]);
        for (const [k, vp] of sim.virtualProxies.entries()) {
          const list = sessions[k] ?? [];
          // §5.1: the server tags (the configured ones included), then the virtual proxy and the session host.
          const sessionTags = `${tags},user_session_virtual_proxy=${tag(vp)},user_session_host=${HOST}:${server.proxyPort}`;
          const own = lines.filter((l) => l.includes(`user_session_virtual_proxy=${tag(vp)},`));
          const s0 = /(\d+)$/.exec(own[0] ?? '')?.[1] ?? expect.fail(`no session lines of ${vp}`);
          const sat = (j: number) => String(BigInt(s0) + BigInt(j));
          const users = [...new Set(list.map((s) => `${s.UserDirectory}\\${s.UserId}`))].join(',');
          expect(own).toEqual([
            `user_session_summary,${sessionTags} session_count=${list.length}i,session_user_id_list=${q(users)} ${sat(0)}`,
            ...list.map(
              (s, j) =>
                `user_session_details,${sessionTags},user_session_id=${tag(s.SessionId)},user_session_user_directory=${tag(s.UserDirectory)},user_session_user_id=${tag(s.UserId)} session_id=${q(s.SessionId)},user_directory=${q(s.UserDirectory)},user_id=${q(s.UserId)} ${sat(j + 1)}`,
            ),
          ]);
        }
      }
      // The endpoints, auth and precision of each version (§6.0).
      expect(
        v2
          .writes()
          .every(
            (w) =>
              w.path === '/api/v2/write' &&
              w.rawQuery === 'org=acme&bucket=svc&precision=ns' &&
              w.headers.authorization === 'Token v2-token',
          ),
      ).toBe(true);
      expect(
        v3
          .writes()
          .every(
            (w) =>
              w.path === '/api/v3/write_lp' &&
              w.rawQuery === 'db=svc&precision=nanosecond' &&
              w.headers.authorization === 'Bearer v3-token',
          ),
      ).toBe(true);
    } finally {
      for (const p of procs) p.child.kill('SIGTERM');
      expect(await Promise.all(procs.map((p) => p.exited))).toEqual([0, 0]);
    }
  }, 60_000);
});
