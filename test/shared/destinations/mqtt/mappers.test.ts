/**
 * MQTT messages of the UDP events (platform-formats.md §7.3, §7.4): payloads byte for byte, the
 * topics per command and per enabled flag, subsystem topics.
 */
import { describe, expect, it } from 'vitest';
import {
  type LogEventMqttSettings,
  logEventMessages,
  subsystemTopic,
  type UserEventMqttSettings,
  userEventMessages,
} from '../../../../shared/destinations/mqtt/mappers.js';
import { CLOSE_CONNECTION, OPEN_CONNECTION, PROXY, QIX_PERF_INTERNAL, START_SESSION } from '../../platform/fixtures.js';

function userSettings(enabled: Partial<Record<keyof UserEventMqttSettings['postTo'], boolean>>): UserEventMqttSettings {
  const t = (key: keyof UserEventMqttSettings['postTo'], topic: string) => ({ enable: enabled[key] ?? false, topic });
  return {
    enable: true,
    postTo: {
      everythingTopic: t('everythingTopic', 'svc/userevent'),
      sessionStartTopic: t('sessionStartTopic', 'svc/userevent/session/start'),
      sessionStopTopic: t('sessionStopTopic', 'svc/userevent/session/stop'),
      connectionOpenTopic: t('connectionOpenTopic', 'svc/userevent/connection/open'),
      connectionCloseTopic: t('connectionCloseTopic', 'svc/userevent/connection/close'),
    },
  };
}

const ALL_TOPICS = userSettings({
  everythingTopic: true,
  sessionStartTopic: true,
  sessionStopTopic: true,
  connectionOpenTopic: true,
  connectionCloseTopic: true,
});

function logSettings(baseTopic: boolean, subsystemTopics: boolean, base = 'svc/logevent'): LogEventMqttSettings {
  return { enable: true, baseTopic: base, postTo: { baseTopic, subsystemTopics } };
}

describe('user events (§7.3)', () => {
  it('writes the §7.3 example payload byte for byte', () => {
    const messages = userEventMessages(START_SESSION, userSettings({ everythingTopic: true }), [
      { name: 'env', value: 'dev' },
    ]);
    expect(messages).toEqual([
      {
        topic: 'svc/userevent',
        payload:
          '{"messageType":"qseow-proxy-session","host":"PLAT-N1","command":"Start session","userDir":"LAB","userId":"goran","origin":"AppAccess","context":"/hub/","message":"Start session for user \'LAB\\\\goran\'","tags":{"env":"dev"}}',
      },
    ]);
  });

  it('adds the app and user-agent keys after tags, in order, when present', () => {
    const [message] = userEventMessages(OPEN_CONNECTION, userSettings({ everythingTopic: true }), []);
    const payload = JSON.parse(message?.payload ?? '{}') as Record<string, unknown>;
    expect(Object.keys(payload)).toEqual([
      'messageType',
      'host',
      'command',
      'userDir',
      'userId',
      'origin',
      'context',
      'message',
      'tags',
      'appId',
      'appName',
      'uaBrowserName',
      'uaBrowserMajorVersion',
      'uaOsName',
      'uaOsVersion',
    ]);
    expect(payload).toMatchObject({
      tags: {},
      appName: '<unknown app name>',
      uaOsVersion: 'NT 10.0',
      userDir: 'LAB',
      userId: 'goran',
    });
  });

  it('publishes to the everything topic and to the one topic of the command', () => {
    const topics = (event: typeof START_SESSION, settings = ALL_TOPICS) =>
      userEventMessages(event, settings, []).map((m) => m.topic);
    expect(topics(START_SESSION)).toEqual(['svc/userevent', 'svc/userevent/session/start']);
    expect(topics({ ...START_SESSION, command: 'Stop session' })).toEqual([
      'svc/userevent',
      'svc/userevent/session/stop',
    ]);
    expect(topics(OPEN_CONNECTION)).toEqual(['svc/userevent', 'svc/userevent/connection/open']);
    expect(topics(CLOSE_CONNECTION)).toEqual(['svc/userevent', 'svc/userevent/connection/close']);
    // Commands are case-sensitive (§1.2); an unknown one goes to the everything topic only.
    expect(topics({ ...START_SESSION, command: 'start session' })).toEqual(['svc/userevent']);
    expect(topics({ ...START_SESSION, command: 'toString' })).toEqual(['svc/userevent']);
  });

  it('publishes nothing to a topic that is not enabled', () => {
    expect(userEventMessages(START_SESSION, userSettings({}), [])).toEqual([]);
    expect(
      userEventMessages(START_SESSION, userSettings({ sessionStopTopic: true, connectionOpenTopic: true }), []),
    ).toEqual([]);
    expect(userEventMessages(START_SESSION, userSettings({ sessionStartTopic: true }), []).map((m) => m.topic)).toEqual(
      ['svc/userevent/session/start'],
    );
    expect(
      userEventMessages(CLOSE_CONNECTION, userSettings({ everythingTopic: true, sessionStartTopic: true }), []).map(
        (m) => m.topic,
      ),
    ).toEqual(['svc/userevent']);
  });

  it('sends once to two enabled topics with the same text', () => {
    const settings = userSettings({ everythingTopic: true, sessionStartTopic: true });
    settings.postTo.sessionStartTopic.topic = 'svc/userevent';
    expect(userEventMessages(START_SESSION, settings, [])).toHaveLength(1);
  });
});

