/**
 * The platform data model of the tsdb (platform-formats.md §6.1–§6.10): ONE table per measurement
 * with its name, tags and fields with their line-protocol types. The mappers build their points
 * through these tables (`fieldsOf` takes a field's type from the table, and a name that is not in
 * the table does not compile), and docs/data-model.md is rendered from them
 * (`datamodel-docs.ts`), so a name or type changed here changes the points and the page together.
 * The audit measurement has its own table (shared/audit/datamodel.ts).
 *
 * §6.5–§6.8 are built by the edge itself (edge-agent/sources/udp/counters.ts) and §6.9/§6.10 by the
 * uptime monitor and the error tracker; their tables are checked against those producers' points by
 * test/shared/destinations/tsdb/datamodel.test.ts.
 */
import { bool, type FieldValue, float, int, str } from './line-protocol.js';

/** Line-protocol field types (§6.0): `int` written with `i`, `float` always without, even when whole. */
export type FieldType = 'int' | 'float' | 'string' | 'bool';

export interface FieldDef {
  readonly type: FieldType;
  /** What it holds and when it is written (for the docs). */
  readonly doc: string;
}

export interface MeasurementModel<
  N extends string = string,
  T extends string = string,
  F extends Record<string, FieldDef> = Record<string, FieldDef>,
> {
  /** The measurement names: fixed, or the defaults of `nameKeys` (one model may describe several measurements of one layout). */
  readonly names: readonly [N, ...string[]];
  /** The config key(s) that name the measurement, when it is configurable (one per name). */
  readonly nameKeys?: readonly string[];
  /** The section of platform-formats.md. */
  readonly section: string;
  /** When a point is written. */
  readonly written: string;
  /** Built-in tags in line order: name → what it holds and when it is written. */
  readonly tags: Readonly<Record<T, string>>;
  /** Tags the config adds (names chosen by the operator), or undefined when none. */
  readonly configuredTags?: string;
  /** Fields in line order. */
  readonly fields: Readonly<F>;
}

/** Declares a measurement; `const` keeps the names and types literal so the mappers are checked against them. */
export function defineMeasurement<
  const N extends string,
  const T extends string,
  const F extends Record<string, FieldDef>,
>(model: MeasurementModel<N, T, F>): MeasurementModel<N, T, F> {
  return model;
}

type JsValue<T extends FieldType> = T extends 'int'
  ? number | bigint
  : T extends 'float'
    ? number
    : T extends 'string'
      ? string
      : boolean;

/** The values of a point's fields by name; `null`/`undefined` = not written. */
export type FieldValues<F extends Record<string, FieldDef>> = { [K in keyof F]?: JsValue<F[K]['type']> | null };

/** A field's line-protocol value with the table's type; a JavaScript value of the wrong kind is refused. */
function typed(measurement: string, name: string, type: FieldType, value: unknown): FieldValue {
  const wrong = (): never => {
    throw new TypeError(`${measurement}.${name}: ${typeof value} value for a ${type} field`);
  };
  switch (type) {
    case 'int':
      return typeof value === 'number' || typeof value === 'bigint' ? int(value) : wrong();
    case 'float':
      return typeof value === 'number' ? float(value) : wrong();
    case 'string':
      return typeof value === 'string' ? str(value) : wrong();
    case 'bool':
      return typeof value === 'boolean' ? bool(value) : wrong();
  }
}

/** The fields of a point, in table order, each with the type the table gives it. */
export function fieldsOf<F extends Record<string, FieldDef>>(
  model: MeasurementModel<string, string, F>,
  values: FieldValues<F>,
): Record<string, FieldValue> {
  const out = new Map<string, FieldValue>();
  for (const [name, def] of Object.entries<FieldDef>(model.fields)) {
    const value: unknown = Object.hasOwn(values, name) ? values[name] : undefined;
    if (value === null || value === undefined) continue;
    out.set(name, typed(model.names.join('/'), name, def.type, value));
  }
  return Object.fromEntries(out);
}

/** The built-in tag names of a model, in table order. */
export function tagNames<T extends string>(model: MeasurementModel<string, T>): T[] {
  return Object.keys(model.tags).filter((name): name is T => Object.hasOwn(model.tags, name));
}

/** Tags of a point checked against the table's names (values as given; empty ones are omitted by `toLine`). */
export function tagsOf<T extends string>(
  _model: MeasurementModel<string, T>,
  values: Partial<Record<T, string | null | undefined>>,
): Record<string, string | null | undefined> {
  return { ...values };
}

