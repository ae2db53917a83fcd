import { describe, expect, it } from 'vitest';
import { type FieldRule, LOG_HEAD_FIELDS, LOG_LAYOUTS } from '../../../../../edge-agent/sources/udp/parse/layouts.js';
import {
  type LogEvent,
  parseLogEvent,
  type QixPerfLogEvent,
  type SchedulerLogEvent,
} from '../../../../../edge-agent/sources/udp/parse/log-event.js';
import type { PlatformLogEvent } from '../../../../../shared/platform/events.js';
import {
  ENGINE,
  PROXY,
  QIX_PERF_INTERNAL,
  QIX_PERF_USER,
  REPOSITORY,
  SCHEDULER,
} from '../../../../shared/platform/fixtures.js';
import {
  LOG_ENGINE,
  LOG_PROXY,
  LOG_PROXY_SURPLUS,
  LOG_QIX_PERF_NON_USER,
  LOG_QIX_PERF_USER,
  LOG_REPOSITORY,
  LOG_REPOSITORY_SURPLUS,
  LOG_SCHEDULER,
  LOG_SCHEDULER_SURPLUS,
  RECEIVED_AT,
  withField,
  withFields,
} from './fixtures.js';

function parsed(datagram: Buffer | string): LogEvent {
  const r = parseLogEvent(datagram, RECEIVED_AT);
  if (!r.ok) throw new Error(`expected ok, got ${r.reason}: ${r.detail}`);
  return r.event;
}

function scheduler(datagram: string): SchedulerLogEvent {
  const e = parsed(datagram);
  if (e.source !== 'qseow-scheduler') throw new Error(e.source);
  return e;
}

function qixPerf(datagram: string): QixPerfLogEvent {
  const e = parsed(datagram);
  if (e.source !== 'qseow-qix-perf') throw new Error(e.source);
  return e;
}

const GRIN = '\u{1F600}';
const at = (iso: string): number => Date.parse(iso);

/**
 * What the parser gives for a §2.6 line: the parsed object the writers' tests use (without the
 * categories and the engine-performance app name, which come later) plus the times.
 */
function asParsed(fixture: PlatformLogEvent, eventTimeIso: string): Record<string, unknown> {
  const out: Record<string, unknown> = { ...fixture, eventTimeMs: at(eventTimeIso), receivedAtMs: RECEIVED_AT };
  delete out['category'];
  if (fixture.source === 'qseow-qix-perf') delete out['app_name'];
  return out;
}

