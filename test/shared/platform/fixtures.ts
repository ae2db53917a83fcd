/**
 * Parsed platform events for the writer tests: the example messages of platform-formats.md §1.6 and
 * §2.6 as the listener hands them over (§1.2–1.5, §2.2), and a line-protocol splitter that compares
 * lines as the spec does (tag order not significant).
 */
import type {
  EngineLog,
  PlatformLogEvent,
  ProxyLog,
  QixPerfLog,
  RepositoryLog,
  SchedulerLog,
  UserActivity,
} from '../../../shared/platform/events.js';
import type { LogQueuedEvent, UserQueuedEvent } from '../../../shared/queue/events.js';

export const APP_ID = 'e7af59a0-c243-480d-9571-08727551a66f';

/** §1.6 line 1. */
export const START_SESSION: UserActivity = {
  messageType: 'qseow-proxy-session',
  host: 'PLAT-N1',
  command: 'Start session',
  user_directory: 'LAB',
  user_id: 'goran',
  user_full: 'LAB\\goran',
  origin: 'AppAccess',
  context: '/hub/',
  message: "Start session for user 'LAB\\goran'",
};

/** §1.6 line 3, app not in the app list (§1.4). */
export const OPEN_CONNECTION: UserActivity = {
  messageType: 'qseow-proxy-connection',
  host: 'PLAT-N1',
  command: 'Open connection',
  user_directory: 'LAB',
  user_id: 'goran',
  user_full: 'LAB\\goran',
  origin: 'AppAccess',
  context: `/app/${APP_ID}?reloaduri=https%3a%2f%2fplat.lab.local%2fapp%2f${APP_ID}`,
  message:
    "Websocket connection Opened for session '4d0b7e2c-5a1e-4b8e-9f43-2c6f0a7d1b11'. UserAgent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36'",
  appId: APP_ID,
  appName: '<unknown app name>',
  uaBrowserName: 'Chrome',
  uaBrowserMajorVersion: '120',
  uaOsName: 'Windows',
  uaOsVersion: 'NT 10.0',
};

/** §1.6 line 4 (app name known). */
export const CLOSE_CONNECTION: UserActivity = {
  messageType: 'qseow-proxy-connection',
  host: 'PLAT-N2',
  command: 'Close connection',
  user_directory: 'LAB',
  user_id: 'anna',
  user_full: 'LAB\\anna',
  origin: 'AppAccess',
  context: '/app/0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d',
  message:
    "Websocket connection Closed for session '9f9e8d7c-6b5a-4c3d-9e2f-1a0b9c8d7e6f'. UserAgent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.2 Safari/605.1.15'",
  appId: '0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d',
  appName: 'Sales dashboard',
  uaBrowserName: 'Safari',
  uaBrowserMajorVersion: '17',
  uaOsName: 'macOS',
  uaOsVersion: '10.15.7',
};

/** §2.6 engine line. */
export const ENGINE: EngineLog = {
  source: 'qseow-engine',
  log_row: 1542,
  ts_iso: '20240312T101522.123+0100',
  ts_local: '2024-03-12 10:15:22,123',
  level: 'WARN',
  host: 'PLAT-N1',
  subsystem: 'System.Engine.Engine',
  windows_user: 'LAB\\svc_platform',
  message: `Document was not found: ${APP_ID}`,
  proxy_session_id: '4d0b7e2c-5a1e-4b8e-9f43-2c6f0a7d1b11',
  user_directory: 'LAB',
  user_id: 'goran',
  user_full: 'LAB\\goran',
  engine_ts: '2024-03-12T10:15:22.123+01:00',
  process_id: '5c6d7e8f-9a0b-4c1d-8e2f-3a4b5c6d7e8f',
  engine_exe_version: '12.1306.0',
  server_started: '2024-03-12T08:15:12.000+01:00',
  entry_type: 'Warning',
  session_id: '9a8b7c6d-1e2f-4a3b-8c4d-5e6f7a8b9c0d',
  app_id: APP_ID,
};

/** §2.6 proxy line, categorised as in the §6.11 example. */
export const PROXY: ProxyLog = {
  source: 'qseow-proxy',
  log_row: 312,
  ts_iso: '20240312T094501.876+0100',
  ts_local: '2024-03-12 09:45:01,876',
  level: 'WARN',
  host: 'PLAT-N1',
  subsystem: 'Audit.Proxy.Proxy.Core.RequestListener',
  windows_user: 'LAB\\svc_platform',
  message: "Access was denied for User: 'LAB\\kalle'. No license available.",
  exception_message: '',
  user_directory: 'LAB',
  user_id: 'kalle',
  user_full: 'LAB\\kalle',
  command: 'Login',
  result_code: '403',
  origin: 'AppAccess',
  context: '/hub/',
  category: [{ name: 'qs_log_category', value: 'access-denied' }],
};

/** §2.6 repository line (no user, no result code). */
export const REPOSITORY: RepositoryLog = {
  source: 'qseow-repository',
  log_row: 55,
  ts_iso: '20240312T110012.004+0100',
  ts_local: '2024-03-12 11:00:12,004',
  level: 'ERROR',
  host: 'PLAT-N1',
  subsystem: 'System.Repository.Repository.Core.Synchronization',
  windows_user: 'LAB\\svc_platform',
  message: 'Failed to request service alive response from https://plat-n2.lab.local:4242/.',
  exception_message: 'System.Net.WebException: Unable to connect to the remote server',
  user_directory: '',
  user_id: '',
  user_full: '',
  command: '',
  result_code: '',
  origin: 'Not available',
  context: 'Not available',
};

