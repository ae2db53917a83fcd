/**
 * Monitoring-SaaS events of the UDP events (platform-formats.md §8.3) and scrambling (§8.4): the test
 * vector, attribute sets and order, the gating of log events by source and level.
 */
import { describe, expect, it } from 'vitest';
import {
  type LogMonSaasOptions,
  logMonSaasEvent,
  MONSAAS_LOG_EVENT_ATTRIBUTES,
  MONSAAS_USER_EVENT_ATTRIBUTES,
  type MonSaasLogSourceSettings,
  resolveScrambleKey,
  scrambleValue,
  timestampMs,
  type UserMonSaasOptions,
  userMonSaasEvent,
} from '../../../../shared/destinations/monsaas/mappers.js';
import {
  ENGINE,
  logQueued,
  OPEN_CONNECTION,
  PROXY,
  QIX_PERF_USER,
  REPOSITORY,
  SCHEDULER,
  START_SESSION,
  userQueued,
} from '../../platform/fixtures.js';

const SECRET = 'example-secret-change-me-0123456789';

const USER_OPTIONS: UserMonSaasOptions = { tags: [], staticAttributes: [], svcVersion: null, scrambleKey: null };

function sources(
  over: Partial<Record<keyof MonSaasLogSourceSettings, { enable: boolean; error?: boolean; warn?: boolean }>> = {},
): MonSaasLogSourceSettings {
  const one = (key: keyof MonSaasLogSourceSettings) => {
    const s = over[key] ?? { enable: true };
    return { enable: s.enable, logLevel: { error: s.error ?? true, warn: s.warn ?? true } };
  };
  return { engine: one('engine'), proxy: one('proxy'), repository: one('repository'), scheduler: one('scheduler') };
}

const LOG_OPTIONS: LogMonSaasOptions = { tags: [], staticAttributes: [], svcVersion: null, sources: sources() };

describe('scrambling (§8.4)', () => {
  it('reproduces the test vector', () => {
    expect(scrambleValue(SECRET, 'LAB\\goran')).toBe('74ca917114fe1672fe7e0981cd8992af');
    expect(scrambleValue(SECRET, 'LAB')).toBe('df628e14b3ffd2f5f455504fd02e5138');
    expect(scrambleValue(SECRET, 'goran')).toBe('624d96cc0450a23a8f654d068720d4c8');
    expect(scrambleValue(Buffer.from(SECRET, 'utf8'), 'goran')).toBe('624d96cc0450a23a8f654d068720d4c8');
  });

  it('hashes the UTF-8 bytes of the value', () => {
    expect(scrambleValue(SECRET, 'Grüße')).toMatch(/^[0-9a-f]{32}$/);
    expect(scrambleValue(SECRET, 'Grüße')).not.toBe(scrambleValue(SECRET, 'Grusse'));
  });

  it('uses the configured secret, or a random 32-byte key with a WARN', () => {
    const warnings: string[] = [];
    const log = { warn: (_obj: object, msg: string) => warnings.push(msg) };
    expect(resolveScrambleKey(SECRET, log)).toBe(SECRET);
    expect(warnings).toEqual([]);
    const a = resolveScrambleKey('', log);
    const b = resolveScrambleKey('', log);
    expect(Buffer.isBuffer(a) && a.length).toBe(32);
    expect(scrambleValue(a, 'goran')).not.toBe(scrambleValue(b, 'goran'));
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatch(/change on every restart/);
  });
});

describe('user events (§8.3)', () => {
  it('has eventType first, the built-in attributes in order, then tags, static attributes and svcVersion', () => {
    const event = userMonSaasEvent(userQueued(OPEN_CONNECTION, '1710234000123999999'), {
      tags: [{ name: 'env', value: 'prod' }],
      staticAttributes: [{ name: 'team', value: 'platform' }],
      svcVersion: '15.0.0',
      scrambleKey: null,
    });
    expect(event).toEqual({
      eventType: 'qs_userEvent',
      timestamp: 1710234000123,
      qs_host: 'PLAT-N1',
      qs_event_action: 'Open connection',
      qs_userFull: 'LAB\\goran',
      qs_userDirectory: 'LAB',
      qs_userId: 'goran',
      qs_origin: 'AppAccess',
      qs_appId: OPEN_CONNECTION.appId,
      qs_appName: '<unknown app name>',
      qs_uaBrowserName: 'Chrome',
      qs_uaBrowserMajorVersion: '120',
      qs_uaOsName: 'Windows',
      qs_uaOsVersion: 'NT 10.0',
      env: 'prod',
      team: 'platform',
      svcVersion: '15.0.0',
    });
    expect(Object.keys(event)).toEqual([
      ...MONSAAS_USER_EVENT_ATTRIBUTES.filter((a) => a !== 'svcVersion'),
      'env',
      'team',
      'svcVersion',
    ]);
  });

  it('leaves out absent optional attributes and svcVersion when off', () => {
    expect(Object.keys(userMonSaasEvent(userQueued(START_SESSION), USER_OPTIONS))).toEqual([
      'eventType',
      'timestamp',
      'qs_host',
      'qs_event_action',
      'qs_userFull',
      'qs_userDirectory',
      'qs_userId',
      'qs_origin',
    ]);
  });

  it('scrambles the three user attributes with the key, nothing else', () => {
    const event = userMonSaasEvent(userQueued(START_SESSION), { ...USER_OPTIONS, scrambleKey: SECRET });
    expect(event).toMatchObject({
      qs_userFull: '74ca917114fe1672fe7e0981cd8992af',
      qs_userDirectory: 'df628e14b3ffd2f5f455504fd02e5138',
      qs_userId: '624d96cc0450a23a8f654d068720d4c8',
      qs_host: 'PLAT-N1',
      qs_origin: 'AppAccess',
    });
    const empty = userMonSaasEvent(userQueued({ ...START_SESSION, user_directory: '', user_id: '', user_full: '' }), {
      ...USER_OPTIONS,
      scrambleKey: SECRET,
    });
    expect(empty).toMatchObject({ qs_userFull: '', qs_userDirectory: '', qs_userId: '' });
  });

  it('configured names never replace a built-in attribute', () => {
    const event = userMonSaasEvent(userQueued(START_SESSION), {
      tags: [{ name: 'qs_host', value: 'x' }],
      staticAttributes: [
        { name: 'eventType', value: 'y' },
        { name: 'svcVersion', value: 'z' },
      ],
      svcVersion: '1.2.3',
      scrambleKey: null,
    });
    expect(event).toMatchObject({ qs_host: 'PLAT-N1', eventType: 'qs_userEvent', svcVersion: 'z' });
  });

  it('timestamp = the point time in ms, floored', () => {
    expect(timestampMs('1710234000000999999')).toBe(1710234000000);
    expect(timestampMs('999999')).toBe(0);
    expect(timestampMs('-1')).toBe(-1);
  });
});