describe('§2.6 example messages', () => {
  it('engine', () => {
    expect(parsed(LOG_ENGINE)).toEqual(asParsed(ENGINE, '2024-03-12T09:15:22.123Z'));
  });

  it('proxy', () => {
    expect(parsed(LOG_PROXY)).toEqual(asParsed(PROXY, '2024-03-12T08:45:01.876Z'));
  });

  it('repository', () => {
    expect(parsed(LOG_REPOSITORY)).toEqual(asParsed(REPOSITORY, '2024-03-12T10:00:12.004Z'));
  });

  it('scheduler (user_full split into directory and user id)', () => {
    expect(parsed(LOG_SCHEDULER)).toEqual(asParsed(SCHEDULER, '2024-03-12T01:15:03.447Z'));
  });

  it('engine performance, user activity', () => {
    expect(parsed(LOG_QIX_PERF_USER)).toEqual(asParsed(QIX_PERF_USER, '2024-03-12T09:15:30.551Z'));
  });

  it('engine performance, non-user activity (proxy session `0`)', () => {
    expect(parsed(LOG_QIX_PERF_NON_USER)).toEqual(asParsed(QIX_PERF_INTERNAL, '2024-03-12T01:15:01.002Z'));
  });

  it('proxy surplus: `;` in the message, negative offset', () => {
    expect(parsed(LOG_PROXY_SURPLUS)).toEqual({
      source: 'qseow-proxy',
      log_row: 313,
      ts_iso: '20240312T094502.001-0500',
      ts_local: '2024-03-12 09:45:02,001',
      level: 'WARN',
      host: 'PLAT-N1',
      subsystem: 'Audit.Proxy.Proxy.Core.RequestListener',
      windows_user: 'LAB\\svc_platform',
      message: 'Login failed; account locked',
      exception_message: '',
      user_directory: 'LAB',
      user_id: 'kalle',
      user_full: 'LAB\\kalle',
      command: 'Login',
      result_code: '401',
      origin: 'AppAccess',
      context: '/hub/',
      eventTimeMs: at('2024-03-12T14:45:02.001Z'),
      receivedAtMs: RECEIVED_AT,
    });
  });

  it('repository surplus: `;` in the exception (candidate (1,0) fails, (0,1) passes)', () => {
    expect(parsed(LOG_REPOSITORY_SURPLUS)).toEqual({
      source: 'qseow-repository',
      log_row: 56,
      ts_iso: '20240312T110013.000+0100',
      ts_local: '2024-03-12 11:00:13,000',
      level: 'ERROR',
      host: 'PLAT-N1',
      subsystem: 'System.Repository.Repository.Core.Database',
      windows_user: 'LAB\\svc_platform',
      message: 'Database connection failed',
      exception_message: 'System.Data.DataException: Host=db1;Port=4432 unreachable',
      user_directory: '',
      user_id: '',
      user_full: '',
      command: '',
      result_code: '',
      origin: 'Not available',
      context: 'Not available',
      eventTimeMs: at('2024-03-12T10:00:13.000Z'),
      receivedAtMs: RECEIVED_AT,
    });
  });

  it('scheduler surplus: `;` in the task name ((1,0,0,0) and (0,1,0,0) fail, (0,0,1,0) passes)', () => {
    expect(parsed(LOG_SCHEDULER_SURPLUS)).toEqual({
      source: 'qseow-scheduler',
      log_row: 88,
      ts_iso: '20240312T021504.100+0100',
      ts_local: '2024-03-12 02:15:04,100',
      level: 'ERROR',
      host: 'PLAT-N1',
      subsystem: 'System.Scheduler.Scheduler.Slave.Tasks.ReloadTask',
      windows_user: 'LAB\\svc_platform',
      message: 'Task failed',
      exception_message: '',
      user_directory: 'LAB',
      user_id: 'goran',
      user_full: 'LAB\\goran',
      task_name: 'Reload; nightly',
      app_name: 'Sales dashboard',
      task_id: 'dec2a02a-1680-44ef-8dc2-e2bfb180af87',
      app_id: 'e7af59a0-c243-480d-9571-08727551a66f',
      execution_id: '4831c6a5-34f6-45bb-9d40-73a6e6992670',
      eventTimeMs: at('2024-03-12T01:15:04.100Z'),
      receivedAtMs: RECEIVED_AT,
    });
  });
});