describe('log events (§7.4)', () => {
  it('builds the subsystem topic of the §7.4 example', () => {
    expect(subsystemTopic('svc/logevent', 'Audit.Proxy.Proxy.Core.RequestListener')).toBe(
      'svc/logevent/audit/proxy/proxy/core/requestlistener',
    );
    expect(subsystemTopic('svc/logevent/', 'Audit.Proxy')).toBe('svc/logevent/audit/proxy');
  });

  it('replaces wildcards by _, drops empty parts, and names an empty subsystem unknown', () => {
    expect(subsystemTopic('svc/logevent', 'A+b.#C')).toBe('svc/logevent/a_b/_c');
    expect(subsystemTopic('svc/logevent', '.System..Engine.')).toBe('svc/logevent/system/engine');
    expect(subsystemTopic('svc/logevent', '')).toBe('svc/logevent/unknown');
  });

  it('publishes to the base topic and/or the subsystem topic as enabled', () => {
    const topics = (base: boolean, sub: boolean) =>
      logEventMessages(PROXY, logSettings(base, sub), []).map((m) => m.topic);
    expect(topics(true, true)).toEqual(['svc/logevent', 'svc/logevent/audit/proxy/proxy/core/requestlistener']);
    expect(topics(true, false)).toEqual(['svc/logevent']);
    expect(topics(false, true)).toEqual(['svc/logevent/audit/proxy/proxy/core/requestlistener']);
    expect(topics(false, false)).toEqual([]);
  });

  it('payload = the parsed object with category, then tags', () => {
    const event = { ...PROXY, category: [...(PROXY.category ?? []), { name: 'qs_log_category', value: 'license' }] };
    const [message] = logEventMessages(event, logSettings(true, false), [{ name: 'env', value: 'prod' }]);
    expect(message?.payload).toBe(JSON.stringify({ ...event, tags: { env: 'prod' } }));
    const payload = JSON.parse(message?.payload ?? '{}') as Record<string, unknown>;
    expect(Object.keys(payload).at(-1)).toBe('tags');
    // Both values of a repeated category name stay (§2.5 step 5).
    expect(payload['category']).toHaveLength(2);
  });

  it('engine-performance events are published too (nulls as null)', () => {
    const [message] = logEventMessages({ ...QIX_PERF_INTERNAL, process_time: null }, logSettings(false, true), []);
    expect(message?.topic).toBe('svc/logevent/qixperformance/engine/engine');
    expect(JSON.parse(message?.payload ?? '{}')).toMatchObject({
      source: 'qseow-qix-perf',
      process_time: null,
      handle: -1,
      tags: {},
    });
  });
});