// ---------------------------------------------------------------------------------------------
// §6.1 Health: one point per measurement per successful poll, in this order (the order of the
// point times the edge reserves: HEALTH_MEASUREMENTS).

const SERVER_TAGS = {
  host: '`servers[].host` before the first `:`',
  server_name: '`servers[].serverName`',
  server_description: '`servers[].serverDescription` (omitted when empty)',
} as const;
const SERVER_CONFIGURED_TAGS =
  '`serversToMonitor.servers[].serverTags` (names of `serversToMonitor.serverTagsDefinition`)';
const HEALTH_WRITTEN = 'one point per successful health poll of a server (`serversToMonitor.pollingInterval`)';

const health = <const N extends string, const F extends Record<string, FieldDef>>(name: N, fields: F) =>
  defineMeasurement({
    names: [name],
    section: '6.1',
    written: HEALTH_WRITTEN,
    tags: SERVER_TAGS,
    configuredTags: SERVER_CONFIGURED_TAGS,
    fields,
  });

export const SERVER_INFO = health('server_info', {
  version: { type: 'string', doc: 'engine version (`version` of the health API)' },
  started: { type: 'string', doc: 'engine start time as the health API reports it (`started`)' },
  uptime: {
    type: 'string',
    doc: 'time since `started` at the poll, `<d> days, <h>h <mm>m <ss>s`; `""` when `started` is invalid or in the future',
  },
});

export const MEM = health('mem', {
  committed: { type: 'float', doc: 'MB, as reported' },
  allocated: { type: 'float', doc: 'MB, as reported' },
  free: { type: 'float', doc: 'MB, as reported' },
});

const docList = (what: string, flag: string): FieldDef => ({
  type: 'string',
  doc: `ids of the ${what} apps joined by \`,\` (\`""\` for none); only with \`tsdbConfig.includeFields.${flag}\``,
});
const docNames = (what: string, flag: string): FieldDef => ({
  type: 'string',
  doc: `names of the ${what} apps from the app list (an unknown id stays the id), sorted, joined by \`,\`; only with \`tsdbConfig.includeFields.${flag}\` and app names extracted (\`appNames.enableAppNameExtract\`)`,
});
const sessionDocNames = (what: string, flag: string): FieldDef => ({
  type: 'string',
  doc: `ids of the ${what} session apps (ids starting with \`SessionApp\`), sorted, joined by \`,\`; only with \`tsdbConfig.includeFields.${flag}\` and app names extracted`,
});

export const APPS = health('apps', {
  active_docs_count: { type: 'int', doc: 'number of active apps' },
  loaded_docs_count: { type: 'int', doc: 'number of apps opened in a session' },
  in_memory_docs_count: { type: 'int', doc: 'number of apps in memory' },
  calls: { type: 'int', doc: 'engine calls (`apps.calls`)' },
  selections: { type: 'int', doc: 'engine selections (`apps.selections`)' },
  active_docs: docList('active', 'activeDocs'),
  active_docs_names: docNames('active', 'activeDocs'),
  active_session_docs_names: sessionDocNames('active', 'activeDocs'),
  loaded_docs: docList('loaded', 'loadedDocs'),
  loaded_docs_names: docNames('loaded', 'loadedDocs'),
  loaded_session_docs_names: sessionDocNames('loaded', 'loadedDocs'),
  in_memory_docs: docList('in-memory', 'inMemoryDocs'),
  in_memory_docs_names: docNames('in-memory', 'inMemoryDocs'),
  in_memory_session_docs_names: sessionDocNames('in-memory', 'inMemoryDocs'),
});

export const CPU = health('cpu', { total: { type: 'float', doc: 'CPU use in percent (`cpu.total`)' } });

export const SESSION = health('session', {
  active: { type: 'int', doc: 'active engine sessions' },
  total: { type: 'int', doc: 'engine sessions' },
});

export const USERS = health('users', {
  active: { type: 'int', doc: 'active users' },
  total: { type: 'int', doc: 'users' },
});

export const CACHE = health('cache', {
  hits: { type: 'int', doc: 'cache hits' },
  lookups: { type: 'int', doc: 'cache lookups' },
  added: { type: 'int', doc: 'entries added' },
  replaced: { type: 'int', doc: 'entries replaced' },
  bytes_added: { type: 'int', doc: 'bytes added' },
});

export const SATURATED = health('saturated', {
  saturated: { type: 'bool', doc: 'whether the engine reports saturation' },
});

/** §6.1's measurements in point order: a health sample's point `i` is `HEALTH_MEASUREMENTS[i]`. */
export const HEALTH_MEASUREMENTS = [SERVER_INFO, MEM, APPS, CPU, SESSION, USERS, CACHE, SATURATED] as const;