describe('field layouts (§2.2)', () => {
  const describeRule = (r: FieldRule): string =>
    r.kind === 'text' ? `s(${r.cap})` : r.kind === 'int' ? (r.min === null ? 'int' : `int>=${r.min}`) : r.kind;
  const table = (fields: Record<string, { idx: number; rule: FieldRule }>): Record<string, string> =>
    Object.fromEntries(Object.entries(fields).map(([k, d]) => [k, `${d.idx} ${describeRule(d.rule)}`]));

  it('head', () => {
    expect(table(LOG_HEAD_FIELDS)).toEqual({
      log_row: '1 int>=1',
      ts_iso: '2 ts',
      ts_local: '3 ts',
      level: '4 s(20)',
      host: '5 s(100)',
      subsystem: '6 s(200)',
      windows_user: '7 s(100)',
    });
  });

  it('per source', () => {
    expect(table(LOG_LAYOUTS['qseow-engine'].fields)).toEqual({
      message: '8 s(1000)',
      proxy_session_id: '9 uuid',
      user_directory: '10 s(100)',
      user_id: '11 s(100)',
      engine_ts: '12 s(50)',
      process_id: '13 uuid',
      engine_exe_version: '14 s(50)',
      server_started: '15 s(50)',
      entry_type: '16 s(50)',
      session_id: '17 uuid',
      app_id: '18 uuid',
    });
    const proxy = {
      message: '8 s(1000)',
      exception_message: '9 s(1000)',
      user_directory: '10 s(100)',
      user_id: '11 s(100)',
      command: '12 s(200)',
      result_code: '13 s(50)',
      origin: '14 s(200)',
      context: '15 s(200)',
    };
    expect(table(LOG_LAYOUTS['qseow-proxy'].fields)).toEqual(proxy);
    expect(table(LOG_LAYOUTS['qseow-repository'].fields)).toEqual(proxy);
    expect(table(LOG_LAYOUTS['qseow-scheduler'].fields)).toEqual({
      message: '8 s(1000)',
      exception_message: '9 s(1000)',
      user_directory: '10 s(100)',
      user_id: '11 s(100)',
      task_name: '13 s(200)',
      app_name: '14 s(200)',
      task_id: '15 uuid',
      app_id: '16 uuid',
      execution_id: '17 uuid',
    });
    expect(table(LOG_LAYOUTS['qseow-qix-perf'].fields)).toEqual({
      user_directory: '9 s(100)',
      user_id: '10 s(100)',
      engine_ts: '11 s(50)',
      session_id: '12 uuid',
      app_id: '13 uuid',
      request_id: '14 int>=0',
      method: '15 s(100)',
      process_time: '16 float',
      work_time: '17 float',
      lock_time: '18 float',
      validate_time: '19 float',
      traverse_time: '20 float',
      handle: '21 int',
      object_id: '22 s(100)',
      net_ram: '23 int>=0',
      peak_ram: '24 int>=0',
      object_type: '25 s(100)',
    });
  });
});

describe('dispatch (§2.3 step 1)', () => {
  it.each([
    ['/QSEOW-ENGINE/', LOG_ENGINE, 'qseow-engine'],
    ['/Qseow-Proxy/', LOG_PROXY, 'qseow-proxy'],
    ['/QSEOW-repository/', LOG_REPOSITORY, 'qseow-repository'],
    ['/qseow-SCHEDULER/', LOG_SCHEDULER, 'qseow-scheduler'],
    ['/QSEOW-QIX-PERF/', LOG_QIX_PERF_USER, 'qseow-qix-perf'],
  ])('prefix %s is matched case-insensitively', (prefix, datagram, source) => {
    expect(parsed(withField(datagram, 0, prefix)).source).toBe(source);
  });

  it.each([
    ['user-event prefix', withField(LOG_PROXY, 0, '/qseow-proxy-session/')],
    ['no slashes', withField(LOG_PROXY, 0, 'qseow-proxy')],
    ['space', withField(LOG_PROXY, 0, '/qseow-proxy/ ')],
    ['leading BOM', `\uFEFF${LOG_PROXY}`],
    ['empty', ''],
    ['constructor', 'constructor;1;2;3'],
    ['__proto__', '__proto__;1'],
    ['huge', '/'.repeat(70_000)],
  ])('unknown prefix: %s', (_name, datagram) => {
    const r = parseLogEvent(datagram, RECEIVED_AT);
    expect(r.ok === false && r.reason).toBe('unknown_prefix');
  });

  it.each([
    ['qseow-engine', 19],
    ['qseow-proxy', 16],
    ['qseow-repository', 16],
    ['qseow-scheduler', 18],
    ['qseow-qix-perf', 26],
  ] as const)('%s with fewer than %d fields is malformed', (source, n) => {
    const datagram = [`/${source}/`, ...Array.from({ length: n - 2 }, () => 'x')].join(';');
    const r = parseLogEvent(datagram, RECEIVED_AT);
    expect(r).toEqual({
      ok: false,
      reason: 'malformed',
      detail: `${source}: expected ${n} fields, got ${n - 1}`,
      preview: datagram,
    });
    expect(parseLogEvent(`${datagram};x`, RECEIVED_AT).ok).toBe(true);
  });

  it('engine performance with surplus `;` is malformed', () => {
    const r = parseLogEvent(withField(LOG_QIX_PERF_USER, 15, 'GenericObject;GetLayout'), RECEIVED_AT);
    expect(r).toMatchObject({
      ok: false,
      reason: 'malformed',
      detail: "qseow-qix-perf: expected exactly 26 fields (no free-text field takes surplus ';'), got 27",
    });
    expect(parseLogEvent(`${LOG_QIX_PERF_NON_USER};`, RECEIVED_AT).ok).toBe(false);
  });

  it('malformed preview is the first 512 sanitised characters', () => {
    const r = parseLogEvent(`/qseow-engine/;\n${'x'.repeat(1000)}`, RECEIVED_AT);
    expect(r).toEqual({
      ok: false,
      reason: 'malformed',
      detail: 'qseow-engine: expected 19 fields, got 2',
      preview: `/qseow-engine/;${'x'.repeat(497)}`,
    });
  });
});

