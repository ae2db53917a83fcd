/**
 * The platform simulator over real mutual TLS on 127.0.0.1: every API answers in its spec shape,
 * values move, the request checks and every failure switch work, certificates of another CA (or
 * none) are refused, and the config it prints loads with Svc's own loader.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCertificates, prepareCertificates } from '../../../../edge-agent/simulate/platform/certs.js';
import { FAILURE_MODES } from '../../../../edge-agent/simulate/platform/failures.js';
import { type PlatformSimulator, startPlatformSimulator } from '../../../../edge-agent/simulate/platform/server.js';
import { ConfigError } from '../../../../shared/config/errors.js';
import { loadConfigFile, parseConfigText } from '../../../../shared/config/load.js';
import { HealthBodySchema, ProxySessionSchema } from '../../../../shared/platform/polled.js';
import { canConnect } from '../../../support/ports.js';
import { type ClientTls, get, json, SA_REPOSITORY, send, svcClient, withKey, XRFKEY } from './client.js';

/** §5.1: a JSON array of sessions with exactly these four keys. */
const SessionListSchema = Type.Array(
  Type.Intersect([
    ProxySessionSchema,
    Type.Object({ Attributes: Type.Array(Type.Record(Type.String(), Type.String())) }),
  ]),
);
const SESSION_KEYS = ['Attributes', 'SessionId', 'UserDirectory', 'UserId'];
/** §5.2: a JSON array of app objects; Svc keeps id, name, description. */
const AppListSchema = Type.Array(
  Type.Object({
    id: Type.String({ pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' }),
    name: Type.String({ minLength: 1 }),
    description: Type.String(),
  }),
);

const START = Date.parse('2025-05-05T12:00:00.000Z');
const KEY_HEADERS = { 'X-Qlik-Xrfkey': XRFKEY };
const APP_HEADERS = { ...KEY_HEADERS, 'X-Qlik-User': SA_REPOSITORY };

let certDir: string;
let sim: PlatformSimulator;
let svc: ClientTls;

beforeAll(async () => {
  // One certificate set for the suite: every simulator below reuses it (key generation is the slow part).
  certDir = mkdtempSync(join(tmpdir(), 'svc-sim-server-test-'));
  prepareCertificates(certDir, ['127.0.0.1', 'localhost']);
  sim = await startPlatformSimulator({ seed: 7, stepMs: 0, startMs: START, certDir, controlPort: 0 });
  svc = svcClient(sim.certs);
});

afterAll(async () => {
  await sim.stop();
  rmSync(certDir, { recursive: true, force: true });
});

const health = async (i = 0): Promise<unknown> => {
  const reply = await get(sim.servers[i]?.healthUrl ?? '', svc);
  expect(reply.status).toBe(200);
  return json(reply);
};
const sessions = async (i: number, vp: string, s: PlatformSimulator = sim): Promise<unknown> => {
  const reply = await get(withKey(s.servers[i]?.sessionUrls[vp] ?? ''), svcClient(s.certs), KEY_HEADERS);
  expect(reply.status).toBe(200);
  return json(reply);
};
const appList = async (s: PlatformSimulator = sim): Promise<unknown> => {
  const reply = await get(withKey(s.appListUrl, 'xrfkey'), svcClient(s.certs), APP_HEADERS);
  expect(reply.status).toBe(200);
  return json(reply);
};
function checked<T>(schema: Parameters<typeof Value.Check>[0], value: unknown, guard: (v: unknown) => v is T): T {
  expect([...Value.Errors(schema, value)].map((e) => `${e.path}: ${e.message}`)).toEqual([]);
  if (!guard(value)) throw new Error('unreachable: the schema check passed');
  return value;
}
const isHealth = (v: unknown): v is typeof HealthBodySchema.static => Value.Check(HealthBodySchema, v);
const isSessions = (v: unknown): v is typeof SessionListSchema.static => Value.Check(SessionListSchema, v);
const isApps = (v: unknown): v is typeof AppListSchema.static => Value.Check(AppListSchema, v);

describe('the APIs over mutual TLS', () => {
  it('health: every server answers a §4 body (an extra field Svc ignores included)', async () => {
    expect(sim.servers.map((s) => s.name)).toEqual(['node1', 'node2', 'node3']);
    for (let i = 0; i < 3; i++) {
      const reply = await get(sim.servers[i]?.healthUrl ?? '', svc);
      expect(reply.status).toBe(200);
      expect(reply.contentType).toBe('application/json; charset=utf-8');
      const body = checked(HealthBodySchema, json(reply), isHealth);
      expect(json(reply)).toHaveProperty('externalEngines');
      expect(body.session.total).toBeGreaterThan(0);
    }
  });

  it('health: values move between polls; counters only grow; version and started stay', async () => {
    const seen: (typeof HealthBodySchema.static)[] = [];
    for (let poll = 0; poll < 8; poll++) {
      seen.push(checked(HealthBodySchema, await health(1), isHealth));
      sim.step(5);
    }
    for (let i = 1; i < seen.length; i++) {
      const [a, b] = [seen[i - 1], seen[i]];
      if (a === undefined || b === undefined) continue;
      expect(b).not.toEqual(a);
      expect(b.apps.calls).toBeGreaterThanOrEqual(a.apps.calls);
      expect(b.apps.selections).toBeGreaterThanOrEqual(a.apps.selections);
      for (const key of ['hits', 'lookups', 'added', 'replaced', 'bytes_added'] as const)
        expect(b.cache[key]).toBeGreaterThanOrEqual(a.cache[key]);
      expect([b.version, b.started]).toEqual([a.version, a.started]);
    }
    expect(seen.at(-1)?.apps.calls).toBeGreaterThan(seen[0]?.apps.calls ?? Infinity);
  });

  it('health: the platform moves by itself, one step per stepMs', async () => {
    const moving = await startPlatformSimulator({ seed: 7, servers: 1, stepMs: 20, startMs: START, certDir });
    try {
      const first = await get(moving.servers[0]?.healthUrl ?? '', svc);
      await expect
        .poll(async () => (await get(moving.servers[0]?.healthUrl ?? '', svc)).text, { timeout: 10_000 })
        .not.toBe(first.text);
      expect(moving.status().step).toBeGreaterThan(0);
    } finally {
      await moving.stop();
    }
  });

  it('sessions: per virtual proxy a §5.1 array, consistent with the health body of the same moment', async () => {
    for (let i = 0; i < 3; i++) {
      const body = checked(HealthBodySchema, await health(i), isHealth);
      const lists = [
        checked(SessionListSchema, await sessions(i, '/'), isSessions),
        checked(SessionListSchema, await sessions(i, '/hdr'), isSessions),
      ];
      const all = lists.flat();
      for (const s of all) expect(Object.keys(s).sort()).toEqual(SESSION_KEYS);
      expect(all.length).toBe(body.session.total);
      expect(new Set(all.map((s) => `${s.UserDirectory}\\${s.UserId}`)).size).toBe(body.users.total);
      const users = new Set(sim.users.map((u) => `${u.dir}\\${u.id}`));
      for (const s of all) expect(users.has(`${s.UserDirectory}\\${s.UserId}`)).toBe(true);
    }
  });

  it('sessions: users log in and out between polls', async () => {
    const ids = async (): Promise<Set<string>> =>
      new Set(
        [
          ...checked(SessionListSchema, await sessions(0, '/'), isSessions),
          ...checked(SessionListSchema, await sessions(0, '/hdr'), isSessions),
        ].map((s) => s.SessionId),
      );
    const before = await ids();
    sim.step(200);
    const after = await ids();
    expect([...after].some((id) => !before.has(id))).toBe(true);
    expect([...before].some((id) => !after.has(id))).toBe(true);
  });

  it('sessions: the Xrfkey check (400 with the reason)', async () => {
    const url = sim.servers[0]?.sessionUrls['/'] ?? '';
    const cases: [string, Record<string, string>, string][] = [
      [url, KEY_HEADERS, 'the query has no xrfkey parameter'],
      [withKey(url), {}, 'the X-Qlik-Xrfkey header is missing'],
      [
        withKey(url),
        { 'X-Qlik-Xrfkey': 'aB3dE5gH7jK9mN1P' },
        "the X-Qlik-Xrfkey header differs from the query's xrfkey",
      ],
      [`${url}?Xrfkey=short`, { 'X-Qlik-Xrfkey': 'short' }, 'the xrfkey must be 16 characters a-z, A-Z, 0-9'],
      [`${withKey(url)}&xrfkey=${XRFKEY}`, KEY_HEADERS, 'the query has more than one xrfkey parameter'],
    ];
    for (const [where, headers, reason] of cases)
      expect(await get(where, svc, headers)).toMatchObject({ status: 400, text: reason });
    // The parameter's name in any case: §5.1 writes Xrfkey, §5.2 xrfkey.
    expect((await get(withKey(url, 'xrfkey'), svc, KEY_HEADERS)).status).toBe(200);
  });

  it('app list: a §5.2 array with every app id the health bodies name, names and descriptions', async () => {
    const apps = checked(AppListSchema, await appList(), isApps);
    expect(apps.map((a) => a.id)).toEqual(sim.apps.map((a) => a.id));
    expect(apps.map((a) => a.name)).toEqual(sim.apps.map((a) => a.name));
    const ids = new Set(apps.map((a) => a.id));
    const docs = new Set<string>();
    for (let i = 0; i < 3; i++) {
      const body = checked(HealthBodySchema, await health(i), isHealth);
      for (const id of [...body.apps.active_docs, ...body.apps.loaded_docs, ...body.apps.in_memory_docs])
        if (!id.startsWith('SessionApp_')) docs.add(id);
    }
    expect(docs.size).toBeGreaterThan(3);
    for (const id of docs) expect(ids.has(id)).toBe(true);
    expect((await get(withKey(sim.appListUrl, 'Xrfkey'), svc, APP_HEADERS)).status).toBe(200);
  });

  it('app list: the Xrfkey and X-Qlik-User checks', async () => {
    const url = withKey(sim.appListUrl, 'xrfkey');
    expect(await get(url, svc, KEY_HEADERS)).toMatchObject({ status: 403, text: 'the X-Qlik-User header is missing' });
    expect(await get(url, svc, { ...KEY_HEADERS, 'X-Qlik-User': 'sa_repository' })).toMatchObject({
      status: 403,
      text: 'the X-Qlik-User header must read "UserDirectory=<directory>; UserId=<user id>"',
    });
    expect(await get(url, svc, { ...KEY_HEADERS, 'X-Qlik-User': 'UserDirectory=LAB; UserId=goran' })).toMatchObject({
      status: 403,
      text: 'user LAB\\goran may not read the app list (use Internal\\sa_repository)',
    });
    expect(
      (await get(url, svc, { ...KEY_HEADERS, 'X-Qlik-User': 'UserDirectory=INTERNAL;UserId=sa_repository' })).status,
    ).toBe(200);
    expect(await get(sim.appListUrl, svc, APP_HEADERS)).toMatchObject({
      status: 400,
      text: 'the query has no xrfkey parameter',
    });
  });

  it('answers 404 off the APIs and 405 for other methods; each port serves only its own API', async () => {
    const s = sim.servers[0];
    const proxy = `https://127.0.0.1:${s?.proxyPort ?? 0}`;
    const engine = `https://127.0.0.1:${s?.healthPort ?? 0}`;
    expect((await get(`${proxy}/engine/healthcheck`, svc)).status).toBe(404);
    expect((await get(withKey(`${engine}/qps/session`), svc, KEY_HEADERS)).status).toBe(404);
    expect((await get(withKey(`${proxy}/qps/nope/session`), svc, KEY_HEADERS)).status).toBe(404);
    expect((await get(`https://127.0.0.1:${sim.appPort}/qrs/about`, svc)).status).toBe(404);
    expect(await send('POST', s?.healthUrl ?? '', svc)).toBe(405);
  });
});

describe('certificates', () => {
  let other: ReturnType<typeof makeCertificates>;
  beforeAll(() => {
    other = makeCertificates(['127.0.0.1']);
  });

  it('refuses a client certificate of another CA, and a client without one', async () => {
    const url = sim.servers[0]?.healthUrl ?? '';
    const before = sim.status().stats.tlsRejected;
    await expect(get(url, { cert: other.client.cert, key: other.client.key, ca: svc.ca })).rejects.toThrow(
      /alert|ECONNRESET|socket hang up/i,
    );
    await expect(get(url, { ca: svc.ca })).rejects.toThrow(/alert certificate required|ECONNRESET|socket hang up/i);
    expect(sim.status().stats.tlsRejected).toBe(before + 2);
    expect((await get(url, svc)).status).toBe(200);
  });

  it("presents a server certificate of the simulator's CA (a client trusting another CA refuses it)", async () => {
    await expect(get(sim.servers[0]?.healthUrl ?? '', { ...svc, ca: other.ca.cert })).rejects.toThrow(
      /self-signed|unable to verify|certificate/i,
    );
  });

  it('opens with a passphrase-protected client key, which the config names; stop() removes its temporary folder', async () => {
    const locked = await startPlatformSimulator({ seed: 1, servers: 1, stepMs: 0, passphrase: 'open sesame' });
    try {
      expect(locked.certs.passphrase).toBe('open sesame');
      expect(locked.config.Svc.cert.clientCertPassphrase).toBe('open sesame');
      const client = svcClient(locked.certs);
      expect(client.passphrase).toBe('open sesame');
      expect((await get(locked.servers[0]?.healthUrl ?? '', client)).status).toBe(200);
      const { config } = parseConfigText(locked.configYaml, 'sim.yaml');
      expect(config.cert.clientCertPassphrase).toBe('open sesame');
    } finally {
      await locked.stop();
    }
    expect(existsSync(locked.certs.directory)).toBe(false);
    expect(await canConnect(locked.servers[0]?.healthPort ?? 0)).toBe(false);
  });
});

describe('failure switches', () => {
  const url = (): string => sim.servers[1]?.healthUrl ?? '';

  it('http-500: the target answers 500, the others go on; heal brings it back', async () => {
    sim.fail('node2', 'http-500');
    expect(sim.mode('node2')).toBe('http-500');
    expect((await get(url(), svc)).status).toBe(500);
    expect((await get(withKey(sim.servers[1]?.sessionUrls['/hdr'] ?? ''), svc, KEY_HEADERS)).status).toBe(500);
    expect((await get(sim.servers[0]?.healthUrl ?? '', svc)).status).toBe(200);
    sim.heal('node2');
    expect((await get(url(), svc)).status).toBe(200);
  });

  it('bad-body: 200 with JSON that is not the shape, for each API', async () => {
    sim.fail('node2', 'bad-body');
    sim.fail('apps', 'bad-body');
    const reply = await get(url(), svc);
    expect(reply.status).toBe(200);
    expect(Value.Check(HealthBodySchema, json(reply))).toBe(false);
    const list = await get(withKey(sim.servers[1]?.sessionUrls['/'] ?? ''), svc, KEY_HEADERS);
    expect(list.status).toBe(200);
    expect(Value.Check(SessionListSchema, json(list))).toBe(false);
    const apps = await get(withKey(sim.appListUrl), svc, APP_HEADERS);
    expect(apps.status).toBe(200);
    expect(Value.Check(AppListSchema, json(apps))).toBe(false);
    sim.heal();
    expect(Value.Check(HealthBodySchema, await health(1))).toBe(true);
    expect(Value.Check(AppListSchema, await appList())).toBe(true);
  });

  it('timeout: the request is held without an answer; healing closes it', async () => {
    sim.fail('node2', 'timeout');
    // A client that gives up finds no answer.
    await expect(get(url(), svc, {}, 300)).rejects.toThrow('no answer within 300 ms');
    const failed = sim.status().stats.health.failed;
    let answered = false;
    const pending = get(url(), svc).then(
      () => (answered = true),
      (err: unknown) => err,
    );
    await expect.poll(() => sim.status().stats.health.failed).toBe(failed + 1);
    expect(answered).toBe(false);
    sim.heal('node2');
    expect(await pending).toBeInstanceOf(Error);
    expect(answered).toBe(false);
    expect((await get(url(), svc)).status).toBe(200);
  });

  it("cert-reject: Svc's own certificate is refused in the handshake until healed", async () => {
    sim.fail('node2', 'cert-reject');
    await expect(get(url(), svc)).rejects.toThrow(/alert|ECONNRESET|socket hang up/i);
    await expect(get(withKey(sim.servers[1]?.sessionUrls['/'] ?? ''), svc, KEY_HEADERS)).rejects.toThrow(
      /alert|ECONNRESET|socket hang up/i,
    );
    expect((await get(sim.servers[0]?.healthUrl ?? '', svc)).status).toBe(200);
    sim.heal('node2');
    expect((await get(url(), svc)).status).toBe(200);
  });

  it('"all" switches every server and the app list; names are checked', async () => {
    sim.fail('all', 'http-500');
    expect(sim.status().modes).toEqual({ node1: 'http-500', node2: 'http-500', node3: 'http-500', apps: 'http-500' });
    expect((await get(withKey(sim.appListUrl), svc, APP_HEADERS)).status).toBe(500);
    sim.heal();
    expect(Object.values(sim.status().modes)).toEqual(['ok', 'ok', 'ok', 'ok']);
    expect(() => sim.fail('node9', 'timeout')).toThrow(
      'failure target "node9" is not a server name (node1, node2, node3), "apps" or "all"',
    );
    expect(() => sim.fail('node1', 'explode' as 'timeout')).toThrow(
      'failure mode "explode" is not one of http-500, timeout, bad-body, cert-reject',
    );
    expect(() => sim.mode('nope')).toThrow(RangeError);
  });

  it('fails targets from the start when asked', async () => {
    const broken = await startPlatformSimulator({
      seed: 7,
      servers: 2,
      stepMs: 0,
      certDir,
      failures: { node2: 'http-500', apps: 'bad-body' },
    });
    try {
      expect(broken.status().modes).toEqual({ node1: 'ok', node2: 'http-500', apps: 'bad-body' });
      const client = svcClient(broken.certs);
      expect((await get(broken.servers[0]?.healthUrl ?? '', client)).status).toBe(200);
      expect((await get(broken.servers[1]?.healthUrl ?? '', client)).status).toBe(500);
      expect(Value.Check(AppListSchema, json(await get(withKey(broken.appListUrl), client, APP_HEADERS)))).toBe(false);
    } finally {
      await broken.stop();
    }
  });

  it('counts what each API answered', () => {
    const { stats } = sim.status();
    expect(stats.health.ok).toBeGreaterThan(10);
    expect(stats.health.failed).toBeGreaterThanOrEqual(FAILURE_MODES.length);
    expect(stats.sessions.rejected).toBe(5);
    expect(stats.apps.rejected).toBe(4);
    expect(stats.notFound).toBe(5);
  });
});

describe('the control endpoint', () => {
  const control = async (method: string, path: string): Promise<{ status: number; body: unknown }> => {
    const res = await fetch(`${sim.controlUrl ?? ''}${path}`, { method });
    return { status: res.status, body: await res.json() };
  };

  it('fails, heals and steps targets while running, on 127.0.0.1', async () => {
    expect(sim.controlUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await control('POST', '/fail/node3/http-500')).toMatchObject({
      status: 200,
      body: { modes: { node3: 'http-500' } },
    });
    expect((await get(sim.servers[2]?.healthUrl ?? '', svc)).status).toBe(500);
    expect(await control('POST', '/heal/node3')).toMatchObject({ status: 200, body: { modes: { node3: 'ok' } } });
    expect((await get(sim.servers[2]?.healthUrl ?? '', svc)).status).toBe(200);
    const step = sim.status().step;
    expect(await control('POST', '/step/3')).toMatchObject({ status: 200, body: { step: step + 3 } });
    expect(await control('POST', '/fail/all/timeout')).toMatchObject({
      status: 200,
      body: { modes: { node1: 'timeout', apps: 'timeout' } },
    });
    expect(await control('POST', '/heal')).toMatchObject({ status: 200, body: { modes: { node1: 'ok', apps: 'ok' } } });
    expect(await control('GET', '/')).toMatchObject({
      status: 200,
      body: { step: step + 3, modes: { node1: 'ok' }, usage: expect.stringContaining('POST /fail/<target>/<mode>') },
    });
  });

  it('names what is wrong with a request', async () => {
    expect(await control('POST', '/fail/node9/timeout')).toMatchObject({
      status: 400,
      body: { error: expect.stringContaining('"node9" is not a server name') },
    });
    expect(await control('POST', '/fail/node1/explode')).toMatchObject({
      status: 400,
      body: { error: expect.stringContaining('"explode" is not one of') },
    });
    expect(await control('POST', '/step/x')).toMatchObject({ status: 400 });
    expect(await control('GET', '/fail/node1/timeout')).toMatchObject({ status: 405 });
    expect(await control('POST', '/')).toMatchObject({ status: 405 });
    expect(await control('POST', '/reboot')).toMatchObject({ status: 404 });
    expect(sim.status().modes).toMatchObject({ node1: 'ok' });
  });
});

describe('the printed config', () => {
  it("loads with Svc's config loader and points at the listeners, the certificates and the app list", () => {
    const { config } = parseConfigText(sim.configYaml, 'sim.yaml');
    expect(config.cert).toEqual({
      clientCert: sim.certs.clientCert,
      clientCertKey: sim.certs.clientCertKey,
      clientCertCA: sim.certs.clientCertCA,
      clientCertPassphrase: '',
    });
    expect(config.serversToMonitor.rejectUnauthorized).toBe(true);
    expect(
      config.serversToMonitor.servers.map((s) => [
        s.serverName,
        s.host,
        s.userSessions.host,
        s.userSessions.virtualProxies.map((v) => v.virtualProxy),
      ]),
    ).toEqual(sim.servers.map((s) => [s.name, `127.0.0.1:${s.healthPort}`, `127.0.0.1:${s.proxyPort}`, ['/', '/hdr']]));
    expect(config.userSessions.enableSessionExtract).toBe(true);
    expect(config.appNames).toMatchObject({ enableAppNameExtract: true, hostIP: `127.0.0.1:${sim.appPort}` });
    expect(parseConfigText(sim.configYaml, 'sim.yaml').config).toMatchObject(sim.config.Svc);
  });

  it('loads from a file too, and names hostIP without a port when the app list is on 4242', async () => {
    const file = join(certDir, 'svc.yaml');
    writeFileSync(file, sim.configYaml);
    expect(loadConfigFile(file).config.serversToMonitor.servers).toHaveLength(3);
    const { appNamesHostIp } = await import('../../../../edge-agent/simulate/platform/config.js');
    expect(appNamesHostIp('127.0.0.1', 4242)).toBe('127.0.0.1');
    expect(appNamesHostIp('127.0.0.1', 14242)).toBe('127.0.0.1:14242');
    // The loader is strict: a config it refuses would fail here.
    expect(() =>
      parseConfigText(sim.configYaml.replace('rejectUnauthorized: true', 'rejectUnauthorized: 7'), 'sim.yaml'),
    ).toThrow(ConfigError);
  });
});

describe('determinism and scale', () => {
  it('the same seed gives the same platform over the wire, step by step', async () => {
    const a = await startPlatformSimulator({ seed: 99, servers: 2, stepMs: 0, startMs: START, certDir });
    const b = await startPlatformSimulator({ seed: 99, servers: 2, stepMs: 0, startMs: START, certDir });
    try {
      for (const steps of [0, 5, 50]) {
        a.step(steps);
        b.step(steps);
        for (const i of [0, 1]) {
          const [ha, hb] = await Promise.all([
            get(a.servers[i]?.healthUrl ?? '', svc),
            get(b.servers[i]?.healthUrl ?? '', svc),
          ]);
          expect(ha.text).toBe(hb.text);
          expect(await sessions(i, '/hdr', a)).toEqual(await sessions(i, '/hdr', b));
        }
      }
      expect(await appList(a)).toEqual(await appList(b));
      expect(a.configYaml.replace(/127\.0\.0\.1:\d+/g, '')).toBe(b.configYaml.replace(/127\.0\.0\.1:\d+/g, ''));
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it('serves many servers from one process', async () => {
    const many = await startPlatformSimulator({ seed: 3, servers: 60, stepMs: 0, certDir });
    try {
      expect(many.servers[0]?.name).toBe('node01');
      expect(new Set(many.servers.flatMap((s) => [s.healthPort, s.proxyPort])).size).toBe(120);
      const replies = await Promise.all(many.servers.map((s) => get(s.healthUrl, svc)));
      for (const reply of replies) expect(Value.Check(HealthBodySchema, json(reply))).toBe(true);
      expect(new Set(replies.map((r) => r.text)).size).toBe(60);
    } finally {
      await many.stop();
    }
  });

  it('puts server i on basePort + i and proxyBasePort + i', async () => {
    // A free run of ports: try a few random bases (another process may hold one of them).
    for (let attempt = 0; ; attempt++) {
      const base = 20_000 + Math.floor(Math.random() * 30_000);
      const fixed = startPlatformSimulator({
        seed: 1,
        servers: 3,
        stepMs: 0,
        certDir,
        basePort: base,
        proxyBasePort: base + 10,
        appPort: base + 20,
      });
      const started = await fixed.catch((err: unknown) => err);
      if (started instanceof Error) {
        expect(started.message).toMatch(/EADDRINUSE/);
        if (attempt < 5) continue;
        throw started;
      }
      const s = await fixed;
      try {
        expect(s.servers.map((x) => [x.healthPort, x.proxyPort])).toEqual(
          [0, 1, 2].map((i) => [base + i, base + 10 + i]),
        );
        expect(s.appPort).toBe(base + 20);
        expect((await get(`https://127.0.0.1:${base + 2}/engine/healthcheck`, svc)).status).toBe(200);
      } finally {
        await s.stop();
      }
      return;
    }
  });

  it('leaves nothing listening when one port of a group is taken', async () => {
    for (let attempt = 0; ; attempt++) {
      // Our own listener on X; the simulator wants X-1, X, X+1 for its health APIs.
      const blocker = net.createServer();
      await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
      const address = blocker.address();
      const x = typeof address === 'object' && address !== null ? address.port : 0;
      const options = { seed: 1, servers: 3, stepMs: 0, certDir, basePort: x - 1 };
      const refused = await startPlatformSimulator(options).then(
        async (s) => {
          await s.stop();
          return undefined;
        },
        (err: unknown) => err,
      );
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
      expect(refused).toBeInstanceOf(Error);
      // Another process may hold X-1 or X+1: then the message names that port; try elsewhere.
      if (!String(refused).includes(`cannot listen on 127.0.0.1:${x} (node2 health API): EADDRINUSE`) && attempt < 5)
        continue;
      expect(String(refused)).toContain(`cannot listen on 127.0.0.1:${x} (node2 health API): EADDRINUSE`);
      // X-1 and X+1 were bound before the failure and closed after it: all three are free again.
      const again = await startPlatformSimulator(options);
      expect(again.servers.map((server) => server.healthPort)).toEqual([x - 1, x, x + 1]);
      await again.stop();
      return;
    }
  });

  it('refuses options it cannot honour, naming each', async () => {
    await expect(startPlatformSimulator({ servers: 0 })).rejects.toThrow(
      'invalid platform simulator options: servers must be an integer 1–2000 (got 0)',
    );
    // A port in use: nothing is left listening.
    await expect(
      startPlatformSimulator({ seed: 1, servers: 2, stepMs: 0, certDir, appPort: sim.appPort }),
    ).rejects.toThrow(`cannot listen on 127.0.0.1:${sim.appPort} (app-list API): EADDRINUSE`);
  });
});