// ---------------------------------------------------------------------------------------------
// §6.2 Sessions: per server × virtual proxy, the summary first, then one details point per session.

const SESSION_TAGS = {
  ...SERVER_TAGS,
  user_session_virtual_proxy: 'the virtual proxy as configured (`/`, `/hdr`)',
  user_session_host: '`servers[].userSessions.host`, port included',
} as const;
const SESSIONS_WRITTEN = 'per successful session poll of a server and virtual proxy (`userSessions.pollingInterval`)';

export const USER_SESSION_SUMMARY = defineMeasurement({
  names: ['user_session_summary'],
  section: '6.2',
  written: `one point ${SESSIONS_WRITTEN}`,
  tags: SESSION_TAGS,
  configuredTags: SERVER_CONFIGURED_TAGS,
  fields: {
    session_count: { type: 'int', doc: 'proxy sessions after user exclusion (`userSessions.excludeUser`)' },
    session_user_id_list: {
      type: 'string',
      doc: 'distinct `DIR\\id` of those sessions, first-seen order, joined by `,` (`""` for none)',
    },
  },
});

export const USER_SESSION_DETAILS = defineMeasurement({
  names: ['user_session_details'],
  section: '6.2',
  written: `one point per session after user exclusion, ${SESSIONS_WRITTEN}`,
  tags: {
    ...SESSION_TAGS,
    user_session_id: 'the session id',
    user_session_user_directory: 'the user directory',
    user_session_user_id: 'the user id',
  },
  configuredTags: SERVER_CONFIGURED_TAGS,
  fields: {
    session_id: { type: 'string', doc: 'the session id' },
    user_directory: { type: 'string', doc: 'the user directory' },
    user_id: { type: 'string', doc: 'the user id' },
  },
});

// ---------------------------------------------------------------------------------------------
// §6.3 / §6.4 The platform's UDP events.

export const USER_EVENTS = defineMeasurement({
  names: ['user_events'],
  section: '6.3',
  written: 'one point per user-activity event (`userEvents.sendToTsdb.enable`)',
  tags: {
    host: "the proxy's host name",
    event_action: 'the command (`Start session`, `Open connection`, …)',
    userFull: '`DIR\\id`',
    userDirectory: 'user directory',
    userId: 'user id',
    origin: 'origin (omitted when empty)',
    appId: 'app id, when the event names one',
    appName: 'app name from the app list, when the event names an app',
    uaBrowserName: 'browser, when the event has a user agent',
    uaBrowserMajorVersion: 'browser major version, when the event has a user agent',
    uaOsName: 'operating system, when the event has a user agent',
    uaOsVersion: 'operating system version, when the event has a user agent',
  },
  configuredTags: '`userEvents.tags[]`',
  fields: {
    userFull_field: { type: 'string', doc: '`DIR\\id` (always; may be `""`)' },
    userId_field: { type: 'string', doc: 'user id (always; may be `""`)' },
    appId_field: { type: 'string', doc: 'app id, when present' },
    appName_field: { type: 'string', doc: 'app name, when present' },
  },
});