describe('surplus `;` per source (§0.4)', () => {
  it('engine: all surplus in the message', () => {
    const e = parsed(withField(LOG_ENGINE, 8, 'a;b;;c'));
    expect(e).toMatchObject({
      message: 'a;b;;c',
      proxy_session_id: '4d0b7e2c-5a1e-4b8e-9f43-2c6f0a7d1b11',
      app_id: 'e7af59a0-c243-480d-9571-08727551a66f',
    });
  });

  it('proxy: `;` in message and exception at once', () => {
    const d = withFields(LOG_PROXY, { 8: 'a;b', 9: 'System.IO.IOException: x;y' });
    expect(parsed(d)).toMatchObject({
      message: 'a;b',
      exception_message: 'System.IO.IOException: x;y',
      user_id: 'kalle',
      context: '/hub/',
    });
  });

  it('proxy: exception text that is not an exception type → all surplus in the message (first candidate)', () => {
    const d = withField(LOG_PROXY, 9, 'oops; really');
    expect(parsed(d)).toMatchObject({
      message: "Access was denied for User: 'LAB\\kalle'. No license available.;oops",
      exception_message: ' really',
    });
  });

  it('repository: `;` in the exception only', () => {
    const d = withField(LOG_REPOSITORY, 9, 'System.Exception: a;b;c');
    expect(parsed(d)).toMatchObject({
      message: LOG_REPOSITORY.split(';')[8],
      exception_message: 'System.Exception: a;b;c',
      origin: 'Not available',
    });
  });

  // The checks look at fields 9–12 only, and fields 15–17 never move, so for every candidate giving
  // the app name surplus, the one giving it to the task name instead passes equally and comes first:
  // a `;` in the app name always lands in the task name (spec limitation, kept as specified).
  it('scheduler: `;` in the app name goes to the task name (0,0,1,0) before (0,0,0,1)', () => {
    const e = scheduler(withField(LOG_SCHEDULER, 14, 'Sales; EMEA'));
    expect(e).toMatchObject({
      task_name: 'Reload of Sales dashboard;Sales',
      app_name: ' EMEA',
      user_full: 'LAB\\goran',
      task_id: 'dec2a02a-1680-44ef-8dc2-e2bfb180af87',
    });
  });

  it('scheduler: `;` in task name and app name all go to the task name', () => {
    const e = scheduler(withFields(LOG_SCHEDULER, { 13: 'Reload; nightly', 14: 'Sales; EMEA' }));
    expect(e).toMatchObject({
      message: LOG_SCHEDULER.split(';')[8],
      task_name: 'Reload; nightly;Sales',
      app_name: ' EMEA',
      user_full: 'LAB\\goran',
    });
  });

  it('scheduler: `;` in message, exception and task name', () => {
    const d = withFields(LOG_SCHEDULER, { 8: 'm;1', 9: 'System.Exception: e;1', 13: 't;1' });
    const e = scheduler(d);
    expect(e).toMatchObject({
      message: 'm;1',
      exception_message: 'System.Exception: e;1',
      task_name: 't;1',
      app_name: 'Sales dashboard',
      user_full: 'LAB\\goran',
    });
  });

  it('scheduler: with dir and id given, the triple check uses them', () => {
    const d = withFields(LOG_SCHEDULER, { 10: 'LAB', 11: 'goran', 13: 'a;b' });
    expect(scheduler(d)).toMatchObject({
      message: LOG_SCHEDULER.split(';')[8],
      task_name: 'a;b',
      user_directory: 'LAB',
      user_id: 'goran',
      user_full: 'LAB\\goran',
    });
  });

  it('scheduler: no candidate passes → the first (all surplus in the message)', () => {
    const d = withFields(LOG_SCHEDULER, { 12: 'nobody', 13: 'a;b' });
    const e = scheduler(d);
    expect(e.message).toBe(`${LOG_SCHEDULER.split(';')[8]};`);
    expect(e.exception_message).toBe('');
    expect(e.task_name).toBe('b');
  });
});

