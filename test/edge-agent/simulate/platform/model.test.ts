/** The platform simulator's model: realistic, consistent, moving and reproducible platform state. */
import { Value } from '@sinclair/typebox/value';
import { describe, expect, it } from 'vitest';
import { createDatagramGenerator } from '../../../../edge-agent/simulate/messages.js';
import {
  PlatformModel,
  type PlatformModelOptions,
  type SimHealthBody,
  WARMUP_STEPS,
} from '../../../../edge-agent/simulate/platform/model.js';
import { tsToInstantMs } from '../../../../edge-agent/sources/common/validators.js';
import { HealthBodySchema, type ProxySession } from '../../../../shared/platform/polled.js';

const START = Date.parse('2025-05-05T12:00:00.000Z');
const OPTIONS: PlatformModelOptions = {
  seed: 42,
  servers: 3,
  users: 30,
  apps: 12,
  virtualProxies: ['/', '/hdr'],
  startMs: START,
};
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** Health bodies and session lists of every server at steps 0 … steps. */
function run(options: PlatformModelOptions, steps: number): { health: SimHealthBody; sessions: ProxySession[][] }[][] {
  const model = new PlatformModel(options);
  return model.servers.map((s) =>
    Array.from({ length: steps + 1 }, (_, step) => {
      const state = model.at(s.index, step);
      return { health: state.health(), sessions: options.virtualProxies.map((vp) => state.sessionList(vp)) };
    }),
  );
}

describe('the pool', () => {
  it('has the asked number of distinct users and apps, app ids as lower-case uuids, names for every app', () => {
    const model = new PlatformModel({ ...OPTIONS, users: 500, apps: 60 });
    expect(model.users).toHaveLength(500);
    expect(new Set(model.users.map((u) => `${u.dir}\\${u.id}`)).size).toBe(500);
    expect(model.apps).toHaveLength(60);
    expect(new Set(model.apps.map((a) => a.id)).size).toBe(60);
    expect(new Set(model.apps.map((a) => a.name)).size).toBe(60);
    for (const app of model.apps) expect(app.id).toMatch(UUID);
    expect(model.servers.map((s) => s.name)).toEqual(['node1', 'node2', 'node3']);
    expect(new PlatformModel({ ...OPTIONS, servers: 12 }).servers.map((s) => s.name).slice(0, 2)).toEqual([
      'node01',
      'node02',
    ]);
  });

  it('gives the UDP generator a pool it accepts: the same users and apps, the servers as nodes', () => {
    const model = new PlatformModel(OPTIONS);
    const pool = model.datagramPool();
    expect(pool.users).toEqual(model.users);
    expect(pool.apps.map((a) => a.id)).toEqual(model.apps.map((a) => a.id));
    expect(pool.nodes.map((n) => n.name)).toEqual(['node1', 'node2', 'node3']);
    expect(() => createDatagramGenerator({ seed: 1, pool })).not.toThrow();
  });

  it('starts each server before the simulator, with the node offset, as a compact ISO time', () => {
    for (const server of new PlatformModel({ ...OPTIONS, servers: 20 }).servers) {
      expect(server.started).toMatch(/^\d{8}T\d{6}\.\d{3}[+-]\d{4}$/);
      expect(tsToInstantMs(server.started)).toBe(server.startedMs);
      expect(server.startedMs).toBeLessThan(START);
      expect(server.startedMs).toBeGreaterThan(START - 31 * 86_400_000);
    }
  });
});

