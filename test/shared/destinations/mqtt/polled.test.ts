/**
 * MQTT of polled data (platform-formats.md §7.1 health, §7.2 sessions): the exact topics and payloads
 * of the builders, and the MqttDestination against a real mosquitto: every value arrives at a
 * subscriber, not retained; a failed publish is tracked with HEALTH_METRICS_MQTT / PROXY_SESSIONS_MQTT
 * and the server's name, and the poll comes back for redelivery without republishing the topics it
 * reached; kinds the config does not send to MQTT are left alone.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { MqttWriter } from '../../../../shared/destinations/mqtt/client.js';
import {
  HEALTH_MQTT_MODULE,
  MqttDestination,
  SESSIONS_MQTT_MODULE,
} from '../../../../shared/destinations/mqtt/destination.js';
import { cacheHitRatio, healthMessages, sessionMessages } from '../../../../shared/destinations/mqtt/mappers.js';
import type { TrackedError } from '../../../../shared/errors/tracker.js';
import { silentLog } from '../../../support/log.js';
import { type MqttRig, type Received, startMqttRig } from '../../../support/mqtt-rig.js';
import { sleep, until } from '../../../support/ports.js';
import { START_SESSION, userQueued } from '../../platform/fixtures.js';
import {
  APP_ID,
  healthBody,
  healthQueued,
  healthSample,
  SESSION_APP,
  sessionSample,
  sessionsQueued,
} from '../polled.js';

const asText = (messages: { topic: string; payload: string }[]): string[] =>
  messages.map((m) => `${m.topic} ${m.payload}`);

describe('health messages (§7.1)', () => {
  it("publishes one message per value under <baseTopic><host>, in the spec's suffix list", () => {
    expect(asText(healthMessages(healthSample(), 'svc/'))).toEqual([
      'svc/node1.lab.local/version 12.1306.0',
      'svc/node1.lab.local/started 20240312T081512.000+0100',
      'svc/node1.lab.local/mem/committed 4213.6',
      'svc/node1.lab.local/mem/allocated 4577.3',
      'svc/node1.lab.local/mem/free 27890.4',
      'svc/node1.lab.local/cpu/total 7.5',
      'svc/node1.lab.local/session/active 3',
      'svc/node1.lab.local/session/total 12',
      'svc/node1.lab.local/users/active 2',
      'svc/node1.lab.local/users/total 9',
      `svc/node1.lab.local/apps/active_docs ${APP_ID}`,
      `svc/node1.lab.local/apps/loaded_docs ${APP_ID}`,
      `svc/node1.lab.local/apps/in_memory_docs ${APP_ID},${SESSION_APP}`,
      'svc/node1.lab.local/apps/calls 15234',
      'svc/node1.lab.local/apps/selections 812',
      'svc/node1.lab.local/cache/hits 1290',
      'svc/node1.lab.local/cache/lookups 1720',
      'svc/node1.lab.local/cache/added 430',
      'svc/node1.lab.local/cache/replaced 12',
      'svc/node1.lab.local/cache/bytes_added 52428800',
      'svc/node1.lab.local/cache/hit_ratio 75',
      'svc/node1.lab.local/saturated false',
    ]);
  });

  it('publishes /cache/hit_ratio only when there were lookups, floored in exact arithmetic', () => {
    const topics = (cache: ReturnType<typeof healthBody>['cache']) =>
      healthMessages(healthSample({ body: healthBody({ cache }) }), 'svc/').map((m) => m.topic);
    expect(topics({ hits: 0, lookups: 0, added: 0, replaced: 0, bytes_added: 0 })).not.toContain(
      'svc/node1.lab.local/cache/hit_ratio',
    );
    expect(topics({ hits: 0, lookups: 0, added: 0, replaced: 0, bytes_added: 0 })).toHaveLength(21);
    // 29 / 100 × 100 is 28.999999999999996 in floating point.
    expect(cacheHitRatio({ hits: 29, lookups: 100 })).toBe(29);
    expect(cacheHitRatio({ hits: 2, lookups: 3 })).toBe(66);
    expect(cacheHitRatio({ hits: 5, lookups: 0 })).toBeNull();
  });

  it('writes booleans as true/false, empty app lists as empty payloads, and makes wildcards in the host plain', () => {
    const body = healthBody({
      saturated: true,
      apps: { active_docs: [], in_memory_docs: [], loaded_docs: [APP_ID, 'other'], calls: 1, selections: 0 },
    });
    const got = new Map(
      healthMessages(healthSample({ body, tags: { host: 'n+1#a', server_name: 'N1' } }), 'base/').map((m) => [
        m.topic,
        m.payload,
      ]),
    );
    expect(got.get('base/n_1_a/saturated')).toBe('true');
    expect(got.get('base/n_1_a/apps/active_docs')).toBe('');
    expect(got.get('base/n_1_a/apps/loaded_docs')).toBe(`${APP_ID},other`);
    expect([...got.keys()].every((t) => t.startsWith('base/n_1_a/'))).toBe(true);
  });
});

describe('session messages (§7.2)', () => {
  it('publishes the sessions after exclusion as JSON with 2-space indent to <baseTopic><host>/usersession<vp>', () => {
    const [message, ...rest] = sessionMessages(sessionSample(), 'svc/');
    expect(rest).toEqual([]);
    expect(message?.topic).toBe('svc/node1.lab.local/usersession/hdr');
    expect(message?.payload).toBe(
      [
        '[',
        '  {',
        '    "UserDirectory": "LAB",',
        '    "UserId": "goran",',
        '    "Attributes": [],',
        '    "SessionId": "4d0b7e2c-5a1e-4b8e-9f43-2c6f0a7d1b11"',
        '  },',
        '  {',
        '    "UserDirectory": "LAB",',
        '    "UserId": "anna",',
        '    "Attributes": [',
        '      {',
        '        "Group": "Sales"',
        '      }',
        '    ],',
        '    "SessionId": "9f9e8d7c-6b5a-4c3d-9e2f-1a0b9c8d7e6f"',
        '  }',
        ']',
      ].join('\n'),
    );
  });

  it('the root proxy gives …/usersession/, and no sessions an empty array', () => {
    expect(sessionMessages(sessionSample({ virtualProxy: '/', sessions: [], userIdList: '' }), 'svc/')).toEqual([
      { topic: 'svc/node1.lab.local/usersession/', payload: '[]' },
    ]);
    expect(sessionMessages(sessionSample({ virtualProxy: '/a+b#' }), 'x/')[0]?.topic).toBe(
      'x/node1.lab.local/usersession/a_b_',
    );
  });
});

describe('MqttDestination (health and sessions)', () => {
  let rig: MqttRig;
  let writer: MqttWriter;
  let received: Received[] = [];
  let tracked: TrackedError[] = [];

  beforeAll(async () => {
    rig = await startMqttRig();
    ({ writer, received, tracked } = rig);
  });
  afterAll(async () => {
    await rig?.stop();
  });
  beforeEach(() => {
    tracked.length = 0;
  });

  const under = (prefix: string) => received.filter((m) => m.topic.startsWith(prefix));

  it('publishes every health value and the session array, not retained, and leaves other kinds alone', async () => {
    const destination = new MqttDestination({
      writer,
      userEvents: null,
      logEvents: null,
      health: { baseTopic: 'p1/' },
      sessions: { baseTopic: 'p1/' },
      log: silentLog,
    });
    const health = healthQueued();
    const sessions = sessionsQueued();
    expect(await destination.write([health, sessions, userQueued(START_SESSION)])).toEqual(new Set());
    const expected = [...healthMessages(health.sample, 'p1/'), ...sessionMessages(sessions.sample, 'p1/')];
    expect(expected).toHaveLength(23);
    await until('23 messages', () => under('p1/').length >= 23);
    await sleep(100);
    expect(asText(under('p1/')).sort()).toEqual(asText(expected).sort());
    expect(under('p1/').every((m) => !m.retain)).toBe(true);
    expect(under('p1/').find((m) => m.topic === 'p1/node1.lab.local/cache/hit_ratio')?.payload).toBe('75');
    expect(tracked).toEqual([]);
  });

  it('takes health and session polls only when they go to MQTT', async () => {
    const healthOnly = new MqttDestination({
      writer,
      userEvents: null,
      logEvents: null,
      health: { baseTopic: 'p2/' },
      sessions: null,
      log: silentLog,
    });
    expect(
      await healthOnly.write([
        sessionsQueued(),
        healthQueued(
          healthSample({ body: healthBody({ cache: { hits: 0, lookups: 0, added: 0, replaced: 0, bytes_added: 0 } }) }),
        ),
      ]),
    ).toEqual(new Set());
    const sessionsOnly = new MqttDestination({
      writer,
      userEvents: null,
      logEvents: null,
      sessions: { baseTopic: 'p3/' },
      log: silentLog,
    });
    expect(await sessionsOnly.write([healthQueued(), sessionsQueued()])).toEqual(new Set());
    await until('22 messages', () => under('p2/').length + under('p3/').length >= 22);
    await sleep(100);
    expect(under('p2/')).toHaveLength(21);
    expect(under('p2/').some((m) => m.topic.includes('usersession'))).toBe(false);
    expect(under('p3/').map((m) => m.topic)).toEqual(['p3/node1.lab.local/usersession/hdr']);
  });

  it('tracks failed publishes with the module and server, returns the poll, and a redelivery publishes only what did not reach the broker', async () => {
    // A topic longer than MQTT's 65,535 bytes cannot be published (MqttWriter refuses it): with this
    // base topic the suffixes of up to 12 characters fit and the longer ones fail, every time.
    const base = `p4/${'x'.repeat(65_535 - 'node1.lab.local'.length - 12 - 4)}/`;
    const fits = (topic: string) => Buffer.byteLength(topic) <= 65_535;
    const destination = new MqttDestination({
      writer,
      userEvents: null,
      logEvents: null,
      health: { baseTopic: base },
      sessions: { baseTopic: base },
      log: silentLog,
    });
    const health = healthQueued();
    const sessions = sessionsQueued();
    const messages = healthMessages(health.sample, base);
    const good = messages.filter((m) => fits(m.topic));
    const bad = messages.length - good.length;
    expect(good.map((m) => m.topic.slice(base.length + 'node1.lab.local'.length)).sort()).toEqual(
      [
        '/apps/calls',
        '/cache/added',
        '/cache/hits',
        '/cpu/total',
        '/mem/free',
        '/saturated',
        '/started',
        '/users/total',
        '/version',
      ].sort(),
    );

    expect(await destination.write([health, sessions])).toEqual(new Set([health.id, sessions.id]));
    expect(tracked.map((t) => [t.type, t.module, t.serverName])).toEqual([
      ...Array<string[]>(bad).fill(['MQTT_PUBLISH', HEALTH_MQTT_MODULE, 'Node1']),
      ['MQTT_PUBLISH', SESSIONS_MQTT_MODULE, 'Node1'],
    ]);
    expect(HEALTH_MQTT_MODULE).toBe('HEALTH_METRICS_MQTT');
    expect(SESSIONS_MQTT_MODULE).toBe('PROXY_SESSIONS_MQTT');

    expect(await destination.write([health, sessions])).toEqual(new Set([health.id, sessions.id]));
    await until(`${good.length} messages`, () => under('p4/').length >= good.length);
    await sleep(200);
    // Each topic that worked once, although the poll was delivered twice.
    expect(asText(under('p4/')).sort()).toEqual(asText(good).sort());
  });
});