describe('event time (§0.3)', () => {
  it('field 2 when it is a valid ISO form', () => {
    expect(parsed(LOG_ENGINE).eventTimeMs).toBe(at('2024-03-12T09:15:22.123Z'));
    expect(parsed(withField(LOG_ENGINE, 2, '2024-03-12T10:15:22.123-05:30')).eventTimeMs).toBe(
      at('2024-03-12T15:45:22.123Z'),
    );
    expect(parsed(withField(LOG_ENGINE, 2, '20240312T101522.123Z')).eventTimeMs).toBe(at('2024-03-12T10:15:22.123Z'));
  });

  it('else field 3 when it is a valid ISO form', () => {
    const d = withField(withField(LOG_ENGINE, 2, 'garbage'), 3, '2024-03-12T10:15:22.999+0100');
    const e = parsed(d);
    expect(e.eventTimeMs).toBe(at('2024-03-12T09:15:22.999Z'));
    expect(e.ts_iso).toBe('');
    expect(e.ts_local).toBe('2024-03-12T10:15:22.999+0100');
  });

  it('a local form in field 2 is kept but not used; field 3 ISO wins', () => {
    const d = withField(withField(LOG_ENGINE, 2, '2024-03-12 10:15:22,123'), 3, '20240312T091522.123Z');
    const e = parsed(d);
    expect(e.ts_iso).toBe('2024-03-12 10:15:22,123');
    expect(e.eventTimeMs).toBe(at('2024-03-12T09:15:22.123Z'));
  });

  it('else the receive time (local forms never become an instant)', () => {
    expect(parsed(withField(LOG_ENGINE, 2, '')).eventTimeMs).toBe(RECEIVED_AT);
    expect(parsed(withField(LOG_ENGINE, 2, '2024-02-30T10:00:00.000Z')).eventTimeMs).toBe(RECEIVED_AT);
    expect(parsed(withField(LOG_ENGINE, 2, '2024-03-12 10:15:22,123')).eventTimeMs).toBe(RECEIVED_AT);
  });

  it('control characters around a timestamp are removed before validation', () => {
    const e = parsed(withField(LOG_PROXY, 2, '\r20240312T094501.876+0100\n'));
    expect(e.ts_iso).toBe('20240312T094501.876+0100');
    expect(e.eventTimeMs).toBe(at('2024-03-12T08:45:01.876Z'));
  });
});