describe('each step', () => {
  const servers = run(OPTIONS, 1500);

  it('gives a health body of the §4 shape', () => {
    for (const steps of servers)
      for (const { health } of steps) expect(Value.Check(HealthBodySchema, health)).toBe(true);
  });

  it('keeps version and started, and counters that only grow', () => {
    for (const steps of servers) {
      const first = steps[0]?.health;
      steps.forEach(({ health }, i) => {
        expect(health.version).toBe(first?.version);
        expect(health.started).toBe(first?.started);
        const before = steps[i - 1]?.health;
        if (before === undefined) return;
        expect(health.apps.calls).toBeGreaterThanOrEqual(before.apps.calls);
        expect(health.apps.selections).toBeGreaterThanOrEqual(before.apps.selections);
        for (const key of ['hits', 'lookups', 'added', 'replaced', 'bytes_added'] as const)
          expect(health.cache[key]).toBeGreaterThanOrEqual(before.cache[key]);
      });
      const last = steps.at(-1)?.health;
      expect(last?.apps.calls).toBeGreaterThan(first?.apps.calls ?? Infinity);
      expect(last?.cache.bytes_added).toBeGreaterThan(first?.cache.bytes_added ?? Infinity);
    }
  });

  it('is consistent: sessions, users and docs agree with each other and with the session lists', () => {
    const model = new PlatformModel(OPTIONS);
    const appIds = new Set(model.apps.map((a) => a.id));
    for (const steps of servers) {
      for (const { health, sessions } of steps) {
        const all = sessions.flat();
        expect(health.session.total).toBe(all.length);
        expect(health.users.total).toBe(new Set(all.map((s) => `${s.UserDirectory}\\${s.UserId}`)).size);
        expect(new Set(all.map((s) => s.SessionId)).size).toBe(all.length);
        expect(health.session.active).toBeLessThanOrEqual(health.session.total);
        expect(health.users.active).toBeLessThanOrEqual(health.users.total);
        expect(health.users.active).toBeLessThanOrEqual(health.session.active);
        const { active_docs: active, loaded_docs: loaded, in_memory_docs: inMemory } = health.apps;
        for (const id of active) expect(loaded).toContain(id);
        for (const id of loaded) expect(inMemory).toContain(id);
        for (const id of inMemory) expect(appIds.has(id) || /^SessionApp_[0-9a-f]{8}$/.test(id)).toBe(true);
        expect(health.mem.allocated).toBeGreaterThanOrEqual(health.mem.committed);
        expect(health.mem.free).toBeGreaterThan(0);
        expect(health.cpu.total).toBeGreaterThanOrEqual(0);
        expect(health.cpu.total).toBeLessThanOrEqual(100);
        expect(health.cache.hits).toBeLessThanOrEqual(health.cache.lookups);
      }
    }
  });

  it('moves: users log in and out, apps open and close (session apps too), load and CPU change', () => {
    for (const steps of servers) {
      const ids = steps.map(({ sessions }) => new Set(sessions.flat().map((s) => s.SessionId)));
      const logins = ids.reduce((n, now, i) => n + [...now].filter((id) => i > 0 && !ids[i - 1]?.has(id)).length, 0);
      const logouts = ids.reduce((n, now, i) => n + [...(ids[i - 1] ?? [])].filter((id) => !now.has(id)).length, 0);
      expect(logins).toBeGreaterThan(20);
      expect(logouts).toBeGreaterThan(20);
      const totals = new Set(steps.map(({ health }) => health.session.total));
      expect(totals.size).toBeGreaterThan(3);
      expect(new Set(steps.map(({ health }) => health.cpu.total)).size).toBeGreaterThan(10);
      expect(new Set(steps.map(({ health }) => health.apps.loaded_docs.join())).size).toBeGreaterThan(10);
      expect(steps.some(({ health }) => health.apps.in_memory_docs.some((id) => id.startsWith('SessionApp_')))).toBe(
        true,
      );
      // Apps stay in memory a while after the last user left them.
      expect(steps.some(({ health }) => health.apps.in_memory_docs.length > health.apps.loaded_docs.length)).toBe(true);
      // Some virtual proxy sessions carry attributes, as header-authenticated ones do.
      expect(steps.some(({ sessions }) => (sessions[1] ?? []).some((s) => (s.Attributes ?? []).length > 0))).toBe(true);
    }
  });

  it(`has users from the start (${WARMUP_STEPS} warm-up steps)`, () => {
    for (const steps of servers) expect(steps[0]?.health.session.total).toBeGreaterThan(0);
  });
});

describe('determinism', () => {
  it('the same seed and options give the same platform, step by step; another seed another one', () => {
    expect(run(OPTIONS, 200)).toEqual(run(OPTIONS, 200));
    const other = run({ ...OPTIONS, seed: 43 }, 200);
    expect(other[0]?.[200]?.health).not.toEqual(run(OPTIONS, 200)[0]?.[200]?.health);
    expect(new PlatformModel({ ...OPTIONS, seed: 43 }).appList()).not.toEqual(new PlatformModel(OPTIONS).appList());
    expect(new PlatformModel(OPTIONS).appList()).toEqual(new PlatformModel(OPTIONS).appList());
  });

  it('a server moves the same whatever is asked of the others, and whether it is asked at every step or once', () => {
    const busy = new PlatformModel(OPTIONS);
    for (let step = 0; step <= 300; step += 7) for (const s of busy.servers) busy.at(s.index, step);
    const quiet = new PlatformModel(OPTIONS);
    expect(quiet.at(2, 300).health()).toEqual(busy.at(2, 300).health());
    expect(quiet.at(2, 300).sessionList('/hdr')).toEqual(busy.at(2, 300).sessionList('/hdr'));
  });

  it('never goes back a step', () => {
    const model = new PlatformModel(OPTIONS);
    const later = model.at(0, 50).health();
    expect(model.at(0, 10).health()).toEqual(later);
  });
});

describe('the app list', () => {
  it('lists every app with the §5.2 fields Svc keeps, and the ids the health docs use', () => {
    const model = new PlatformModel(OPTIONS);
    const list = model.appList();
    expect(list.map((a) => a.id)).toEqual(model.apps.map((a) => a.id));
    for (const app of list) {
      expect(typeof app.name).toBe('string');
      expect(typeof app.description).toBe('string');
      expect(app.schemaPath).toBe('App');
    }
    expect(list.some((a) => a.description !== '')).toBe(true);
    expect(list.some((a) => /[^\x00-\x7f]/.test(a.name))).toBe(true);
  });
});

describe('options', () => {
  it('rejects impossible ones', () => {
    expect(() => new PlatformModel({ ...OPTIONS, servers: 0 })).toThrow('servers must be an integer');
    expect(() => new PlatformModel({ ...OPTIONS, users: 1.5 })).toThrow('users must be an integer');
    expect(() => new PlatformModel({ ...OPTIONS, virtualProxies: [] })).toThrow('virtualProxies must not be empty');
    expect(() => new PlatformModel(OPTIONS).at(3, 0)).toThrow('no server 3');
  });
});
