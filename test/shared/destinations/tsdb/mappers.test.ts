/**
 * tsdb points of the UDP events (platform-formats.md §6.3, §6.4) through `toLine`, compared with the
 * §6.11 examples and the §6.4 table per source (tag order not significant, `raw_event` on its own).
 */
import { describe, expect, it } from 'vitest';
import { float, int, type Point, str, toLine } from '../../../../shared/destinations/tsdb/line-protocol.js';
import {
  BUILT_IN_POINT_NAMES,
  jsonPointToPoint,
  LOG_EVENT_FIELDS,
  LOG_EVENT_TAGS,
  logEventPoint,
  pointToJson,
  userEventPoint,
} from '../../../../shared/destinations/tsdb/mappers.js';
import type { JsonPoint } from '../../../../shared/queue/events.js';
import { parseTimeNs } from '../../../../shared/queue/events.js';
import {
  APP_ID,
  CLOSE_CONNECTION,
  ENGINE,
  logQueued,
  OPEN_CONNECTION,
  PROXY,
  parseLine,
  QIX_PERF_INTERNAL,
  QIX_PERF_USER,
  REPOSITORY,
  SCHEDULER,
  START_SESSION,
  unquote,
  userQueued,
} from '../../platform/fixtures.js';

/** The fields of a line without `raw_event`, and `raw_event` parsed. */
function splitRaw(line: string): { parsed: ReturnType<typeof parseLine>; raw: unknown } {
  const parsed = parseLine(line);
  const rawText = parsed.fields['raw_event'];
  if (rawText === undefined) throw new Error(`no raw_event in ${line}`);
  const { raw_event: _, ...fields } = parsed.fields;
  return { parsed: { ...parsed, fields }, raw: JSON.parse(unquote(rawText)) };
}

describe('user_events (§6.3)', () => {
  it('writes the §6.11 example exactly', () => {
    const expected =
      'user_events,host=PLAT-N1,event_action=Open\\ connection,userFull=LAB\\goran,userDirectory=LAB,userId=goran,origin=AppAccess,appId=e7af59a0-c243-480d-9571-08727551a66f,appName=<unknown\\ app\\ name>,uaBrowserName=Chrome,uaBrowserMajorVersion=120,uaOsName=Windows,uaOsVersion=NT\\ 10.0 userFull_field="LAB\\\\goran",userId_field="goran",appId_field="e7af59a0-c243-480d-9571-08727551a66f",appName_field="<unknown app name>" 1710234000000000002';
    const line = toLine(userEventPoint(userQueued(OPEN_CONNECTION, '1710234000000000002'), []));
    expect(parseLine(line)).toEqual(parseLine(expected));
    // Tag order follows §6.3, so this one is even byte-identical.
    expect(line).toBe(expected);
  });

  it('omits the app and user-agent tags and fields when absent, keeps userFull_field/userId_field always', () => {
    const line = toLine(userEventPoint(userQueued(START_SESSION, '1710233000000000000'), []));
    expect(line).toBe(
      'user_events,host=PLAT-N1,event_action=Start\\ session,userFull=LAB\\goran,userDirectory=LAB,userId=goran,origin=AppAccess userFull_field="LAB\\\\goran",userId_field="goran" 1710233000000000000',
    );
  });

  it('writes a user without directory and id, and an empty origin only omits the origin tag', () => {
    const line = toLine(
      userEventPoint(
        userQueued({ ...START_SESSION, user_directory: '', user_id: '', user_full: '', origin: '' }, '5'),
        [],
      ),
    );
    expect(line).toBe('user_events,host=PLAT-N1,event_action=Start\\ session userFull_field="",userId_field="" 5');
  });

  it('puts the configured tags last, and never lets one replace a built-in tag', () => {
    const point = userEventPoint(userQueued(CLOSE_CONNECTION), [
      { name: 'env', value: 'prod' },
      { name: 'host', value: 'overridden' },
      { name: 'site', value: 'lab 1' },
    ]);
    expect(Object.keys(point.tags).slice(-2)).toEqual(['env', 'site']);
    expect(point.tags['host']).toBe('PLAT-N2');
    expect(toLine(point)).toMatch(/,uaOsVersion=10\.15\.7,env=prod,site=lab\\ 1 userFull_field=/);
  });

  it('takes the point time from timeNs exactly (beyond 2^53)', () => {
    expect(userEventPoint(userQueued(START_SESSION, '1710234000123456789'), []).timeNs).toBe(1710234000123456789n);
    expect(() => userEventPoint(userQueued(START_SESSION, ''), [])).toThrow(RangeError);
    expect(() => userEventPoint(userQueued(START_SESSION, '0x10'), [])).toThrow(RangeError);
  });
});