describe('validated fields', () => {
  it.each([
    ['1', 1],
    ['0', null],
    ['-3', null],
    ['x', null],
    ['', null],
    ['9007199254740993', null],
  ])('log_row %j → %j', (raw, value) => {
    expect(parsed(withField(LOG_PROXY, 1, raw)).log_row).toBe(value);
  });

  it('uuids are lower-cased, invalid ones become ""', () => {
    const e = parsed(withField(withField(LOG_ENGINE, 9, '4D0B7E2C-5A1E-4B8E-9F43-2C6F0A7D1B11'), 13, 'not-a-uuid'));
    expect(e).toMatchObject({ proxy_session_id: '4d0b7e2c-5a1e-4b8e-9f43-2c6f0a7d1b11', process_id: '' });
  });

  it('engine performance numbers are null when invalid', () => {
    const fields = LOG_QIX_PERF_USER.split(';');
    const set: Record<number, string> = {
      14: '-1',
      16: '1e3',
      17: 'abc',
      18: '',
      19: '-0.5',
      20: '.5',
      21: '-7',
      23: '-1',
      24: '1.5',
    };
    for (const [i, v] of Object.entries(set)) fields[Number(i)] = v;
    expect(qixPerf(fields.join(';'))).toMatchObject({
      request_id: null,
      process_time: null,
      work_time: null,
      lock_time: null,
      validate_time: -0.5,
      traverse_time: null,
      handle: -7,
      net_ram: null,
      peak_ram: null,
    });
  });

  it.each([
    ['0', '', 'non-user'],
    ['\t0\n', '', 'non-user'],
    ['00', '', 'user'],
    ['', '', 'user'],
    ['4D0B7E2C-5A1E-4B8E-9F43-2C6F0A7D1B11', '4d0b7e2c-5a1e-4b8e-9f43-2c6f0a7d1b11', 'user'],
    ['nope', '', 'user'],
  ])('engine performance field 8 %j → proxy_session_id %j, %s', (raw, id, activity) => {
    expect(qixPerf(withField(LOG_QIX_PERF_USER, 8, raw))).toMatchObject({
      proxy_session_id: id,
      event_activity_source: activity,
    });
  });
});

describe('user_full (§2.2)', () => {
  it('engine / proxy / engine performance: dir\\id only when both are non-empty', () => {
    expect(parsed(withField(LOG_ENGINE, 10, '')).user_full).toBe('');
    expect(parsed(withField(LOG_PROXY, 11, '')).user_full).toBe('');
    expect(parsed(withField(LOG_QIX_PERF_USER, 9, '')).user_full).toBe('');
    expect(parsed(withField(withField(LOG_PROXY, 10, 'DOM'), 11, 'x')).user_full).toBe('DOM\\x');
  });

  it.each([
    ['', '', 'LAB\\goran', 'LAB', 'goran', 'LAB\\goran'],
    ['', '', 'lab\\Goran', 'lab', 'Goran', 'lab\\Goran'],
    ['LAB', 'goran', 'OTHER\\user', 'LAB', 'goran', 'LAB\\goran'],
    ['LAB', 'goran', '', 'LAB', 'goran', 'LAB\\goran'],
    ['LAB', '', '', 'LAB', '', ''],
    ['', 'goran', '', '', 'goran', ''],
    ['', '', 'goran', '', '', ''],
    ['', '', 'a\\b\\c', '', '', ''],
    ['', '', '\\goran', '', 'goran', ''],
    ['', '', 'LAB\\', 'LAB', '', ''],
    ['', '', 'L\nAB\\go\tran', 'LAB', 'goran', 'LAB\\goran'],
  ])('scheduler dir %j id %j user %j → %j %j %j', (dir, id, user, outDir, outId, full) => {
    const d = withField(withField(withField(LOG_SCHEDULER, 10, dir), 11, id), 12, user);
    expect(scheduler(d)).toMatchObject({ user_directory: outDir, user_id: outId, user_full: full });
  });

  it('scheduler split halves are capped at 100, user_full at 200', () => {
    const d = withField(LOG_SCHEDULER, 12, `${'d'.repeat(150)}\\${'u'.repeat(150)}`);
    expect(scheduler(d)).toMatchObject({
      user_directory: 'd'.repeat(100),
      user_id: 'u'.repeat(100),
      user_full: `${'d'.repeat(100)}\\${'u'.repeat(99)}`,
    });
  });
});

