/**
 * MqttDestination against a real mosquitto: the topics and payloads of §7.3/§7.4 arrive at a
 * subscriber; an event with a failed publish comes back for redelivery without republishing to the
 * topics it reached; kinds it does not serve are left alone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MqttWriter } from '../../../../shared/destinations/mqtt/client.js';
import { MqttDestination, USER_EVENTS_MQTT_MODULE } from '../../../../shared/destinations/mqtt/destination.js';
import {
  type LogEventMqttSettings,
  logEventMessages,
  type UserEventMqttSettings,
  userEventMessages,
} from '../../../../shared/destinations/mqtt/mappers.js';
import { DestinationWaitError } from '../../../../shared/destinations/port.js';
import { ErrorTracker, type TrackedError } from '../../../../shared/errors/tracker.js';
import { silentLog } from '../../../support/log.js';
import type { MosquittoHandle } from '../../../support/mosquitto.js';
import { type MqttRig, mqttTestSettings, type Received, startMqttRig } from '../../../support/mqtt-rig.js';
import { sleep, until } from '../../../support/ports.js';
import {
  CLOSE_CONNECTION,
  logQueued,
  PROXY,
  QIX_PERF_USER,
  START_SESSION,
  userQueued,
} from '../../platform/fixtures.js';
import { auditQueued, EVENT_COUNT, pointsQueued } from '../../platform/queued.js';

const quiet = silentLog;

function userSettings(
  prefix: string,
  enabled: Partial<Record<keyof UserEventMqttSettings['postTo'], string>>,
): UserEventMqttSettings {
  const t = (key: keyof UserEventMqttSettings['postTo'], suffix: string) => ({
    enable: enabled[key] !== undefined,
    topic: enabled[key] ?? `${prefix}/${suffix}`,
  });
  return {
    enable: true,
    postTo: {
      everythingTopic: t('everythingTopic', 'userevent'),
      sessionStartTopic: t('sessionStartTopic', 'userevent/session/start'),
      sessionStopTopic: t('sessionStopTopic', 'userevent/session/stop'),
      connectionOpenTopic: t('connectionOpenTopic', 'userevent/connection/open'),
      connectionCloseTopic: t('connectionCloseTopic', 'userevent/connection/close'),
    },
  };
}

function logSettings(baseTopic: string): LogEventMqttSettings {
  return { enable: true, baseTopic, postTo: { baseTopic: true, subsystemTopics: true } };
}

describe('MqttDestination', () => {
  let rig: MqttRig;
  let broker: MosquittoHandle;
  let writer: MqttWriter;
  let received: Received[] = [];
  let tracked: TrackedError[] = [];

  beforeAll(async () => {
    rig = await startMqttRig();
    ({ broker, writer, received, tracked } = rig);
  });
  afterAll(async () => {
    await rig?.stop();
  });

  const under = (prefix: string) => received.filter((m) => m.topic.startsWith(`${prefix}/`) || m.topic === prefix);

  it('publishes every message of user and log events, payloads as built, not retained', async () => {
    const user = userSettings('t1', {
      everythingTopic: 't1/userevent',
      sessionStartTopic: 't1/userevent/session/start',
      connectionCloseTopic: 't1/userevent/connection/close',
    });
    const log = logSettings('t1/logevent');
    const tags = [{ name: 'env', value: 'dev' }];
    const destination = new MqttDestination({
      writer,
      userEvents: { settings: user, tags },
      logEvents: { settings: log, tags: [{ name: 'site', value: 'lab' }] },
      log: quiet,
    });
    const events = [
      userQueued(START_SESSION),
      userQueued(CLOSE_CONNECTION),
      logQueued(PROXY),
      logQueued(QIX_PERF_USER),
      pointsQueued('EVENT_COUNTS', [EVENT_COUNT]),
      auditQueued(),
    ];
    expect(await destination.write(events)).toEqual(new Set());

    const expected = [
      ...userEventMessages(START_SESSION, user, tags),
      ...userEventMessages(CLOSE_CONNECTION, user, tags),
      ...logEventMessages(PROXY, log, [{ name: 'site', value: 'lab' }]),
      ...logEventMessages(QIX_PERF_USER, log, [{ name: 'site', value: 'lab' }]),
    ];
    expect(expected).toHaveLength(8);
    await until('8 messages', () => under('t1').length >= 8);
    await sleep(100);
    const got = under('t1');
    expect(got.map((m) => m.retain)).toEqual(Array(8).fill(false));
    const byTopic = (list: { topic: string; payload: string }[]) => list.map((m) => `${m.topic} ${m.payload}`).sort();
    expect(byTopic(got)).toEqual(byTopic(expected));
    expect(got.map((m) => m.topic).sort()).toEqual(
      [
        't1/userevent',
        't1/userevent',
        't1/userevent/session/start',
        't1/userevent/connection/close',
        't1/logevent',
        't1/logevent/audit/proxy/proxy/core/requestlistener',
        't1/logevent',
        't1/logevent/qixperformance/engine/engine',
      ].sort(),
    );
    // §7.3's example payload, byte for byte, as the subscriber got it.
    expect(got.find((m) => m.topic === 't1/userevent/session/start')?.payload).toBe(
      '{"messageType":"qseow-proxy-session","host":"PLAT-N1","command":"Start session","userDir":"LAB","userId":"goran","origin":"AppAccess","context":"/hub/","message":"Start session for user \'LAB\\\\goran\'","tags":{"env":"dev"}}',
    );
  });

  it('leaves user events alone when they do not go to MQTT (not published, not failed)', async () => {
    const destination = new MqttDestination({
      writer,
      userEvents: null,
      logEvents: { settings: logSettings('t2/logevent'), tags: [] },
      log: quiet,
    });
    expect(await destination.write([userQueued(START_SESSION), logQueued(PROXY)])).toEqual(new Set());
    await until('2 messages', () => under('t2').length >= 2);
    await sleep(100);
    expect(
      under('t2')
        .map((m) => m.topic)
        .sort(),
    ).toEqual(['t2/logevent', 't2/logevent/audit/proxy/proxy/core/requestlistener']);
  });

  it('returns an event with a failed publish, and a redelivery does not republish to the topics it reached', async () => {
    // A wildcard in a configured topic makes that one publish fail (MqttWriter refuses it).
    const user = userSettings('t3', { everythingTopic: 't3/userevent', sessionStartTopic: 't3/bad/+' });
    const destination = new MqttDestination({
      writer,
      userEvents: { settings: user, tags: [] },
      logEvents: null,
      log: quiet,
    });
    const failing = userQueued(START_SESSION);
    const fine = userQueued(CLOSE_CONNECTION);
    expect(await destination.write([failing, fine])).toEqual(new Set([failing.id]));
    expect(tracked.filter((t) => t.type === 'MQTT_PUBLISH').map((t) => t.module)).toEqual([USER_EVENTS_MQTT_MODULE]);

    expect(await destination.write([failing])).toEqual(new Set([failing.id]));
    await until('2 messages', () => under('t3').length >= 2);
    await sleep(200);
    // Once for each event on the everything topic: the redelivery did not publish it again.
    expect(
      under('t3')
        .map((m) => JSON.parse(m.payload) as { command: string })
        .map((p) => p.command)
        .sort(),
    ).toEqual(['Close connection', 'Start session']);
  });

  it('while the writer is not connected, a delivery with events it serves waits (unavailable, nothing published or tracked); one without is left alone', async () => {
    const errors = new ErrorTracker({ enabled: true, log: silentLog, sink: (e) => tracked.push(e) });
    const notStarted = new MqttWriter({ settings: mqttTestSettings(broker.port), log: quiet, errors });
    const destination = new MqttDestination({
      writer: notStarted,
      userEvents: { settings: userSettings('t4', { everythingTopic: 't4/userevent' }), tags: [] },
      logEvents: { settings: logSettings('t4/logevent'), tags: [] },
      log: quiet,
    });
    const user = userQueued(START_SESSION);
    const log = logQueued(PROXY);
    tracked.length = 0;
    await expect(
      destination.write([user, log, pointsQueued('EVENT_COUNTS', [EVENT_COUNT]), auditQueued()]),
    ).rejects.toBeInstanceOf(DestinationWaitError);
    expect(await destination.write([pointsQueued('EVENT_COUNTS', [EVENT_COUNT]), auditQueued()])).toEqual(new Set());
    expect(tracked).toEqual([]);
    expect(destination.failedWrites).toBe(0);
  });
});