describe('log_event (§6.4)', () => {
  it('writes the §6.11 proxy example exactly, raw_event = the parsed object', () => {
    const expected =
      'log_event,host=PLAT-N1,level=WARN,source=qseow-proxy,log_row=312,subsystem=Audit.Proxy.Proxy.Core.RequestListener,qs_log_category=access-denied,user_full=LAB\\kalle,user_directory=LAB,user_id=kalle,windows_user=LAB\\svc_platform,result_code=403 message="Access was denied for User: \'LAB\\\\kalle\'. No license available.",exception_message="",command="Login",result_code_field="403",origin="AppAccess",context="/hub/",raw_event="{…}" 1710233101876000003';
    const q = logQueued(PROXY, '1710233101876000003');
    const line = toLine(logEventPoint(q, []));
    const got = splitRaw(line);
    const want = splitRaw(expected.replace('raw_event="{…}"', 'raw_event="{}"'));
    expect(got.parsed).toEqual(want.parsed);
    expect(got.raw).toEqual(PROXY);
    // Compact JSON of exactly the parsed object, category included.
    expect(unquote(parseLine(line).fields['raw_event'] ?? '')).toBe(JSON.stringify(PROXY));
  });

  it('engine: user and app tags, engine_exe_version, message and session_id_field', () => {
    const { parsed, raw } = splitRaw(toLine(logEventPoint(logQueued(ENGINE, '1710234922123000000'), [])));
    expect(parsed).toEqual({
      measurement: 'log_event',
      tags: [
        'host=PLAT-N1',
        'level=WARN',
        'source=qseow-engine',
        'log_row=1542',
        'subsystem=System.Engine.Engine',
        'user_full=LAB\\goran',
        'user_directory=LAB',
        'user_id=goran',
        'windows_user=LAB\\svc_platform',
        `app_id=${APP_ID}`,
        'engine_exe_version=12.1306.0',
      ].sort(),
      fields: {
        message: `"Document was not found: ${APP_ID}"`,
        session_id_field: '"9a8b7c6d-1e2f-4a3b-8c4d-5e6f7a8b9c0d"',
      },
      time: '1710234922123000000',
    });
    expect(raw).toEqual(ENGINE);
  });

  it('repository: empty tags omitted, string fields kept even when empty', () => {
    const { parsed, raw } = splitRaw(toLine(logEventPoint(logQueued(REPOSITORY, '7'), [])));
    expect(parsed.tags).toEqual(
      [
        'host=PLAT-N1',
        'level=ERROR',
        'source=qseow-repository',
        'log_row=55',
        'subsystem=System.Repository.Repository.Core.Synchronization',
        'windows_user=LAB\\svc_platform',
      ].sort(),
    );
    expect(parsed.fields).toEqual({
      message: '"Failed to request service alive response from https://plat-n2.lab.local:4242/."',
      exception_message: '"System.Net.WebException: Unable to connect to the remote server"',
      command: '""',
      result_code_field: '""',
      origin: '"Not available"',
      context: '"Not available"',
    });
    expect(raw).toEqual(REPOSITORY);
  });

  it('scheduler: task tags, app fields with the _field suffix, execution_id', () => {
    const { parsed } = splitRaw(toLine(logEventPoint(logQueued(SCHEDULER, '8'), [])));
    expect(parsed.tags).toEqual(
      [
        'host=PLAT-N1',
        'level=ERROR',
        'source=qseow-scheduler',
        'log_row=87',
        'subsystem=System.Scheduler.Scheduler.Slave.Tasks.ReloadTask',
        'user_full=LAB\\goran',
        'user_directory=LAB',
        'user_id=goran',
        'windows_user=LAB\\svc_platform',
        'task_id=dec2a02a-1680-44ef-8dc2-e2bfb180af87',
        'task_name=Reload\\ of\\ Sales\\ dashboard',
      ].sort(),
    );
    expect(parsed.fields).toEqual({
      message: '"Message from ReloadProvider: Reload failed in Engine. Check engine or script logs."',
      exception_message: '""',
      app_name_field: '"Sales dashboard"',
      app_id_field: `"${APP_ID}"`,
      execution_id: '"4831c6a5-34f6-45bb-9d40-73a6e6992670"',
    });
  });

  it('engine performance: float and int fields, event_activity_source always, no windows_user', () => {
    const { parsed, raw } = splitRaw(toLine(logEventPoint(logQueued(QIX_PERF_INTERNAL, '9'), [])));
    expect(parsed.tags).toEqual(
      [
        'host=PLAT-N1',
        'level=INFO',
        'source=qseow-qix-perf',
        'log_row=20412',
        'subsystem=QixPerformance.Engine.Engine',
        'event_activity_source=non-user',
        'method=Global::OpenApp',
        'object_type=<Unknown>',
        'user_full=INTERNAL\\sa_scheduler',
        'user_directory=INTERNAL',
        'user_id=sa_scheduler',
        `app_id=${APP_ID}`,
        'object_id=<Unknown>',
      ].sort(),
    );
    expect(parsed.fields).toEqual({
      app_id_field: `"${APP_ID}"`,
      process_time: '2380.3',
      work_time: '2301.9',
      lock_time: '12',
      validate_time: '0',
      traverse_time: '0',
      handle: '-1i',
      net_ram: '104857600i',
      peak_ram: '209715200i',
    });
    expect(raw).toEqual(QIX_PERF_INTERNAL);
  });

  it('engine performance: a user request has the session, proxy-session and app-name tags', () => {
    const { parsed } = splitRaw(toLine(logEventPoint(logQueued(QIX_PERF_USER, '10'), [])));
    expect(parsed.tags).toEqual(
      expect.arrayContaining([
        'event_activity_source=user',
        'proxy_session_id=4d0b7e2c-5a1e-4b8e-9f43-2c6f0a7d1b11',
        'session_id=9a8b7c6d-1e2f-4a3b-8c4d-5e6f7a8b9c0d',
        'app_name=Sales\\ dashboard',
        'object_type=barchart',
        'object_id=hXbRtP',
        'method=GenericObject::GetLayout',
      ]),
    );
    expect(parsed.fields).toMatchObject({ process_time: '412.5', lock_time: '0.4', handle: '7i' });
  });

  it('engine performance: null numbers are omitted, log_row null omits its tag', () => {
    const event = { ...QIX_PERF_USER, log_row: null, process_time: null, handle: null, peak_ram: null };
    const q = logQueued(event, '11');
    const point = logEventPoint(q, []);
    const { parsed, raw } = splitRaw(toLine(point));
    expect(Object.keys(parsed.fields).sort()).toEqual([
      'app_id_field',
      'lock_time',
      'net_ram',
      'traverse_time',
      'validate_time',
      'work_time',
    ]);
    expect(parsed.tags.some((t) => t.startsWith('log_row='))).toBe(false);
    // raw_event keeps the parsed object as it is, nulls included.
    expect(raw).toEqual(event);
  });

  it('categories: first value of a repeated name as the tag, raw_event keeps both; configured tags last', () => {
    const event = {
      ...PROXY,
      category: [
        { name: 'qs_log_category', value: 'access-denied' },
        { name: 'team', value: 'identity' },
        { name: 'qs_log_category', value: 'license' },
      ],
    };
    const point = logEventPoint(logQueued(event, '12'), [
      { name: 'env', value: 'prod' },
      { name: 'team', value: 'configured' },
    ]);
    expect(point.tags['qs_log_category']).toBe('access-denied');
    expect(point.tags['team']).toBe('identity');
    expect(Object.keys(point.tags).at(-1)).toBe('env');
    const { parsed, raw } = splitRaw(toLine(point));
    expect(parsed.tags).toEqual(expect.arrayContaining(['qs_log_category=access-denied', 'team=identity', 'env=prod']));
    expect(parsed.tags.filter((t) => t.startsWith('qs_log_category=') || t.startsWith('team='))).toHaveLength(2);
    expect(raw).toEqual(event);
    // raw_event excludes configured tags.
    expect(JSON.stringify(raw)).not.toContain('prod');
  });

  it('a category or configured tag never replaces a built-in tag', () => {
    const point = logEventPoint(
      logQueued(
        {
          ...PROXY,
          category: [
            { name: 'user_id', value: 'x' },
            { name: 'message', value: 'y' },
          ],
        },
        '13',
      ),
      [{ name: 'level', value: 'z' }],
    );
    expect(point.tags['user_id']).toBe('kalle');
    expect(point.tags['level']).toBe('WARN');
    expect(Object.hasOwn(point.tags, 'message')).toBe(false);
  });

  it('every tag and field name written is in the exported §6.4 lists', () => {
    const names = new Set<string>();
    const { category: _category, ...uncategorised } = PROXY;
    for (const event of [ENGINE, uncategorised, REPOSITORY, SCHEDULER, QIX_PERF_USER]) {
      const parsed = parseLine(toLine(logEventPoint(logQueued(event, '1'), [])));
      for (const t of parsed.tags) names.add(t.slice(0, t.indexOf('=')));
      for (const f of Object.keys(parsed.fields)) names.add(f);
    }
    const listed = new Set<string>([...LOG_EVENT_TAGS, ...LOG_EVENT_FIELDS]);
    expect([...names].filter((n) => !listed.has(n))).toEqual([]);
    expect([...listed].filter((n) => !names.has(n))).toEqual([]);
    expect(BUILT_IN_POINT_NAMES.log_event).toEqual(listed);
  });
});

