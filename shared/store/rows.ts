/**
 * Queued events as the store's rows (the tables of ddl.ts): pure functions, so the writer's
 * transaction only binds values. Each kind maps to one row of its event table, plus what its
 * rollups and the `servers` table need from it.
 */
import { AUDIT_COLUMNS, auditTimeMs } from '../audit/datamodel.js';
import type { PlatformLogEvent, QixPerfLog } from '../platform/events.js';
import type { HealthSample, SessionSample } from '../platform/polled.js';
import type { AuditQueuedEvent, HealthQueuedEvent, SessionsQueuedEvent, UserQueuedEvent } from '../queue/events.js';
import { parseTimeNs } from '../queue/events.js';
import { PERF_HISTOGRAM_BOUNDS_MS, type StoreLogSource } from './ddl.js';

/** A value node:sqlite binds. */
export type Cell = string | number | bigint | null;

/** What the writer upserts into `servers` for an event: found by name, the rest kept when known. */
export interface ServerSighting {
  name: string;
  host: string;
  description: string;
  /** JSON object of the §4 server tags, or null when the event carries none (only health samples do). */
  tags: string | null;
  ms: number;
}

/** A configured server (`serversToMonitor.servers[]`) as the UDP events' host finds it. */
export interface KnownServer {
  serverName: string;
  host: string;
  serverDescription: string;
}

/**
 * Maps a UDP event's `host` to the configured server of that host (compared without port and case),
 * else to a server named after the host.
 */
export class ServerNames {
  private readonly byHost = new Map<string, KnownServer>();

  constructor(servers: readonly KnownServer[]) {
    for (const server of servers) {
      const key = hostKey(server.host);
      if (!this.byHost.has(key)) this.byHost.set(key, server);
    }
  }

  /** The sighting of the server that sent an event from `host` at `ms`. */
  ofHost(host: string, ms: number): ServerSighting {
    const known = this.byHost.get(hostKey(host));
    const name = known?.serverName ?? (host === '' ? '(unknown host)' : host);
    return { name, host, description: known?.serverDescription ?? '', tags: null, ms };
  }
}

/** `node1.example.com:4747` and `NODE1.example.com` are the same host. */
function hostKey(host: string): string {
  const withoutPort = /^\[?([^\]]*)\]?:\d+$/.exec(host)?.[1] ?? host;
  return withoutPort.toLowerCase();
}

/** The §0.3 point time of an edge event and its millisecond. */
export interface EventTime {
  timeNs: bigint;
  ms: number;
}

/** The point time a queued event carries. Throws RangeError when it is no decimal number. */
export function eventTime(timeNs: string): EventTime {
  const ns = parseTimeNs(timeNs);
  return { timeNs: ns, ms: Number(ns / 1_000_000n) };
}

/** The `health` row of a sample, in the table's column order after `time_ns` and `server_id`. */
export function healthCells(sample: HealthSample): Cell[] {
  const b = sample.body;
  const docs = sample.docNames ? JSON.stringify(sample.docNames) : null;
  return [
    b.version,
    b.started,
    sample.uptime,
    b.mem.committed,
    b.mem.allocated,
    b.mem.free,
    b.apps.active_docs.length,
    b.apps.loaded_docs.length,
    b.apps.in_memory_docs.length,
    b.apps.calls,
    b.apps.selections,
    b.cpu.total,
    b.session.active,
    b.session.total,
    b.users.active,
    b.users.total,
    b.cache.hits,
    b.cache.lookups,
    b.cache.added,
    b.cache.replaced,
    b.cache.bytes_added,
    b.saturated ? 1 : 0,
    docs,
  ];
}

/**
 * The server a polled sample is of. A health sample's tags are the §4 server tags (host and
 * description among them), kept with the server; a session sample's are session tags, not kept.
 */
export function polledServer(q: HealthQueuedEvent | SessionsQueuedEvent, ms: number): ServerSighting {
  const tags = q.sample.tags;
  return {
    name: q.sample.serverName,
    host: tags.host ?? '',
    description: tags.server_description ?? '',
    tags: q.kind === 'health' ? JSON.stringify(tags) : null,
    ms,
  };
}

/** The distinct users a session sample lists (`DIR\id`, first-seen order). */
export function sessionUsers(sample: SessionSample): string[] {
  return [...new Set(sample.userIdList.split(',').filter((user) => user !== ''))];
}

/** The `session_samples` row after `time_ns` and `server_id`. */
export function sessionCells(sample: SessionSample): Cell[] {
  return [sample.virtualProxy, sample.sessions.length, sessionUsers(sample).length, sample.userIdList];
}

/** The `user_events` row after `time_ns` and `server_id`. */
export function userEventCells(q: UserQueuedEvent): Cell[] {
  const e = q.event;
  return [
    e.messageType,
    e.command,
    e.user_full,
    e.user_directory,
    e.user_id,
    e.origin,
    e.context,
    e.message,
    e.appId ?? null,
    e.appName ?? null,
    joined(e.uaBrowserName, e.uaBrowserMajorVersion),
    joined(e.uaOsName, e.uaOsVersion),
  ];
}