describe('sanitising', () => {
  it('control characters are stripped and caps applied (surrogate pair at the cut)', () => {
    const long = (n: number): string => 'a'.repeat(n - 1) + GRIN + GRIN;
    const fields = LOG_PROXY.split(';');
    const caps: Record<number, number> = {
      4: 20,
      5: 100,
      6: 200,
      7: 100,
      8: 1000,
      9: 1000,
      10: 100,
      11: 100,
      12: 200,
      13: 50,
      14: 200,
      15: 200,
    };
    for (const [i, cap] of Object.entries(caps)) fields[Number(i)] = long(cap);
    fields[9] = `System.Exception${long(1000 - 16)}`;
    const e = parsed(fields.join(';'));
    const cut = (cap: number): string => 'a'.repeat(cap - 1) + GRIN;
    expect(e).toMatchObject({
      level: cut(20),
      host: cut(100),
      subsystem: cut(200),
      windows_user: cut(100),
      message: cut(1000),
      exception_message: `System.Exception${cut(1000 - 16)}`,
      user_directory: cut(100),
      user_id: cut(100),
      user_full: `${cut(100)}\\${cut(100)}`,
      command: cut(200),
      result_code: cut(50),
      origin: cut(200),
      context: cut(200),
    });
  });

  it('every text field of every source loses its control characters', () => {
    const e = parsed(
      withField(withField(withField(LOG_ENGINE, 4, 'W\tARN'), 8, 'line1\r\nline2\u0000'), 16, '\u007fWarning'),
    );
    expect(e).toMatchObject({ level: 'WARN', message: 'line1line2', entry_type: 'Warning' });
    const q = qixPerf(withField(withField(LOG_QIX_PERF_USER, 16, '412.5\n'), 25, 'bar\u0001chart'));
    expect(q).toMatchObject({ process_time: 412.5, object_type: 'barchart' });
  });

  it('invalid UTF-8 becomes U+FFFD', () => {
    const bytes = Buffer.concat([Buffer.from(LOG_PROXY.replace('No license available.', 'No licence '), 'utf8')]);
    const i = bytes.indexOf('No licence ') + 'No licence '.length;
    const broken = Buffer.concat([bytes.subarray(0, i), Buffer.from([0xf0, 0x9f, 0x98]), bytes.subarray(i)]);
    expect(parsed(broken)).toMatchObject({
      message: "Access was denied for User: 'LAB\\kalle'. No licence \uFFFD",
      context: '/hub/',
    });
  });
});

describe('key order of a parsed log event', () => {
  // The queued JSON text keeps the parser's key order (the handler queues this object as it is),
  // so every event of a source is written alike: source, the head, the layout, the derived keys.
  it.each([
    [LOG_ENGINE, []],
    [LOG_PROXY, []],
    [LOG_REPOSITORY_SURPLUS, []],
    [LOG_SCHEDULER_SURPLUS, []],
    [LOG_QIX_PERF_USER, ['proxy_session_id', 'event_activity_source']],
  ] as const)('%s', (datagram, derived) => {
    const e = parsed(datagram);
    const layout = Object.keys(LOG_LAYOUTS[e.source].fields);
    expect(Object.keys(e)).toEqual([
      'source',
      ...Object.keys(LOG_HEAD_FIELDS),
      ...derived,
      ...layout,
      'user_full',
      'eventTimeMs',
      'receivedAtMs',
    ]);
  });
});