describe('JSON points (queue kind points)', () => {
  const json: JsonPoint = {
    measurement: 'event_count',
    tags: {
      event_type: 'log',
      source: 'qseow-proxy',
      host: 'PLAT-N1',
      subsystem: 'Audit.Proxy.Proxy.Core.RequestListener',
    },
    fields: { counter: { type: 'int', value: 3 } },
    timeNs: '1710233120000000004',
  };

  it('writes the §6.11 event_count example', () => {
    expect(toLine(jsonPointToPoint(json))).toBe(
      'event_count,event_type=log,source=qseow-proxy,host=PLAT-N1,subsystem=Audit.Proxy.Proxy.Core.RequestListener counter=3i 1710233120000000004',
    );
  });

  it('round-trips every field type, whole floats stay floats', () => {
    const point: Point = {
      measurement: 'log_events_queue',
      tags: { queue_type: 'log_events', host: 'svc-1', empty: null },
      fields: {
        queue_size: int(7n),
        queue_utilization_pct: float(7),
        note: str('a "b"'),
        backpressure: { type: 'bool', value: false },
        gone: null,
      },
      timeNs: 1710233120000000005n,
    };
    const asJson = pointToJson(point);
    expect(asJson).toEqual({
      measurement: 'log_events_queue',
      tags: { queue_type: 'log_events', host: 'svc-1' },
      fields: {
        queue_size: { type: 'int', value: 7 },
        queue_utilization_pct: { type: 'float', value: 7 },
        note: { type: 'string', value: 'a "b"' },
        backpressure: { type: 'bool', value: false },
      },
      timeNs: '1710233120000000005',
    });
    const back = jsonPointToPoint(JSON.parse(JSON.stringify(asJson)) as JsonPoint);
    expect(toLine(back)).toBe(
      'log_events_queue,queue_type=log_events,host=svc-1 queue_size=7i,queue_utilization_pct=7,note="a \\"b\\"",backpressure=false 1710233120000000005',
    );
    expect(toLine(back)).toBe(toLine(point));
  });

  it('refuses ints that are not safe integers, non-finite floats and malformed times', () => {
    const withField = (value: JsonPoint['fields'][string]): JsonPoint => ({ ...json, fields: { v: value } });
    expect(() => jsonPointToPoint(withField({ type: 'int', value: 2 ** 53 }))).toThrow(RangeError);
    expect(() => jsonPointToPoint(withField({ type: 'int', value: 1.5 }))).toThrow(RangeError);
    expect(() => jsonPointToPoint(withField({ type: 'float', value: Number.NaN }))).toThrow(RangeError);
    expect(() => jsonPointToPoint({ ...json, timeNs: '1e18' })).toThrow(RangeError);
    const point = jsonPointToPoint(json);
    expect(() => pointToJson({ ...point, fields: { v: int(2n ** 60n) } })).toThrow(RangeError);
    expect(() => pointToJson({ ...point, fields: { v: float(Number.POSITIVE_INFINITY) } })).toThrow(RangeError);
    expect(pointToJson({ ...point, fields: { v: int(-(2n ** 53n) + 1n) } }).fields['v']).toEqual({
      type: 'int',
      value: -(2 ** 53) + 1,
    });
  });

  it('parseTimeNs takes plain decimals only', () => {
    expect(parseTimeNs('-5')).toBe(-5n);
    expect(parseTimeNs('9223372036854775807')).toBe(9223372036854775807n);
    for (const bad of ['', ' 1', '1.0', '0b1', '+1']) expect(() => parseTimeNs(bad)).toThrow(RangeError);
  });
});