function joined(name: string | undefined, version: string | undefined): string | null {
  if (name === undefined) return null;
  return version === undefined ? name : `${name} ${version}`;
}

const SOURCE_NAMES: Record<Exclude<PlatformLogEvent['source'], 'qseow-qix-perf'>, StoreLogSource> = {
  'qseow-engine': 'engine',
  'qseow-proxy': 'proxy',
  'qseow-repository': 'repository',
  'qseow-scheduler': 'scheduler',
};

/** The members of a log event that have columns of their own; the others go to `rest`. */
const LOG_COLUMN_MEMBERS = new Set([
  'source',
  'level',
  'subsystem',
  'message',
  'exception_message',
  'category',
  'app_id',
  'user_full',
  'task_name',
  'windows_user',
]);

/** A log event that is not engine performance, as its `log_events` row and what its hourly counts need. */
export interface LogRow {
  source: StoreLogSource;
  level: string;
  /**
   * The `log_counts_hourly` rows it adds 1 to: `''` (so the `''` rows count every event) and the
   * `name=value` of each of its categories (ddl.ts; agreed in issue 30's ddl-changes).
   */
  categories: string[];
  /** The row after `time_ns` and `server_id`. */
  cells: Cell[];
}

/** The `log_events` row of a log event (not `qseow-qix-perf`). */
export function logRow(e: Exclude<PlatformLogEvent, QixPerfLog>): LogRow {
  const source = SOURCE_NAMES[e.source];
  const level = e.level.toUpperCase();
  const category = e.category ?? [];
  const rest: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(e)) if (!LOG_COLUMN_MEMBERS.has(key)) rest[key] = value;
  return {
    source,
    level,
    categories: ['', ...category.map((c) => `${c.name}=${c.value}`)],
    cells: [
      source,
      level,
      e.subsystem,
      e.message,
      'exception_message' in e ? e.exception_message : '',
      JSON.stringify(category),
      'app_id' in e ? e.app_id : '',
      e.user_full,
      'task_name' in e ? e.task_name : '',
      e.windows_user,
      JSON.stringify(rest),
    ],
  };
}

/** An engine performance event as its `perf_events` row and the key of its `perf_hourly` row. */
export interface PerfRow {
  /** app_id, app_name, object_id, object_type, method, user_full: the hourly row's key (app_name rides along). */
  key: [string, string, string, string, string, string];
  processTime: number | null;
  /** The row after `time_ns` and `server_id`. */
  cells: Cell[];
}

/** The `perf_events` row of a `qseow-qix-perf` event. */
export function perfRow(e: QixPerfLog): PerfRow {
  const key: PerfRow['key'] = [e.app_id, e.app_name, e.object_id, e.object_type, e.method, e.user_full];
  return {
    key,
    processTime: e.process_time,
    cells: [
      ...key,
      e.event_activity_source,
      e.proxy_session_id,
      e.process_time,
      e.work_time,
      e.lock_time,
      e.validate_time,
      e.traverse_time,
      e.net_ram,
      e.peak_ram,
    ],
  };
}

/** The index in PERF_HISTOGRAM_BOUNDS_MS (or one past it) of the bucket holding `ms`. */
export function histogramBucket(ms: number): number {
  const index = PERF_HISTOGRAM_BOUNDS_MS.findIndex((bound) => ms <= bound);
  return index === -1 ? PERF_HISTOGRAM_BOUNDS_MS.length : index;
}

/** The log event's data as its queue carries it: `qseow-qix-perf` or another source. */
export function isPerf(e: PlatformLogEvent): e is QixPerfLog {
  return e.source === 'qseow-qix-perf';
}

const auditColumn = (name: string) => {
  const column = AUDIT_COLUMNS.find((c) => c.name === name);
  if (!column) throw new Error(`the audit data model has no column ${name}`);
  return column;
};
const AUDIT_APP = auditColumn('app_id');
const AUDIT_SHEET = auditColumn('sheet_id');
const AUDIT_OBJECT = auditColumn('object_id');
const AUDIT_USER = auditColumn('user_id');
const AUDIT_DURATION = auditColumn('duration');

const text = (value: Cell): string => (typeof value === 'string' ? value : '');

/** The `audit_events` row: the audit data model's column getters, so the store reads the event as every other audit destination. */
export function auditCells(q: AuditQueuedEvent): Cell[] {
  const duration = AUDIT_DURATION.get(q);
  return [
    q.id,
    auditTimeMs(q),
    q.event.type,
    text(AUDIT_APP.get(q)),
    text(AUDIT_SHEET.get(q)),
    text(AUDIT_OBJECT.get(q)),
    text(AUDIT_USER.get(q)),
    typeof duration === 'number' ? duration : null,
    JSON.stringify(q.event),
  ];
}