describe('log events (§8.3)', () => {
  it('proxy: the qs_ attributes of the source, empty ones omitted, then categories, tags, static, svcVersion', () => {
    const event = logMonSaasEvent(logQueued(PROXY, '1710233101876000003'), {
      ...LOG_OPTIONS,
      tags: [{ name: 'env', value: 'prod' }],
      staticAttributes: [{ name: 'team', value: 'platform' }],
      svcVersion: '15.0.0',
    });
    expect(event).toEqual({
      eventType: 'qs_logEvent',
      timestamp: 1710233101876,
      qs_ts_iso: '20240312T094501.876+0100',
      qs_ts_local: '2024-03-12 09:45:01,876',
      qs_log_source: 'qseow-proxy',
      qs_log_level: 'WARN',
      qs_host: 'PLAT-N1',
      qs_subsystem: 'Audit.Proxy.Proxy.Core.RequestListener',
      qs_windows_user: 'LAB\\svc_platform',
      qs_message: "Access was denied for User: 'LAB\\kalle'. No license available.",
      qs_user_full: 'LAB\\kalle',
      qs_user_directory: 'LAB',
      qs_user_id: 'kalle',
      qs_command: 'Login',
      qs_result_code: '403',
      qs_origin: 'AppAccess',
      qs_context: '/hub/',
      qs_log_category: 'access-denied',
      env: 'prod',
      team: 'platform',
      svcVersion: '15.0.0',
    });
    expect(Object.keys(event ?? {}).slice(-4)).toEqual(['qs_log_category', 'env', 'team', 'svcVersion']);
  });

  it('engine, repository and scheduler carry exactly their attributes', () => {
    const keys = (e: Parameters<typeof logQueued>[0]) => Object.keys(logMonSaasEvent(logQueued(e), LOG_OPTIONS) ?? {});
    const head = [
      'eventType',
      'timestamp',
      'qs_ts_iso',
      'qs_ts_local',
      'qs_log_source',
      'qs_log_level',
      'qs_host',
      'qs_subsystem',
      'qs_windows_user',
      'qs_message',
    ];
    expect(keys(ENGINE)).toEqual([
      ...head,
      'qs_user_full',
      'qs_user_directory',
      'qs_user_id',
      'qs_app_id',
      'qs_proxy_session_id',
      'qs_engine_ts',
      'qs_process_id',
      'qs_engine_exe_version',
      'qs_server_started',
      'qs_entry_type',
      'qs_session_id',
    ]);
    expect(keys(REPOSITORY)).toEqual([...head, 'qs_exception_message', 'qs_origin', 'qs_context']);
    expect(keys(SCHEDULER)).toEqual([
      ...head,
      'qs_user_full',
      'qs_user_directory',
      'qs_user_id',
      'qs_task_name',
      'qs_app_name',
      'qs_task_id',
      'qs_app_id',
      'qs_execution_id',
    ]);
    const all = new Set<string>(MONSAAS_LOG_EVENT_ATTRIBUTES);
    for (const e of [ENGINE, PROXY, REPOSITORY, SCHEDULER])
      for (const k of keys(e)) if (k !== 'qs_log_category') expect(all.has(k), k).toBe(true);
  });

  it('is never sent for engine performance', () => {
    expect(logMonSaasEvent(logQueued({ ...QIX_PERF_USER, level: 'ERROR' }), LOG_OPTIONS)).toBeNull();
  });

  it('is sent only for an enabled source', () => {
    const options = { ...LOG_OPTIONS, sources: sources({ proxy: { enable: false } }) };
    expect(logMonSaasEvent(logQueued(PROXY), options)).toBeNull();
    expect(logMonSaasEvent(logQueued(ENGINE), options)).not.toBeNull();
  });

  it('levels: error covers ERROR and FATAL, warn covers WARN, nothing else is sent', () => {
    const sent = (level: string, error: boolean, warn: boolean) =>
      logMonSaasEvent(logQueued({ ...REPOSITORY, level }), {
        ...LOG_OPTIONS,
        sources: sources({ repository: { enable: true, error, warn } }),
      }) !== null;
    expect([sent('ERROR', true, false), sent('FATAL', true, false), sent('WARN', true, false)]).toEqual([
      true,
      true,
      false,
    ]);
    expect([sent('ERROR', false, true), sent('FATAL', false, true), sent('WARN', false, true)]).toEqual([
      false,
      false,
      true,
    ]);
    expect([sent('INFO', true, true), sent('DEBUG', true, true), sent('TRACE', true, true)]).toEqual([
      false,
      false,
      false,
    ]);
    expect(sent('error', true, false)).toBe(true);
  });
});