export const LOG_EVENT = defineMeasurement({
  names: ['log_event'],
  section: '6.4',
  written:
    'one point per log event (`logEvents.sendToTsdb.enable`); tags only when non-empty, fields only when not null',
  tags: {
    host: 'host name of the sending server',
    level: 'log level',
    source: '`qseow-engine`, `qseow-proxy`, `qseow-repository`, `qseow-scheduler`, `qseow-qix-perf`',
    log_row: 'row number in the log file',
    subsystem: 'logging subsystem',
    user_full: '`DIR\\id` (all sources)',
    user_directory: 'user directory (all sources)',
    user_id: 'user id (all sources)',
    windows_user: 'Windows user (engine, proxy, repository, scheduler)',
    app_id: 'app id (engine, engine performance)',
    app_name: 'app name (engine performance)',
    engine_exe_version: 'engine version (engine)',
    result_code: 'result code (proxy, repository)',
    task_id: 'task id (scheduler)',
    task_name: 'task name (scheduler)',
    method: 'engine method (engine performance)',
    object_type: 'object type (engine performance)',
    proxy_session_id: 'proxy session id (engine performance)',
    session_id: 'engine session id (engine performance)',
    event_activity_source: '`user` or `non-user` (engine performance, always)',
    object_id: 'object id (engine performance)',
  },
  configuredTags:
    'category tags (`logEvents.categorise`, name = value, after the five tags above), then `logEvents.tags[]`',
  fields: {
    message: { type: 'string', doc: 'message (engine, proxy, repository, scheduler)' },
    exception_message: { type: 'string', doc: 'exception (proxy, repository, scheduler)' },
    command: { type: 'string', doc: 'command (proxy, repository)' },
    result_code_field: { type: 'string', doc: 'result code (proxy, repository)' },
    origin: { type: 'string', doc: 'origin (proxy, repository)' },
    context: { type: 'string', doc: 'context (proxy, repository)' },
    session_id_field: { type: 'string', doc: 'session id (engine)' },
    app_name_field: { type: 'string', doc: 'app name (scheduler)' },
    app_id_field: { type: 'string', doc: 'app id (scheduler, engine performance)' },
    execution_id: { type: 'string', doc: 'execution id (scheduler)' },
    process_time: { type: 'float', doc: 'ms (engine performance)' },
    work_time: { type: 'float', doc: 'ms (engine performance)' },
    lock_time: { type: 'float', doc: 'ms (engine performance)' },
    validate_time: { type: 'float', doc: 'ms (engine performance)' },
    traverse_time: { type: 'float', doc: 'ms (engine performance)' },
    handle: { type: 'int', doc: 'object handle (engine performance)' },
    net_ram: { type: 'int', doc: 'bytes (engine performance)' },
    peak_ram: { type: 'int', doc: 'bytes (engine performance)' },
    raw_event: {
      type: 'string',
      doc: 'the parsed event as compact JSON, with `category`, without configured tags (all sources)',
    },
  },
});

// ---------------------------------------------------------------------------------------------
// §6.5–§6.8 Counts and queue metrics (built at the edge, kind `points`).

export const EVENT_COUNT = defineMeasurement({
  names: ['event_count'],
  nameKeys: ['platformEvents.eventCount.tsdb.measurementName'],
  section: '6.5',
  written:
    'every `platformEvents.tsdb.writeFrequency` ms, one point per distinct tag set counted in the window (`platformEvents.eventCount.enable`)',
  tags: {
    event_type: '`user` or `log`',
    source: 'event source; `unknown` for unrecognised or malformed datagrams',
    host: 'sending host; `unknown` when empty',
    subsystem: 'subsystem (user events: the origin); `unknown` when empty',
  },
  configuredTags: '`platformEvents.eventCount.tsdb.tags[]`',
  fields: { counter: { type: 'int', doc: 'events in the window' } },
});

export const REJECTED_EVENT_COUNT = defineMeasurement({
  names: ['rejected_event_count'],
  nameKeys: ['platformEvents.rejectedEventCount.tsdb.measurementName'],
  section: '6.6',
  written:
    'every `platformEvents.tsdb.writeFrequency` ms, one point per distinct tag set rejected in the window (`platformEvents.rejectedEventCount.enable`)',
  tags: {
    reason: '`perf_filter` (engine-performance filter) or `category_drop`',
    source: 'event source',
    app_id: 'app id (`perf_filter`)',
    app_name: 'app name (`perf_filter`, omitted when unknown)',
    app_name_set: '`true`/`false`: whether the app name was known (`perf_filter`)',
    method: 'engine method (`perf_filter`)',
    object_type: 'object type (`perf_filter`)',
    host: 'sending host (`category_drop`)',
    subsystem: 'subsystem (`category_drop`)',
    level: 'log level (`category_drop`)',
  },
  configuredTags: '`logEvents.enginePerformanceMonitor.trackRejectedEvents.tags[]` (`perf_filter` points only)',
  fields: {
    counter: { type: 'int', doc: 'events rejected in the window' },
    process_time: { type: 'float', doc: 'sum of their `process_time`, ms (`perf_filter`)' },
  },
});