/** §2.6 scheduler line (user from field 12). */
export const SCHEDULER: SchedulerLog = {
  source: 'qseow-scheduler',
  log_row: 87,
  ts_iso: '20240312T021503.447+0100',
  ts_local: '2024-03-12 02:15:03,447',
  level: 'ERROR',
  host: 'PLAT-N1',
  subsystem: 'System.Scheduler.Scheduler.Slave.Tasks.ReloadTask',
  windows_user: 'LAB\\svc_platform',
  message: 'Message from ReloadProvider: Reload failed in Engine. Check engine or script logs.',
  exception_message: '',
  user_directory: 'LAB',
  user_id: 'goran',
  user_full: 'LAB\\goran',
  task_name: 'Reload of Sales dashboard',
  app_name: 'Sales dashboard',
  task_id: 'dec2a02a-1680-44ef-8dc2-e2bfb180af87',
  app_id: APP_ID,
  execution_id: '4831c6a5-34f6-45bb-9d40-73a6e6992670',
};

/** §2.6 first engine-performance line (a user's request). */
export const QIX_PERF_USER: QixPerfLog = {
  source: 'qseow-qix-perf',
  log_row: 20411,
  ts_iso: '20240312T101530.551+0100',
  ts_local: '2024-03-12 10:15:30,551',
  level: 'INFO',
  host: 'PLAT-N1',
  subsystem: 'QixPerformance.Engine.Engine',
  windows_user: 'LAB\\svc_platform',
  proxy_session_id: '4d0b7e2c-5a1e-4b8e-9f43-2c6f0a7d1b11',
  event_activity_source: 'user',
  user_directory: 'LAB',
  user_id: 'goran',
  user_full: 'LAB\\goran',
  engine_ts: '2024-03-12T10:15:30.551+01:00',
  session_id: '9a8b7c6d-1e2f-4a3b-8c4d-5e6f7a8b9c0d',
  app_id: APP_ID,
  app_name: 'Sales dashboard',
  request_id: 117,
  method: 'GenericObject::GetLayout',
  process_time: 412.5,
  work_time: 398.2,
  lock_time: 0.4,
  validate_time: 1.1,
  traverse_time: 210.7,
  handle: 7,
  object_id: 'hXbRtP',
  net_ram: 5242880,
  peak_ram: 15728640,
  object_type: 'barchart',
};

/** §2.6 second engine-performance line (non-user: proxy session and session id `0`). */
export const QIX_PERF_INTERNAL: QixPerfLog = {
  source: 'qseow-qix-perf',
  log_row: 20412,
  ts_iso: '20240312T021501.002+0100',
  ts_local: '2024-03-12 02:15:01,002',
  level: 'INFO',
  host: 'PLAT-N1',
  subsystem: 'QixPerformance.Engine.Engine',
  windows_user: 'LAB\\svc_platform',
  proxy_session_id: '',
  event_activity_source: 'non-user',
  user_directory: 'INTERNAL',
  user_id: 'sa_scheduler',
  user_full: 'INTERNAL\\sa_scheduler',
  engine_ts: '2024-03-12T02:15:01.002+01:00',
  session_id: '',
  app_id: APP_ID,
  app_name: '',
  request_id: 3,
  method: 'Global::OpenApp',
  process_time: 2380.3,
  work_time: 2301.9,
  lock_time: 12,
  validate_time: 0,
  traverse_time: 0,
  handle: -1,
  object_id: '<Unknown>',
  net_ram: 104857600,
  peak_ram: 209715200,
  object_type: '<Unknown>',
};

let seq = 0;

export function userQueued(event: UserActivity, timeNs = '1710234000000000002', id = `user-${++seq}`): UserQueuedEvent {
  return { kind: 'user-event', id, receivedAt: '2024-03-12T09:00:00.000Z', timeNs, event };
}

export function logQueued(
  event: PlatformLogEvent,
  timeNs = '1710233101876000003',
  id = `log-${++seq}`,
): LogQueuedEvent {
  return { kind: 'log-event', id, receivedAt: '2024-03-12T08:45:01.900Z', timeNs, event };
}

/** Splits `text` on `sep` where it is neither escaped by `\` nor (with `quotes`) inside "…". */
function splitUnescaped(text: string, sep: string, quotes: boolean): string[] {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] ?? '';
    if (ch === '\\') {
      current += ch + (text[i + 1] ?? '');
      i++;
    } else if (quotes && ch === '"') {
      quoted = !quoted;
      current += ch;
    } else if (ch === sep && !quoted) {
      parts.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  parts.push(current);
  return parts;
}

export interface ParsedLine {
  measurement: string;
  /** `key=value` as written (escapes kept), sorted. */
  tags: string[];
  /** Field key → value as written (escapes and quotes kept). */
  fields: Record<string, string>;
  time: string;
}

/** A line of line protocol in parts, for order-insensitive comparison of tags (§6.11). */
export function parseLine(line: string): ParsedLine {
  const [head = '', fieldText = '', time = '', ...rest] = splitUnescaped(line, ' ', true);
  if (rest.length > 0) throw new Error(`more than three space-separated parts: ${line}`);
  const [measurement = '', ...tags] = splitUnescaped(head, ',', false);
  const fields: Record<string, string> = {};
  for (const f of splitUnescaped(fieldText, ',', true)) {
    const eq = f.indexOf('=');
    fields[f.slice(0, eq)] = f.slice(eq + 1);
  }
  return { measurement, tags: [...tags].sort(), fields, time };
}

/** The text of a written string field value (`"…"` with `\"` and `\\`). */
export function unquote(written: string): string {
  if (!written.startsWith('"') || !written.endsWith('"')) throw new Error(`not a string field: ${written}`);
  return written.slice(1, -1).replace(/\\(["\\])/g, '$1');
}