export const QUEUE_METRICS = defineMeasurement({
  names: ['user_events_queue', 'log_events_queue'],
  nameKeys: [
    'userEvents.udpServerConfig.queueMetrics.tsdb.measurementName',
    'logEvents.udpServerConfig.queueMetrics.tsdb.measurementName',
  ],
  section: '6.8',
  written:
    'every `…udpServerConfig.queueMetrics.tsdb.writeFrequency` ms per running listener (`…queueMetrics.tsdb.enable`)',
  tags: {
    queue_type: '`user_events` or `log_events`',
    host: "Svc's own host name",
  },
  configuredTags: '`…udpServerConfig.queueMetrics.tsdb.tags[]`',
  fields: {
    queue_size: { type: 'int', doc: 'datagrams waiting' },
    queue_max_size: { type: 'int', doc: '`messageQueue.maxSize`' },
    queue_utilization_pct: { type: 'float', doc: 'waiting / maxSize × 100' },
    queue_running: { type: 'int', doc: 'handlers running' },
    messages_received: { type: 'int', doc: 'since the last successful write' },
    messages_queued: { type: 'int', doc: 'since the last successful write' },
    messages_processed: { type: 'int', doc: 'since the last successful write' },
    messages_failed: { type: 'int', doc: 'since the last successful write' },
    messages_dropped_total: { type: 'int', doc: 'sum of the drop counters, since the last successful write' },
    messages_dropped_rate_limit: { type: 'int', doc: 'since the last successful write' },
    messages_dropped_queue_full: { type: 'int', doc: 'since the last successful write' },
    messages_dropped_size: { type: 'int', doc: 'since the last successful write' },
    messages_dropped_source: { type: 'int', doc: 'since the last successful write' },
    messages_dropped_kernel: {
      type: 'int',
      doc: 'kernel drops since the last successful write; omitted where the OS has no counter',
    },
    processing_time_avg_ms: { type: 'float', doc: 'over the last 1,000 handler durations' },
    processing_time_p95_ms: { type: 'float', doc: 'over the last 1,000 handler durations' },
    processing_time_max_ms: { type: 'float', doc: 'over the last 1,000 handler durations' },
    rate_limit_current: { type: 'float', doc: 'accepted per minute in the current rate-limit window; 0 when off' },
    backpressure_active: { type: 'int', doc: '1 while backpressure is active, else 0' },
  },
});

// ---------------------------------------------------------------------------------------------
// §6.9 / §6.10 Svc's own data.

export const SVC_MEMORY_USAGE = defineMeasurement({
  names: ['svc_memory_usage'],
  section: '6.9',
  written: 'on each uptime-monitor tick (`uptimeMonitor.storeInTsdb.svcMemoryUsage`)',
  tags: {
    svc_instance: '`uptimeMonitor.storeInTsdb.instanceTag`',
    version: 'Svc version',
  },
  fields: {
    heap_used: { type: 'float', doc: 'MB, 2 decimals' },
    heap_total: { type: 'float', doc: 'MB, 2 decimals' },
    external: { type: 'float', doc: 'MB, 2 decimals' },
    process_memory: { type: 'float', doc: 'resident set size, MB, 2 decimals' },
  },
});

export const SVC_ERRORS = defineMeasurement({
  names: ['svc_errors'],
  nameKeys: ['errorTracking.tsdb.measurementName'],
  section: '6.10',
  written:
    'one point per tracked error, at the time it happened (`errorTracking.enable` and `errorTracking.tsdb.enable`)',
  tags: {
    error_type:
      '`HEALTH_API`, `PROXY_API`, `TSDB_V1_WRITE`, `MQTT_PUBLISH`, `MONSAAS_POST`, … (platform-formats.md §10.9)',
    server_name: 'the server concerned; `_no_server_context` when none',
    host: 'the host concerned, when known',
    virtual_proxy: 'the virtual proxy, when known',
    destination_host: "the destination's host, when known",
    module: 'the producing module (`HEALTH_METRICS`, `USER_EVENTS_MQTT`, …), when known',
  },
  fields: {
    error_count: { type: 'int', doc: 'always 1' },
    error_category: {
      type: 'string',
      doc: '`timeout`, `connection_refused`, `auth_error`, `http_5xx`, … (platform-formats.md §10.9)',
    },
    error_code: { type: 'string', doc: 'error code, when known' },
    http_status: { type: 'int', doc: 'HTTP status, when known' },
    request_url: { type: 'string', doc: 'scheme, host and path (no query), when known' },
    request_timeout_ms: { type: 'int', doc: 'request timeout, when known' },
    remote_address: { type: 'string', doc: 'remote address, when known' },
    remote_port: { type: 'int', doc: 'remote port, when known' },
    syscall: { type: 'string', doc: 'failing system call, when known' },
  },
});

/** Every platform measurement of §6.1–§6.10, in the order of the spec (and of docs/data-model.md). */
export const PLATFORM_MEASUREMENTS: readonly MeasurementModel[] = [
  ...HEALTH_MEASUREMENTS,
  USER_SESSION_SUMMARY,
  USER_SESSION_DETAILS,
  USER_EVENTS,
  LOG_EVENT,
  EVENT_COUNT,
  REJECTED_EVENT_COUNT,
  QUEUE_METRICS,
  SVC_MEMORY_USAGE,
  SVC_ERRORS,
];
